import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdtemp, readFile, rename, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { ffmpegBinary } from '../../../../src/infra/ffmpeg/ffmpeg-binary.js';

const run = promisify(execFile);

/**
 * Lyria 3's models on the Gemini API (its music generation guide and model cards): the clip model makes 30 s
 * as MP3 only; the pro model full songs, "a couple of minutes (controllable via prompt)", up to about three, as
 * MP3 or, asked by `responseMimeType`, WAV. Both take text and up to 10 images, answer 48 kHz stereo audio and
 * the lyrics and structure as text.
 */
export const LYRIA: Readonly<Record<string, { mimeTypes: string[]; fixedS: number | null; maxImages: number }>> = {
  'lyria-3-clip-preview': { mimeTypes: ['audio/mpeg'], fixedS: 30, maxImages: 10 },
  'lyria-3-pro-preview': { mimeTypes: ['audio/mpeg', 'audio/wav'], fixedS: null, maxImages: 10 },
};

/** The pro model's length when the prompt asks none ("a couple of minutes"), and its bounds. */
const PRO_DEFAULT_S = 120;
const PRO_MIN_S = 30;
const PRO_MAX_S = 184;

/** How long a pro song lasts: a length the prompt asks in words ("a 90-second song", "2 minutes"), within its bounds, else about two minutes. */
export function proSeconds(prompt: string): number {
  const minutes = /\b(\d+(?:\.\d+)?)[\s-]*(?:minutes?|min)\b/i.exec(prompt);
  const seconds = /\b(\d+)[\s-]*(?:seconds?|sec)\b/i.exec(prompt);
  const asked = seconds ? Number(seconds[1]) : minutes ? Number(minutes[1]) * 60 : PRO_DEFAULT_S;
  return Math.min(PRO_MAX_S, Math.max(PRO_MIN_S, Math.round(asked)));
}

/**
 * The text Lyria answers beside the audio: the lyrics it sang with its section tags — those after the prompt's
 * "Lyrics:" as given, else its own written from the prompt —, or for an instrumental ("instrumental", "no
 * vocals") only the song's structure.
 */
export function lyriaText(prompt: string, seconds: number): string {
  const given = /(?:^|\n)\s*Lyrics:\s*\n?([\s\S]+)$/i.exec(prompt);
  if (given) return given[1].trim();
  if (/\binstrumental\b|\bno vocals\b/i.test(prompt)) return `[0:00 - 0:${String(Math.min(10, seconds)).padStart(2, '0')}] Intro\n[0:10 - ${clock(seconds)}] Instrumental: ${prompt.split('\n')[0].slice(0, 80)}`;
  const words = prompt.replace(/[^\p{L}\p{N}\s]/gu, ' ').split(/\s+/).filter(Boolean).slice(0, 8);
  const line = words.join(' ').toLowerCase() || 'a song of nothing at all';
  return `[Verse 1]\nSinging of ${line}\nUnder a sky that hums along\n\n[Chorus]\nOh, ${words.slice(0, 3).join(' ').toLowerCase() || 'la la la'}\nThis is where we belong`;
}

function clock(seconds: number): string {
  return `${Math.floor(seconds / 60)}:${String(Math.round(seconds % 60)).padStart(2, '0')}`;
}

const made = new Map<string, Promise<Buffer>>();

/**
 * `seconds` of music-like 48 kHz stereo (two voices a fifth apart, one a side, swelling twice a second, their
 * root from `words`) as Lyria answers it: MP3 at 128 kbit/s, or 16-bit WAV. Made by ffmpeg without blocking (the
 * fake and the client it answers share the process), once per run for each length, root and format (kept in
 * TEST_CACHE_DIR).
 */
export function songLike(format: 'mp3' | 'wav', seconds: number, words: string): Promise<Buffer> {
  const root = 180 + (createHash('sha256').update(words).digest()[0] % 120);
  const codec = format === 'mp3' ? ['-c:a', 'libmp3lame', '-b:a', '128k', '-f', 'mp3'] : ['-c:a', 'pcm_s16le', '-f', 'wav'];
  const voice = (f: number) => ['-f', 'lavfi', '-i', `sine=f=${f}:r=48000:d=${seconds}`];
  const args = [...voice(root), ...voice(root * 1.5), '-filter_complex', '[0][1]amerge=inputs=2,tremolo=f=2:d=0.4', '-ac', '2', '-ar', '48000', ...codec];
  const key = createHash('sha256').update(args.join('\0')).digest('hex').slice(0, 32);
  let bytes = made.get(key);
  if (!bytes) {
    bytes = render(key, format, args);
    made.set(key, bytes);
    bytes.catch(() => made.delete(key));
  }
  return bytes;
}

async function render(key: string, ext: string, args: string[]): Promise<Buffer> {
  const cacheDir = process.env.TEST_CACHE_DIR;
  const cached = cacheDir && path.join(cacheDir, `lyria-${key}.${ext}`);
  if (cached) {
    const bytes = await readFile(cached).catch(() => undefined);
    if (bytes) return bytes;
  }
  const dir = await mkdtemp(path.join(tmpdir(), 'mgw-lyria-'));
  const file = path.join(dir, `out.${ext}`);
  try {
    await run(ffmpegBinary().path, ['-hide_banner', '-loglevel', 'error', ...args, '-y', file]);
    const bytes = await readFile(file);
    // another worker may make the same file: it writes the same bytes
    if (cached) await rename(file, cached);
    return bytes;
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
