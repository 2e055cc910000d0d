import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import sharp from 'sharp';
import { ffmpegBinary, shippedFfmpeg } from '../../src/infra/ffmpeg/ffmpeg-binary.js';
import { pcm16Wav } from '../../src/modules/samples/wav.js';

/**
 * The ffmpeg that reads what the service made (probes, frames, decoded samples): the statically linked build
 * the @ffmpeg-installer package ships, when it runs here, else the service's own. It only reads files the
 * service or the tests wrote, never a caller's, so its age (2018) does not matter here, and it is a decoder
 * independent of the one the service runs. It starts in about 0.02 s of CPU; Debian's ffmpeg links 236 shared
 * libraries and spends 0.13-0.25 s in the dynamic linker before it reads a byte (measured with perf and
 * process accounting: a whole run started ffmpeg 664 times, 549 of them for under 0.5 s of CPU, and about
 * half of the starts were these reads).
 */
let reader: string | undefined;
export function readerFfmpeg(): string {
  if (reader === undefined) {
    const shipped = shippedFfmpeg();
    reader = shipped.version ? shipped.path : ffmpegBinary().path;
  }
  return reader;
}

/** A PCM WAV of a sine tone (no tool needed). */
export function wav(seconds: number, sampleRate = 8000): Buffer {
  const samples = Math.round(seconds * sampleRate);
  const data = Buffer.alloc(samples * 2);
  for (let i = 0; i < samples; i++) data.writeInt16LE(Math.round(8000 * Math.sin((2 * Math.PI * 440 * i) / sampleRate)), i * 2);
  return pcm16Wav(data, sampleRate);
}

export function solid(width: number, height: number, rgb: [number, number, number]): Promise<Buffer> {
  return sharp({ create: { width, height, channels: 3, background: { r: rgb[0], g: rgb[1], b: rgb[2] } } }).png().toBuffer();
}

/** Runs `fn` with a temporary file holding `bytes`. */
export async function withFile<T>(bytes: Buffer, ext: string, fn: (file: string) => Promise<T> | T): Promise<T> {
  const dir = mkdtempSync(path.join(tmpdir(), 'mgw-media-'));
  const file = path.join(dir, `f.${ext}`);
  writeFileSync(file, bytes);
  try {
    return await fn(file);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Duration, size and codec of an MP4, read by ffmpeg (readerFfmpeg). */
export function probeVideo(bytes: Buffer): Promise<{ durationS: number; width: number; height: number; codec: string }> {
  return withFile(bytes, 'mp4', (file) => probe(file));
}

/** The mean RGB colour of the first or last frame of a video. */
export function frameColour(video: Buffer, which: 'first' | 'last'): Promise<[number, number, number]> {
  return withFile(video, 'mp4', async (file) => {
    const seek = which === 'first' ? [] : ['-sseof', '-0.1'];
    const png = execFileSync(readerFfmpeg(), ['-hide_banner', '-loglevel', 'error', ...seek, '-i', file, '-frames:v', '1', '-f', 'image2pipe', '-c:v', 'png', 'pipe:1']);
    const { channels } = await sharp(png).stats();
    return [channels[0].mean, channels[1].mean, channels[2].mean].map(Math.round) as [number, number, number];
  });
}

/** A small real MP4 (as an upstream would produce), made with the shipped ffmpeg. */
const rendered = new Map<string, Buffer>();
/** A test clip of this size ("WxH") and length, 4 frames a second, rendered once per run (fakes of video vendors serve it). */
export function sizedMp4(size: string, seconds: number): Buffer {
  const key = `${size}/${seconds}`;
  if (!rendered.has(key)) rendered.set(key, testMp4(seconds, size, 4));
  return rendered.get(key)!;
}

export function testMp4(seconds = 1, size = '320x240', rate = 24): Buffer {
  return renderedOnce('mp4', ['-f', 'lavfi', '-i', `testsrc=size=${size}:rate=${rate}:duration=${seconds}`, '-c:v', 'libx264', '-preset', 'ultrafast', '-pix_fmt', 'yuv420p']);
}

/**
 * What ffmpeg makes from `args` (a test source, no input file), made once per test run: the fakes serve the
 * same clip to every file that asks for it. Kept in the run's directory (TEST_CACHE_DIR, made by global-setup),
 * named by the arguments; a worker that loses a race to make one writes the same bytes.
 */
export function renderedOnce(ext: string, args: string[]): Buffer {
  const cacheDir = process.env.TEST_CACHE_DIR;
  const cached = cacheDir && path.join(cacheDir, `${createHash('sha256').update(args.join('\0')).digest('hex').slice(0, 32)}.${ext}`);
  if (cached) {
    try {
      return readFileSync(cached);
    } catch {
      // not made yet
    }
  }
  const dir = mkdtempSync(path.join(tmpdir(), 'mgw-media-'));
  const file = path.join(dir, `out.${ext}`);
  try {
    execFileSync(ffmpegBinary().path, ['-hide_banner', '-loglevel', 'error', ...args, '-y', file]);
    const bytes = readFileSync(file);
    if (cached) renameSync(file, cached);
    return bytes;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Audio decoded by ffmpeg (readerFfmpeg: independently of the service's code) to mono float samples at 44.1 kHz. */
export function decodeMono(bytes: Buffer, ext = 'audio'): Promise<Float32Array> {
  return withFile(bytes, ext, (file) => {
    const raw = execFileSync(readerFfmpeg(), ['-hide_banner', '-loglevel', 'error', '-i', file, '-f', 'f32le', '-ac', '1', '-ar', '44100', 'pipe:1'], { maxBuffer: 1 << 30 });
    return new Float32Array(raw.buffer, raw.byteOffset, raw.length / 4).slice();
  });
}

/** The first channel of audio decoded by ffmpeg (readerFfmpeg) at 44.1 kHz: a mono source in a stereo file reads back at its own level (no downmix). */
export function decodeFirstChannel(bytes: Buffer, ext = 'audio'): Promise<Float32Array> {
  return withFile(bytes, ext, (file) => {
    const raw = execFileSync(readerFfmpeg(), ['-hide_banner', '-loglevel', 'error', '-i', file, '-af', 'pan=mono|c0=c0', '-f', 'f32le', '-ar', '44100', 'pipe:1'], { maxBuffer: 1 << 30 });
    return new Float32Array(raw.buffer, raw.byteOffset, raw.length / 4).slice();
  });
}

/**
 * Audio decoded by ffmpeg (readerFfmpeg) to interleaved 16-bit little-endian samples at the file's own rate and
 * channel count (no resampling, no mixing): what a sample-exact comparison of two files reads.
 */
export function decodeS16(bytes: Buffer, ext = 'audio'): Promise<Buffer> {
  return withFile(bytes, ext, (file) => execFileSync(readerFfmpeg(), ['-hide_banner', '-loglevel', 'error', '-i', file, '-map', '0:a:0', '-f', 's16le', '-c:a', 'pcm_s16le', 'pipe:1'], { maxBuffer: 1 << 30 }));
}

/** Normalized correlation of two equally long stretches of samples (1: the same shape). */
export function correlation(a: Float32Array, b: Float32Array): number {
  let ab = 0;
  let aa = 0;
  let bb = 0;
  for (let i = 0, n = Math.min(a.length, b.length); i < n; i++) {
    ab += a[i] * b[i];
    aa += a[i] * a[i];
    bb += b[i] * b[i];
  }
  return aa && bb ? ab / Math.sqrt(aa * bb) : 0;
}

/** Math's, read once for the sample loops: a read of the global `Math` costs about 0.2 µs in Jest's vm context. */
const { sin, round, max, min, PI } = Math;

/** A 16-bit PCM WAV at 44.1 kHz whose every second sounds different (a rising tone over a seeded noise): cuts are easy to find. */
export function musicalWav(seconds: number, seed = 1): Buffer {
  const rate = 44100;
  const n = Math.round(seconds * rate);
  const data = Buffer.alloc(n * 2);
  let x = seed >>> 0 || 1;
  for (let i = 0; i < n; i++) {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    const noise = ((x >>> 0) / 0xffffffff - 0.5) * 0.2;
    const t = i / rate;
    const tone = 0.5 * sin(2 * PI * (220 + 40 * t) * t);
    data.writeInt16LE(round(max(-1, min(1, tone + noise)) * 20000), i * 2);
  }
  return pcm16Wav(data, rate);
}

/** The difference of two stretches of samples, one by one, relative to the second: RMS(a − b) / RMS(b) (0: the same samples). */
export function relativeError(a: Float32Array, b: Float32Array): number {
  let diff = 0;
  let ref = 0;
  for (let i = 0, n = Math.min(a.length, b.length); i < n; i++) {
    diff += (a[i] - b[i]) ** 2;
    ref += b[i] ** 2;
  }
  return Math.sqrt(diff / ref);
}

/**
 * The container ffmpeg (readerFfmpeg) finds in audio bytes (its demuxer's name: mp3, ogg, aac, flac, wav) and
 * the seconds of audio it decoded from them, decoding them whole: bytes it cannot decode to the end throw.
 */
export function probeContainer(bytes: Buffer): { format: string; seconds: number } {
  const dir = mkdtempSync(path.join(tmpdir(), 'mgw-probe-'));
  try {
    const file = path.join(dir, 'audio');
    writeFileSync(file, bytes);
    const run = spawnSync(readerFfmpeg(), ['-hide_banner', '-nostdin', '-xerror', '-i', file, '-f', 'null', '-'], { encoding: 'utf8' });
    if (run.status !== 0) throw new Error(`ffmpeg could not decode it: ${run.stderr.split('\n').slice(-3).join(' ')}`);
    const format = /Input #0, ([\w,]+), from/.exec(run.stderr);
    // the length decoded (its last progress line), not the header's Duration: ADTS AAC has none, only an estimate from its first frames' bitrate
    const decoded = [...run.stderr.matchAll(/time=(\d+):(\d+):(\d+(?:\.\d+)?)/g)].pop();
    if (!format || !decoded) throw new Error(`no container or decoded length in: ${run.stderr.slice(-300)}`);
    return { format: format[1], seconds: Number(decoded[1]) * 3600 + Number(decoded[2]) * 60 + Number(decoded[3]) };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Channel count and sample rate of an audio file, from ffmpeg's own report. */
export function probeAudio(bytes: Buffer): Promise<{ channels: number; sampleRate: number }> {
  return withFile(bytes, 'audio', (file) => {
    let report = '';
    try {
      execFileSync(readerFfmpeg(), ['-hide_banner', '-i', file], { stdio: ['ignore', 'ignore', 'pipe'] });
    } catch (err) {
      report = String((err as { stderr?: Buffer }).stderr ?? '');
    }
    const audio = /Audio: [^\n]*?, (\d+) Hz, (mono|stereo)/.exec(report);
    if (!audio) throw new Error(`no audio stream in: ${report.slice(-300)}`);
    return { sampleRate: Number(audio[1]), channels: audio[2] === 'mono' ? 1 : 2 };
  });
}

/** Duration (s), frame size and codec of a video the service made, read from ffmpeg's own report (tests only). */
async function probe(file: string): Promise<{ durationS: number; width: number; height: number; codec: string }> {
  const child = spawn(readerFfmpeg(), ['-hide_banner', '-nostdin', '-i', file], { stdio: ['ignore', 'ignore', 'pipe'] });
  let err = '';
  child.stderr.on('data', (chunk: Buffer) => (err += chunk.toString()));
  await new Promise((resolve) => child.on('close', resolve));
  const duration = /Duration: (\d+):(\d+):(\d+(?:\.\d+)?)/.exec(err);
  const video = /Video: (\w+)[^\n]*?, (\d{2,5})x(\d{2,5})/.exec(err);
  if (!duration || !video) throw new Error(`not a video ffmpeg can read: ${err.split('\n').slice(-2).join(' ')}`);
  return {
    durationS: Number(duration[1]) * 3600 + Number(duration[2]) * 60 + Number(duration[3]),
    codec: video[1],
    width: Number(video[2]),
    height: Number(video[3]),
  };
}

/** A real MP3 of a tone (as an upstream would produce), made with the shipped ffmpeg. */
export function testMp3(seconds: number, frequency = 440): Buffer {
  return renderedOnce('mp3', ['-f', 'lavfi', '-i', `sine=frequency=${frequency}:duration=${seconds}`, '-ac', '2', '-c:a', 'libmp3lame', '-b:a', '128k']);
}
