import { execFileSync } from 'node:child_process';
import { ffmpegBinary } from '../../../src/infra/ffmpeg/ffmpeg-binary.js';
import { renderedOnce, withFile } from '../media.js';

/**
 * Speech as the speech fakes answer it: real audio, decodable, about as long as the text would take spoken
 * (some 14 characters a second at speed 1, at least half a second), a voiced tone whose loudness rises and falls
 * like syllables. Made by ffmpeg once per run for each length and encoding (renderedOnce), in tenths of a second.
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

/** `seconds` of speech-like mono audio at `sampleRate`, encoded as asked (`pcm`: raw 16-bit little-endian). */
export function speechLike(encoding: SpeechEncoding, seconds: number, sampleRate = 24_000, bitrateK?: number): Buffer {
  const { ext, args } = OUTPUT[encoding];
  // a 150 Hz voice with two overtones, its loudness in 4 syllables a second
  const voice = `(0.5*sin(2*PI*150*t)+0.25*sin(2*PI*300*t)+0.12*sin(2*PI*450*t))*(0.55+0.45*sin(2*PI*4*t))`;
  return renderedOnce(ext, ['-f', 'lavfi', '-i', `aevalsrc=${voice}:s=${sampleRate}:d=${seconds.toFixed(1)}:c=mono`, '-ac', '1', '-ar', String(sampleRate), ...args(bitrateK)]);
}

/**
 * How long audio is, decoded by ffmpeg sample by sample (not from its header): `pcm` is raw 16-bit mono at
 * `sampleRate`; any other format is read from its own bytes. Throws when ffmpeg cannot decode it.
 */
export function decodedSeconds(bytes: Buffer, format: string, sampleRate = 24_000): Promise<number> {
  const input = format === 'pcm' ? ['-f', 's16le', '-ar', String(sampleRate), '-ac', '1'] : [];
  return withFile(bytes, format, (file) => {
    const raw = execFileSync(ffmpegBinary().path, ['-hide_banner', '-loglevel', 'error', ...input, '-i', file, '-f', 's16le', '-ac', '1', '-ar', '8000', 'pipe:1'], { maxBuffer: 1 << 28 });
    return raw.length / 2 / 8000;
  });
}
