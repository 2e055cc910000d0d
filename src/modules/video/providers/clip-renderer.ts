import sharp from 'sharp';
import type { ImageLimits } from '../../../infra/config/app-config.js';
import { feedTo, pinnedInput, runFfmpeg } from '../../../infra/ffmpeg/ffmpeg.js';
import { MediaRefused, sniffVideoFile } from '../../../infra/ffmpeg/media-format.js';
import { boundedSharp } from '../../../infra/images/image-bounds.js';
import { RESOLUTION_SIDES } from '../../../vendors/contracts/resolution.js';

export const CLIP_FPS = 24;
/** Frames drawn per second of clip: CLIP_FPS / DRAW_EVERY (8), enough for its slow motion. */
const DRAW_EVERY = 3;
/** Length of a clip when none is asked for. */
export const CLIP_SECONDS = 5;
/** About 640x360 worth of pixels, whatever the aspect ratio, when no resolution is asked for. */
const TARGET_AREA = 640 * 360;
const ZOOM = 1.25;
/**
 * x264's fastest preset at every size: a stand-in's picture needs no better, and its encoding was most of a
 * clip's CPU (a 5 s 640x360 clip: 0.35-0.5 CPU-seconds of ffmpeg against 0.66-0.73 with `veryfast`; 720p
 * 1.0 against 2.2). CRF 28 keeps the file near what `veryfast` at 23 made (150 kB against 72 kB at 640x360;
 * `ultrafast` at 23, 265 kB).
 */
const ENCODING = ['-c:v', 'libx264', '-preset', 'ultrafast', '-crf', '28'];
/** Wall-clock limit of a render (a 4k clip takes tens of seconds), and of reading one frame of a video. */
const RENDER_LIMIT_MS = 10 * 60_000;
const FRAME_LIMIT_MS = 60_000;

/** Seconds of a Luma duration ("5s", "9s"); the sandbox's default when none is given. */
export function durationSeconds(duration: string | null | undefined): number {
  const seconds = Number(/^(\d+)s$/.exec(duration ?? '')?.[1]);
  return Number.isInteger(seconds) && seconds > 0 ? seconds : CLIP_SECONDS;
}

/** Frame height of a Luma resolution, or undefined for the default size. */
export function resolutionHeight(resolution: string | null | undefined): number | undefined {
  return resolution ? RESOLUTION_SIDES[resolution] : undefined;
}

export interface ClipSpec {
  aspectRatio: string;
  loop: boolean;
  /** Length in seconds (CLIP_SECONDS when absent). */
  seconds?: number;
  /** Frame height in pixels (about 640x360 worth of pixels when absent). */
  height?: number;
  /** frame0 (start) and frame1 (end) as image files, if given (a caller's: checked against the bounds before). */
  start?: Buffer;
  end?: Buffer;
  /** The bounds the keyframes are decoded under (sharp's limitInputPixels). */
  imageLimits: ImageLimits;
  /** Shown on the gradient of a text-only clip. */
  title: string;
  /** Where the text-only clip's colour wave starts: the same seed draws the same clip, another seed another. */
  seed?: number;
  /** A sound track (a soft two-tone chord) under the picture. */
  audio?: boolean;
}

/** The clip written to its file: its first frame as a JPEG, and its size and length. */
export interface Clip {
  thumbnail: Buffer;
  width: number;
  height: number;
  durationS: number;
}

/**
 * Frame size for `<w>:<h>`: its shorter side `height` pixels when given (a resolution class: 720p is
 * 1280x720 and 720x1280, as vendors make them), else about TARGET_AREA pixels; even sides (H.264 with 4:2:0
 * needs them), 16 to 1280 by default, up to 8192 for a resolution.
 */
export function frameSize(aspectRatio: string, height?: number): { width: number; height: number } {
  const [w, h] = aspectRatio.split(':').map(Number);
  if (height) {
    const even = (v: number) => Math.min(8192, Math.max(16, Math.round(v / 2) * 2));
    return w >= h ? { width: even(height * (w / h)), height: even(height) } : { width: even(height), height: even(height * (h / w)) };
  }
  const even = (v: number) => Math.min(1280, Math.max(16, Math.round(v / 2) * 2));
  return { width: even(Math.sqrt(TARGET_AREA * (w / h))), height: even(Math.sqrt(TARGET_AREA / (w / h))) };
}

/**
 * A real H.264 MP4 of `seconds` (CLIP_SECONDS by default): frame0 → frame1 as a cross-fade, a slow zoom on a single keyframe,
 * or a titled, moving gradient for a text prompt. With `loop`, the motion goes there and back, so the
 * last frame is the first. Frames are drawn here and piped to the shipped ffmpeg, which writes `file`.
 */
export async function renderClip(spec: ClipSpec, file: string): Promise<Clip> {
  const { width, height } = frameSize(spec.aspectRatio, spec.height);
  const count = Math.round(CLIP_FPS * (spec.seconds ?? CLIP_SECONDS));
  const frames = await frameSource(spec, width, height);
  let first: Buffer | undefined;
  const seconds = count / CLIP_FPS;
  // generated sound: a chord from the seed, as long as the picture
  const hz = 220 + ((spec.seed ?? 0) % 12) * 20;
  const sound = spec.audio ? ['-f', 'lavfi', '-i', `aevalsrc=0.2*sin(${hz}*2*PI*t)+0.1*sin(${Math.round(hz * 1.5)}*2*PI*t):s=44100:d=${seconds}`, '-c:a', 'aac', '-b:a', '96k'] : [];
  await runFfmpeg(
    ['-loglevel', 'error', '-f', 'rawvideo', '-pix_fmt', 'rgb24', '-s', `${width}x${height}`, '-r', String(CLIP_FPS), '-i', 'pipe:0', ...sound, ...ENCODING, '-pix_fmt', 'yuv420p', '-movflags', '+faststart', '-y', file],
    {
      limitMs: RENDER_LIMIT_MS,
      feed: async (stdin) => {
        // a new picture every DRAW_EVERY frames (and the last), repeated in between: drawing a picture costs
        // more than the encoder spends on a repeated frame, which is next to nothing
        let frame: Buffer | undefined;
        for (let i = 0; i < count; i++) {
          if (i % DRAW_EVERY === 0 || i === count - 1) frame = await frames(count === 1 ? 0 : i / (count - 1));
          if (i === 0) first = frame;
          await feedTo(stdin, frame!);
        }
      },
    },
  );
  const thumbnail = await sharp(first!, { raw: { width, height, channels: 3 } }).jpeg({ quality: 85 }).toBuffer();
  return { thumbnail, width, height, durationS: seconds };
}

/** Returns a function from time (0..1) to one raw RGB frame. */
async function frameSource(spec: ClipSpec, width: number, height: number): Promise<(t: number) => Promise<Buffer>> {
  const there = (t: number) => (spec.loop ? Math.sin(Math.PI * t) : t); // loop: 0 → 1 → 0
  const ease = (t: number) => t * t * (3 - 2 * t);
  if (spec.start && spec.end) {
    const a = await cover(spec.start, width, height, spec.imageLimits);
    const b = await cover(spec.end, width, height, spec.imageLimits);
    return async (t) => blend(a, b, ease(there(t)));
  }
  const single = spec.start ?? spec.end;
  if (single) {
    const big = { width: Math.round(width * ZOOM), height: Math.round(height * ZOOM) };
    const source = await cover(single, big.width, big.height, spec.imageLimits);
    // Zoom in on frame0; zoom out onto frame1 when it is the only keyframe (the clip ends on it).
    const zoomAt = (t: number) => (spec.start ? 1 + (ZOOM - 1) * there(t) : ZOOM - (ZOOM - 1) * there(t));
    return async (t) => {
      const z = zoomAt(t);
      const w = Math.min(big.width, Math.round(big.width / z));
      const h = Math.min(big.height, Math.round(big.height / z));
      return sharp(source, { raw: { ...big, channels: 3 } })
        .extract({ left: Math.floor((big.width - w) / 2), top: Math.floor((big.height - h) / 2), width: w, height: h })
        .resize(width, height, { fit: 'fill' })
        .raw()
        .toBuffer();
    };
  }
  const wave = new WaveFrames(width, height, await titleLayer(spec.title, width, height));
  const offset = spec.seed === undefined ? 0 : (spec.seed % 997) / 997;
  return async (t) => wave.frame(offset + (spec.loop ? t : t / 2));
}

/** A keyframe (a caller's image) scaled to cover width x height, centre-cropped, as raw RGB. */
async function cover(image: Buffer, width: number, height: number, limits: ImageLimits): Promise<Buffer> {
  return boundedSharp(image, limits).rotate().resize(width, height, { fit: 'cover' }).removeAlpha().toColourspace('srgb').raw().toBuffer();
}

/**
 * `a` and `b` mixed, (a·(256 − m) + b·m) >> 8 for each byte with m = round(mix · 256); four bytes at a time
 * where the buffers allow (two bytes in each half of a 32-bit word: half a cross-fade frame's CPU of the
 * bytewise loop).
 */
export function blend(a: Buffer, b: Buffer, mix: number): Buffer {
  const m = Math.round(mix * 256);
  const k = 256 - m;
  const out = Buffer.allocUnsafe(a.length);
  const aligned = (a.byteOffset | b.byteOffset | out.byteOffset) % 4 === 0;
  const words = aligned ? a.length >>> 2 : 0;
  if (words > 0) {
    const [x, y, o] = [a, b, out].map((buf) => new Uint32Array(buf.buffer, buf.byteOffset, words));
    for (let i = 0; i < words; i++) {
      const p = x[i];
      const q = y[i];
      const even = ((((p & 0x00ff00ff) * k + (q & 0x00ff00ff) * m) >>> 8) & 0x00ff00ff);
      const odd = ((((p >>> 8) & 0x00ff00ff) * k + ((q >>> 8) & 0x00ff00ff) * m) & 0xff00ff00);
      o[i] = even | odd;
    }
  }
  for (let i = words * 4; i < a.length; i++) out[i] = (a[i] * k + b[i] * m) >> 8;
  return out;
}

const WAVE_STEPS = 1024;
/** One period of each channel's colour wave, as a lookup table (integer work per pixel, no trigonometry). */
const WAVE = [0, 0.33, 0.67].map((offset, c) =>
  Uint8Array.from({ length: WAVE_STEPS }, (_, i) => [128, 110, 150][c] + [90, 80, 90][c] * Math.cos(2 * Math.PI * (i / WAVE_STEPS + offset))),
);

/**
 * The text-only clip's frames: a diagonal colour wave whose phase moves with t (phase 0 and 1 give the same
 * frame), the title over it. Pixel (x, y) is the wave's step `column(x) + row(y) + shift`, so a row is fixed
 * by the step it starts on: each of the WAVE_STEPS rows is drawn once per clip, when first needed, and a frame
 * is those rows copied, then the title blended over the rows it covers (drawing each pixel of every frame was
 * most of a text clip's CPU: 4 s of the video doors' tests).
 */
export class WaveFrames {
  /** Each column's step, and each row's at phase 0. */
  private readonly columns: Uint16Array;
  private readonly rowSteps: Uint16Array;
  private readonly rows: (Buffer | undefined)[] = new Array<Buffer | undefined>(WAVE_STEPS);
  /** The rows the title covers, and each one's first and last covered column. */
  private readonly titled: { y: number; from: number; to: number }[] = [];

  /** `title`: raw RGBA, width x height. */
  constructor(
    private readonly width: number,
    private readonly height: number,
    private readonly title: Buffer,
  ) {
    this.columns = Uint16Array.from({ length: width }, (_, x) => Math.floor((x / width) * 0.7 * WAVE_STEPS));
    this.rowSteps = Uint16Array.from({ length: height }, (_, y) => Math.round((y / height) * 0.3 * WAVE_STEPS));
    for (let y = 0; y < height; y++) {
      let from = -1;
      let to = -1;
      for (let x = 0; x < width; x++) {
        if (title[(y * width + x) * 4 + 3] === 0) continue;
        if (from < 0) from = x;
        to = x;
      }
      if (from >= 0) this.titled.push({ y, from, to });
    }
  }

  frame(phase: number): Buffer {
    const stride = this.width * 3;
    const out = Buffer.allocUnsafe(stride * this.height);
    const shift = Math.round(phase * WAVE_STEPS);
    for (let y = 0; y < this.height; y++) this.row((this.rowSteps[y] + shift) & (WAVE_STEPS - 1)).copy(out, y * stride);
    const { title, width } = this;
    for (const { y, from, to } of this.titled) {
      for (let x = from, i = y * stride + x * 3, j = (y * width + x) * 4; x <= to; x++, i += 3, j += 4) {
        const alpha = title[j + 3];
        if (alpha === 0) continue;
        out[i] += ((title[j] - out[i]) * alpha) >> 8;
        out[i + 1] += ((title[j + 1] - out[i + 1]) * alpha) >> 8;
        out[i + 2] += ((title[j + 2] - out[i + 2]) * alpha) >> 8;
      }
    }
    return out;
  }

  /** The row that starts on `start`: column x is the wave's step columns[x] + start. */
  private row(start: number): Buffer {
    const cached = this.rows[start];
    if (cached) return cached;
    const [red, green, blue] = WAVE;
    const row = Buffer.allocUnsafe(this.width * 3);
    for (let x = 0, i = 0; x < this.width; x++, i += 3) {
      const step = (this.columns[x] + start) & (WAVE_STEPS - 1);
      row[i] = red[step];
      row[i + 1] = green[step];
      row[i + 2] = blue[step];
    }
    this.rows[start] = row;
    return row;
  }
}

/** The prompt's first words, white on transparent, as raw RGBA (fonts come from the system; none, no text). */
async function titleLayer(text: string, width: number, height: number): Promise<Buffer> {
  const words = text.trim().replace(/\s+/g, ' ');
  const line = words.length > 48 ? `${words.slice(0, 47)}…` : words;
  const size = Math.max(10, Math.round(Math.min(width / Math.max(12, line.length * 0.6), height / 6)));
  const escaped = line.replace(/[<>&'"]/g, (c) => `&#${c.charCodeAt(0)};`);
  const svg = `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}"><text x="50%" y="50%" text-anchor="middle" dominant-baseline="middle" font-family="DejaVu Sans, sans-serif" font-size="${size}" fill="white" stroke="black" stroke-width="${Math.max(1, size / 16)}">${escaped}</text></svg>`;
  try {
    return await sharp(Buffer.from(svg)).ensureAlpha().raw().toBuffer();
  } catch {
    return Buffer.alloc(width * height * 4);
  }
}

/**
 * The last frame of the video in `file`, as PNG (to continue from an earlier generation). The file may be
 * an upstream's: read as MP4 only (decided from its bytes, the demuxer pinned, local file only); throws
 * MediaRefused for anything else, FfmpegFailed or FfmpegTimedOut.
 */
export async function lastFrame(file: string): Promise<Buffer> {
  return runFfmpeg(['-loglevel', 'error', '-sseof', '-0.25', ...(await pinnedVideo(file)), '-frames:v', '1', '-f', 'image2pipe', '-c:v', 'png', 'pipe:1'], { collectStdout: true, limitMs: FRAME_LIMIT_MS });
}

/** The first frame of the video in `file`, as JPEG (the still of a vendor that gives none); read as lastFrame reads. */
export async function firstFrame(file: string): Promise<Buffer> {
  return runFfmpeg(['-loglevel', 'error', ...(await pinnedVideo(file)), '-frames:v', '1', '-f', 'image2pipe', '-c:v', 'mjpeg', 'pipe:1'], { collectStdout: true, limitMs: FRAME_LIMIT_MS });
}

async function pinnedVideo(file: string): Promise<string[]> {
  const sniffed = await sniffVideoFile(file);
  if (!sniffed.ok) throw new MediaRefused(sniffed.reason);
  return pinnedInput(sniffed.demuxer, file);
}
