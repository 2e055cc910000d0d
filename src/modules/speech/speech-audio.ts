import { readFile, writeFile } from 'node:fs/promises';
import { decodeFailure, decodeLimitMs, encodeLimitMs, pinAudio } from '../../infra/ffmpeg/audio-decode.js';
import { feedTo, FfmpegFailed, pinnedInput, runFfmpeg } from '../../infra/ffmpeg/ffmpeg.js';
import { MediaRefused } from '../../infra/ffmpeg/media-format.js';
import type { SpeechAudio, SpeechFormat } from '../../vendors/contracts/speech-vendor.js';

/** The sample rate of every answer (OpenAI's: `pcm` is 24 kHz 16-bit mono). */
export const SPEECH_RATE = 24_000;

/** The longest speech kept, in seconds (4,096 characters read slowly are under 10 minutes). */
const MAX_SPEECH_S = 1200;

/** Audio in the asked format, ready to store: its bytes and its length. */
export interface FinishedSpeech {
  bytes: Buffer;
  format: SpeechFormat;
  durationS: number;
}

/** A vendor's or the sandbox's audio that could not be used: the task fails with these words. */
export class SpeechUnusable extends Error {}

/** How each format is encoded from 24 kHz mono PCM (OpenAI's: Opus in Ogg, AAC in ADTS, 16-bit WAV). */
const ENCODERS: Record<Exclude<SpeechFormat, 'pcm' | 'wav'>, string[]> = {
  mp3: ['-c:a', 'libmp3lame', '-b:a', '64k', '-f', 'mp3'],
  opus: ['-c:a', 'libopus', '-b:a', '32k', '-f', 'ogg'],
  aac: ['-c:a', 'aac', '-b:a', '64k', '-f', 'adts'],
  flac: ['-c:a', 'flac', '-f', 'flac'],
};

/**
 * The audio in the asked format: decoded to 24 kHz mono 16-bit PCM (a vendor's encoded bytes only through a
 * pinned input: sniffed, one demuxer, a work file; raw PCM read as what it is), then encoded into `format`
 * from PCM piped in. Encoded audio a vendor made in the asked format (OpenAI's MP3 asked as MP3, ElevenLabs'
 * MP3) is kept as it came once it has decoded whole: no second encode at the gateway's bitrate, and the
 * vendor's quality. `file` names a work file of the step.
 */
export async function finishSpeech(audio: SpeechAudio, format: SpeechFormat, file: (prefix: string, ext: string) => string): Promise<FinishedSpeech> {
  const pcm = await toPcm(audio, file);
  if (pcm.length < 2) throw new SpeechUnusable('the audio made holds no sound');
  const durationS = Math.round((pcm.length / 2 / SPEECH_RATE) * 1000) / 1000;
  if (keptAsMade(audio, format, durationS)) return { bytes: audio.bytes, format, durationS };
  if (format === 'pcm') return { bytes: pcm, format, durationS };
  if (format === 'wav') return { bytes: Buffer.concat([wavHeader(pcm.length), pcm]), format, durationS };
  // FLAC's header is written last (its length and checksum): to a file, which ffmpeg can seek back in, not a pipe
  const out = format === 'flac' ? file('speech-out', 'flac') : undefined;
  const bytes = await runFfmpeg(['-loglevel', 'error', '-f', 's16le', '-ar', String(SPEECH_RATE), '-ac', '1', '-i', 'pipe:0', ...ENCODERS[format], out ? `file:${out}` : 'pipe:1'], {
    limitMs: encodeLimitMs(durationS),
    feed: (stdin) => feedTo(stdin, pcm),
    collectStdout: !out,
  });
  return { bytes: out ? await readFile(out) : bytes, format, durationS };
}

/**
 * Whether the vendor's own bytes are the answer: an encoded format (MP3, Opus, AAC, FLAC: WAV and PCM are
 * written from the decoded samples, canonical 24 kHz 16-bit, at no encoder's cost) as asked, and shorter than
 * the longest kept (the decode stops there; the bytes would not).
 */
export function keptAsMade(audio: Pick<SpeechAudio, 'format'>, format: SpeechFormat, durationS: number): boolean {
  return audio.format === format && format !== 'pcm' && format !== 'wav' && durationS < MAX_SPEECH_S;
}

/** A canonical 44-byte WAV header for this many bytes of 24 kHz mono 16-bit PCM (its sizes exact: a pipe's would be unknown). */
function wavHeader(dataBytes: number): Buffer {
  const h = Buffer.alloc(44);
  h.write('RIFF', 0, 'ascii');
  h.writeUInt32LE(36 + dataBytes, 4);
  h.write('WAVEfmt ', 8, 'ascii');
  h.writeUInt32LE(16, 16);
  h.writeUInt16LE(1, 20);
  h.writeUInt16LE(1, 22);
  h.writeUInt32LE(SPEECH_RATE, 24);
  h.writeUInt32LE(SPEECH_RATE * 2, 28);
  h.writeUInt16LE(2, 32);
  h.writeUInt16LE(16, 34);
  h.write('data', 36, 'ascii');
  h.writeUInt32LE(dataBytes, 40);
  return h;
}

/** 24 kHz mono s16le of any audio: raw PCM at 24 kHz as it is, resampled otherwise; encoded audio decoded pinned. */
async function toPcm(audio: SpeechAudio, file: (prefix: string, ext: string) => string): Promise<Buffer> {
  if (audio.format === 'pcm') {
    const rate = audio.sampleRate ?? SPEECH_RATE;
    const even = audio.bytes.length % 2 === 0 ? audio.bytes : audio.bytes.subarray(0, audio.bytes.length - 1);
    if (rate === SPEECH_RATE) return even;
    return runFfmpeg(['-loglevel', 'error', '-f', 's16le', '-ar', String(rate), '-ac', '1', '-i', 'pipe:0', '-f', 's16le', '-ar', String(SPEECH_RATE), '-ac', '1', 'pipe:1'], {
      limitMs: decodeLimitMs(even.length / 2 / rate),
      feed: (stdin) => feedTo(stdin, even),
      collectStdout: true,
    });
  }
  const path = file('speech-in', audio.format);
  await writeFile(path, audio.bytes);
  try {
    const pinned = await pinAudio(path);
    // -xerror: a frame that does not decode fails the decode (ffmpeg's MP3 decoder would skip garbage between
    // good frames and exit 0), so what is kept as made is audio that decoded whole. Not for WAV (PCM or float
    // only: no frame of it can fail), whose last packet ffmpeg calls corrupt when shorter than the others, as in
    // every WAV OpenAI streams (its sizes 0xFFFFFFFF, "unknown": the samples run to the end)
    const strict = pinned.format === 'wav' ? [] : ['-xerror'];
    return await runFfmpeg(['-loglevel', 'error', ...strict, ...pinnedInput(pinned.demuxer, path), '-map', '0:a:0', '-t', String(MAX_SPEECH_S), '-f', 's16le', '-ar', String(SPEECH_RATE), '-ac', '1', 'pipe:1'], {
      limitMs: decodeLimitMs(MAX_SPEECH_S),
      collectStdout: true,
    });
  } catch (err) {
    if (err instanceof MediaRefused) throw new SpeechUnusable(`the audio made is not audio the gateway reads: ${err.message}`);
    if (err instanceof FfmpegFailed) throw new SpeechUnusable(`the audio made ${decodeFailure(err) ?? 'does not decode'}`);
    throw err;
  }
}
