import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdtemp, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { ffmpegBinary } from '../../../src/infra/ffmpeg/ffmpeg-binary.js';

const run = promisify(execFile);

/**
 * Speech as the speech fakes answer it: real audio, decodable, about as long as the text would take spoken
 * (some 14 characters a second at speed 1, at least half a second), in tenths of a second.
 */
export function spokenSeconds(text: string, speed = 1): number {
  return Math.max(5, Math.round((text.length / 14 / speed) * 10)) / 10;
}

/** An encoding the fakes answer in: ffmpeg's output arguments and the file's extension. */
export type SpeechEncoding = 'mp3' | 'opus' | 'aac' | 'flac' | 'wav' | 'pcm' | 'ulaw' | 'alaw';

const OUTPUT: Record<SpeechEncoding, { ext: string; args: (bitrateK?: number) => string[] }> = {
  mp3: { ext: 'mp3', args: (k = 64) => ['-c:a', 'libmp3lame', '-b:a', `${k}k`, '-f', 'mp3'] },
  opus: { ext: 'opus', args: (k = 32) => ['-c:a', 'libopus', '-b:a', `${k}k`, '-f', 'ogg'] },
  aac: { ext: 'aac', args: (k = 64) => ['-c:a', 'aac', '-b:a', `${k}k`, '-f', 'adts'] },
  flac: { ext: 'flac', args: () => ['-c:a', 'flac', '-f', 'flac'] },
  wav: { ext: 'wav', args: () => ['-c:a', 'pcm_s16le', '-f', 'wav'] },
  pcm: { ext: 'pcm', args: () => ['-c:a', 'pcm_s16le', '-f', 's16le'] },
  ulaw: { ext: 'ulaw', args: () => ['-c:a', 'pcm_mulaw', '-f', 'mulaw'] },
  alaw: { ext: 'alaw', args: () => ['-c:a', 'pcm_alaw', '-f', 'alaw'] },
};

/** What this process has made, by its arguments (a fake answers the same text many times). */
const made = new Map<string, Promise<Buffer>>();

/**
 * `seconds` of speech-like mono audio at `sampleRate` (a 150 Hz voice with two overtones, its loudness rising and
 * falling four times a second like syllables), encoded as asked (`pcm`: raw 16-bit little-endian). Made by ffmpeg
 * once per run for each length and encoding (kept in TEST_CACHE_DIR), and never blocking: the fakes and the
 * clients they answer share this process, and a blocked event loop would let a kept-alive connection be reused
 * just as its server's idle timer closes it.
 */
export function speechLike(encoding: SpeechEncoding, seconds: number, sampleRate = 24_000, bitrateK?: number): Promise<Buffer> {
  const { ext, args } = OUTPUT[encoding];
  const voice = '(0.5*sin(2*PI*150*t)+0.25*sin(2*PI*300*t)+0.12*sin(2*PI*450*t))*(0.55+0.45*sin(2*PI*4*t))';
  const ffmpegArgs = ['-f', 'lavfi', '-i', `aevalsrc=${voice}:s=${sampleRate}:d=${seconds.toFixed(1)}:c=mono`, '-ac', '1', '-ar', String(sampleRate), ...args(bitrateK)];
  const key = createHash('sha256').update(ffmpegArgs.join('\0')).digest('hex').slice(0, 32);
  let bytes = made.get(key);
  if (!bytes) {
    bytes = render(key, ext, ffmpegArgs);
    made.set(key, bytes);
    bytes.catch(() => made.delete(key));
  }
  return bytes;
}

async function render(key: string, ext: string, args: string[]): Promise<Buffer> {
  const cacheDir = process.env.TEST_CACHE_DIR;
  const cached = cacheDir && path.join(cacheDir, `speech-${key}.${ext}`);
  if (cached) {
    const bytes = await readFile(cached).catch(() => undefined);
    if (bytes) return bytes;
  }
  const dir = await mkdtemp(path.join(tmpdir(), 'mgw-speech-'));
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

/**
 * How long audio is, decoded by ffmpeg sample by sample (not from its header): `pcm` is raw 16-bit mono at
 * `sampleRate`; any other format is read from its own bytes. Rejects when ffmpeg cannot decode it.
 */
export async function decodedSeconds(bytes: Buffer, format: string, sampleRate = 24_000): Promise<number> {
  const input = format === 'pcm' ? ['-f', 's16le', '-ar', String(sampleRate), '-ac', '1'] : [];
  const dir = await mkdtemp(path.join(tmpdir(), 'mgw-speech-'));
  const file = path.join(dir, `in.${format}`);
  try {
    await writeFile(file, bytes);
    const { stdout } = await run(ffmpegBinary().path, ['-hide_banner', '-loglevel', 'error', ...input, '-i', file, '-f', 's16le', '-ac', '1', '-ar', '8000', 'pipe:1'], { encoding: 'buffer', maxBuffer: 1 << 28 });
    return stdout.length / 2 / 8000;
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/** Channel count and sample rate of an audio file, from ffmpeg's own report (without blocking, as above). */
export async function probedAudio(bytes: Buffer): Promise<{ channels: number; sampleRate: number }> {
  const dir = await mkdtemp(path.join(tmpdir(), 'mgw-speech-'));
  const file = path.join(dir, 'in.audio');
  try {
    await writeFile(file, bytes);
    // with no output ffmpeg exits 1 after its report
    const report = await run(ffmpegBinary().path, ['-hide_banner', '-i', file]).then(
      ({ stderr }) => stderr,
      (err: { stderr?: string }) => String(err.stderr ?? ''),
    );
    const audio = /Audio: [^\n]*?, (\d+) Hz, (mono|stereo)/.exec(report);
    if (!audio) throw new Error(`no audio stream in: ${report.slice(-300)}`);
    return { sampleRate: Number(audio[1]), channels: audio[2] === 'mono' ? 1 : 2 };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
