import { decodeLimitMs, encodeLimitMs, NoAudio, type PinnedAudio, pinAudio, readWavStream } from '../../../infra/ffmpeg/audio-decode.js';
import { feedTo, pinnedInput, runFfmpeg } from '../../../infra/ffmpeg/ffmpeg.js';

// All audio in memory is 44100 Hz stereo, 32-bit float, interleaved (L R L R …) in a Float32Array, one
// "frame" being one L/R pair. Float32Array is native-endian; ffmpeg is told f32le (every platform Node
// runs this service on is little-endian).

/** Frames per second of all PCM in memory. */
export const SAMPLE_RATE = 44100;
/** Interleaved channels of all PCM in memory (L, R). */
export const CHANNELS = 2;

/** Length of the fades at each junction of joinParts (3 ms): the ends touched stay within ~5 ms of it. */
const JUNCTION_FRAMES = Math.round(0.003 * SAMPLE_RATE);
/** PCM is fed to ffmpeg in pieces of this many bytes, waiting for 'drain' in between. */
const FEED_CHUNK = 1 << 20;

/** Frames in interleaved stereo PCM; throws on an odd number of samples (not stereo). */
function framesOf(pcm: Float32Array): number {
  if (pcm.length % CHANNELS !== 0) throw new Error(`PCM has ${pcm.length} samples, not a whole number of ${CHANNELS}-channel frames`);
  return pcm.length / CHANNELS;
}

/** Seconds of PCM (frames / SAMPLE_RATE), rounded to milliseconds. */
export function durationOf(pcm: Float32Array): number {
  return secondsOf(framesOf(pcm));
}

/** Seconds of `frames` frames at SAMPLE_RATE, rounded to milliseconds. */
export function secondsOf(frames: number): number {
  return Math.round((frames / SAMPLE_RATE) * 1000) / 1000;
}

/** One piece of a joined track: its PCM, and where to cut it (seconds; null keeps it whole). */
export interface PcmPart {
  pcm: Float32Array;
  cutAtS: number | null;
}

/**
 * The parts one after the other, each cut at frame round(cutAtS × SAMPLE_RATE) (frames [0, cut) kept), sample-exact:
 * the length is the sum of the kept frames, and every sample is the part's own except within 3 ms of a junction, where
 * the end of the earlier part fades out and the start of the next fades in (no overlap, so no length changes).
 * Throws when a cut is negative, not a number, or past the end of its part.
 * The whole song in memory: the reference that PcmJoiner (which concat streams with) is tested against.
 */
export function joinParts(parts: PcmPart[]): Float32Array {
  const kept = parts.map(({ pcm, cutAtS }, i) => {
    const frames = framesOf(pcm);
    if (cutAtS === null) return frames;
    if (!Number.isFinite(cutAtS) || cutAtS < 0) throw new Error(`part ${i}: cut at ${cutAtS} s is not a time in the part`);
    const cut = Math.round(cutAtS * SAMPLE_RATE);
    if (cut > frames) throw new Error(`part ${i}: cut at ${cutAtS} s (frame ${cut}) is past its end (${frames} frames, ${frames / SAMPLE_RATE} s)`);
    return cut;
  });
  const out = new Float32Array(kept.reduce((sum, frames) => sum + frames, 0) * CHANNELS);
  const starts: number[] = []; // first frame of each non-empty part in `out`
  let at = 0;
  parts.forEach(({ pcm }, i) => {
    if (kept[i] === 0) return;
    out.set(pcm.subarray(0, kept[i] * CHANNELS), at * CHANNELS);
    starts.push(at);
    at += kept[i];
  });
  starts.push(at);
  // raised-cosine gains strictly between 0 and 1; a part shorter than two fades gets both, multiplied
  for (let p = 1; p < starts.length - 1; p++) {
    const junction = starts[p];
    const fadeOut = Math.min(JUNCTION_FRAMES, junction - starts[p - 1]);
    const fadeIn = Math.min(JUNCTION_FRAMES, starts[p + 1] - junction);
    for (let k = 0; k < fadeOut; k++) scaleFrame(out, junction - 1 - k, raisedCosine((k + 1) / (fadeOut + 1)));
    for (let k = 0; k < fadeIn; k++) scaleFrame(out, junction + k, raisedCosine((k + 1) / (fadeIn + 1)));
  }
  return out;
}

function raisedCosine(x: number): number {
  return 0.5 - 0.5 * Math.cos(Math.PI * x);
}

function scaleFrame(pcm: Float32Array, frame: number, gain: number): void {
  for (let c = 0; c < CHANNELS; c++) pcm[frame * CHANNELS + c] *= gain;
}


/**
 * joinParts as a stream, sample for sample the same: parts come in pieces (`push`), in order, and the joined
 * PCM goes out in pieces as soon as it is final, so no part and no song is ever held whole. Held back: the
 * last 3 ms of the part being joined (they fade out if another part follows) and, at a part's start, its
 * first 3 ms until it is known to last that long (its fade-in is shorter otherwise).
 */
export class PcmJoiner {
  /** The previous non-empty part's last min(3 ms, its length) frames, not yet out: they fade out when a next part comes. */
  private tail: Float32Array | null = null;
  /** The current part's frames not yet out (at most JUNCTION_FRAMES once its fade-in is done). */
  private pending: Float32Array = new Float32Array(0);
  private cutFrames: number | null = null;
  private received = 0;
  private kept = 0;
  /** False while a part that follows a non-empty part (a junction) has not had its fade-in yet. */
  private fadedIn = false;
  private open = false;

  /** Starts the next part, to be cut after `cutFrames` frames (null: kept whole). */
  startPart(cutFrames: number | null): void {
    if (this.open) throw new Error('the previous part was not ended');
    if (cutFrames !== null && (!Number.isInteger(cutFrames) || cutFrames < 0)) throw new Error(`a cut must be a whole number of frames ≥ 0, not ${cutFrames}`);
    Object.assign(this, { open: true, cutFrames, received: 0, kept: 0, fadedIn: this.tail === null, pending: new Float32Array(0) });
  }

  /** More frames of the current part (interleaved stereo); answers the joined PCM now final, in order. */
  push(pcm: Float32Array): Float32Array[] {
    if (!this.open) throw new Error('no part was started');
    const frames = framesOf(pcm);
    this.received += frames;
    const take = this.cutFrames === null ? frames : Math.max(0, Math.min(frames, this.cutFrames - this.kept));
    if (take === 0) return [];
    this.kept += take;
    const out: Float32Array[] = [];
    if (this.tail) {
      // the previous part does not end the song: its end fades out
      fadeOut(this.tail);
      out.push(this.tail);
      this.tail = null;
    }
    this.pending = concatPcm(this.pending, pcm.subarray(0, take * CHANNELS));
    if (!this.fadedIn && this.pending.length >= JUNCTION_FRAMES * CHANNELS) {
      fadeIn(this.pending, JUNCTION_FRAMES);
      this.fadedIn = true;
    }
    if (this.fadedIn) {
      const ready = this.pending.length - JUNCTION_FRAMES * CHANNELS;
      if (ready > 0) {
        out.push(this.pending.slice(0, ready));
        this.pending = this.pending.slice(ready);
      }
    }
    return out;
  }

  /** Ends the current part: how many frames it had (all those pushed, before its cut) and how many it kept. */
  endPart(): { frames: number; kept: number } {
    if (!this.open) throw new Error('no part was started');
    this.open = false;
    if (this.kept > 0) {
      if (!this.fadedIn) fadeIn(this.pending, this.kept); // shorter than a fade: it fades in over its whole length
      this.tail = this.pending;
    }
    this.pending = new Float32Array(0);
    return { frames: this.received, kept: this.kept };
  }

  /** Ends the song: the last frames, which do not fade out. */
  finish(): Float32Array[] {
    if (this.open) throw new Error('the last part was not ended');
    const out = this.tail ? [this.tail] : [];
    this.tail = null;
    return out;
  }
}

/** Fades in the first `length` frames (as joinParts does the start of a part after a junction). */
function fadeIn(pcm: Float32Array, length: number): void {
  for (let k = 0; k < length; k++) scaleFrame(pcm, k, raisedCosine((k + 1) / (length + 1)));
}

/** Fades out the whole of `pcm`, the end of a part before a junction (its last frame quietest). */
function fadeOut(pcm: Float32Array): void {
  const length = pcm.length / CHANNELS;
  for (let k = 0; k < length; k++) scaleFrame(pcm, length - 1 - k, raisedCosine((k + 1) / (length + 1)));
}

function concatPcm(a: Float32Array, b: Float32Array): Float32Array {
  if (a.length === 0) return b.slice();
  const out = new Float32Array(a.length + b.length);
  out.set(a);
  out.set(b, a.length);
  return out;
}

/**
 * Writes PCM to `file` as a 192 kb/s MP3 (LAME through ffmpeg, PCM fed on stdin). `file` must be a regular
 * file: ffmpeg seeks back at the end to fill in the Xing/LAME "Info" header, whose gapless fields (encoder
 * delay 576 and the end padding) let decoders trim what LAME adds, so the decoded MP3 lines up with `pcm`
 * sample for sample and has its length (checked with Debian 12's ffmpeg 5.1, an n7.1 build as Debian 13's, the
 * image's, and the npm package's 2018 build:
 * without the header a decoder starts 1105 frames late — 576 of LAME plus 529 of the decoder — and ends
 * about a frame long).
 */
export async function encodeMp3(pcm: Float32Array, file: string, channels: 1 | 2 = CHANNELS): Promise<void> {
  framesOf(pcm);
  await encodeMp3Stream(file, channels, pcm.length / CHANNELS / SAMPLE_RATE, async (write) => write(pcm));
}

/**
 * encodeMp3 of PCM that `produce` hands over piece by piece (`write` waits while the encoder is behind), up
 * to `maxS` seconds of it (the run's wall-clock limit is encodeLimitMs of that).
 */
export async function encodeMp3Stream(file: string, channels: 1 | 2, maxS: number, produce: (write: (pcm: Float32Array) => Promise<void>) => Promise<void>): Promise<void> {
  // A mono file is the mean of the two channels (the same samples when they are equal). Not ffmpeg's `-ac 1`:
  // it mixes each channel at 1/√2, so a mono source copied to both channels would come out 3 dB louder.
  const mono = channels === 1 ? ['-af', 'pan=mono|c0=0.5*c0+0.5*c1'] : [];
  await runFfmpeg(
    ['-loglevel', 'error', '-f', 'f32le', '-ar', String(SAMPLE_RATE), '-ac', String(CHANNELS), '-i', 'pipe:0', ...mono, '-c:a', 'libmp3lame', '-b:a', '192k', '-write_xing', '1', '-f', 'mp3', '-y', file],
    {
      limitMs: encodeLimitMs(maxS),
      feed: (stdin) =>
        produce(async (pcm) => {
          framesOf(pcm);
          const bytes = Buffer.from(pcm.buffer, pcm.byteOffset, pcm.byteLength);
          for (let at = 0; at < bytes.length; at += FEED_CHUNK) {
            await feedTo(stdin, bytes.subarray(at, at + FEED_CHUNK));
          }
        }),
    },
  );
}

/**
 * The first audio stream of an audio file (WAV of any rate, depth and channel count, MP3, FLAC, Ogg…, in
 * one of the formats media-format.ts accepts, decided from its bytes and pinned) as SAMPLE_RATE stereo PCM,
 * whole in memory. Mono is copied to both channels at full level (ffmpeg's own `-ac 2` would lower it by
 * 3 dB), stereo is kept as is (a 44100 Hz 16-bit WAV comes back exactly, as sample / 32768), and more
 * channels are mixed down by ffmpeg. MP3 encoder delay and padding are trimmed by ffmpeg from the LAME header.
 * Throws MediaRefused for a file in no accepted format, NoAudio, FfmpegFailed or FfmpegTimedOut.
 */
export async function decodeAudio(file: string): Promise<Float32Array> {
  return (await decodeAudioFile(file)).pcm;
}

/** What decodeAudio gives, with the channel count of the file (1, or 2 for stereo and more): what its continuations and joins keep. */
export interface DecodedAudio {
  pcm: Float32Array;
  channels: 1 | 2;
}

/** decodeAudio with the channel count; `untilS`: only the start of the file is decoded. */
export async function decodeAudioFile(file: string, options: { untilS?: number } = {}): Promise<DecodedAudio> {
  const pinned = await pinAudio(file);
  const pieces: Float32Array[] = [];
  const { channels } = await streamPcm(file, pinned, options, (pcm) => void pieces.push(pcm));
  const pcm = new Float32Array(pieces.reduce((sum, p) => sum + p.length, 0));
  let at = 0;
  for (const piece of pieces) {
    pcm.set(piece, at);
    at += piece.length;
  }
  if (pcm.length === 0) throw new NoAudio();
  return { pcm, channels };
}

/** How long a decode of a whole file may take when nothing bounds its length: as for an hour of audio. */
const UNBOUNDED_S = 3600;

/**
 * Decodes a pinned file to SAMPLE_RATE stereo PCM (as decodeAudio), handing it to `onPcm` piece by piece
 * as it comes (awaited: the decoder waits while `onPcm` does), never whole. `untilS`: stop after that
 * many seconds; `channels`: what decodedChannels said of the file, if it was asked already. Answers the
 * channel count decodeAudio would (1, or 2 for stereo and more).
 */
export async function streamPcm(file: string, pinned: PinnedAudio, options: { untilS?: number; channels?: number }, onPcm: (pcm: Float32Array) => void | Promise<void>): Promise<{ channels: 1 | 2 }> {
  const channels = options.channels ?? (await decodedChannels(file, pinned));
  const downmix = channels > CHANNELS;
  let width = 0; // bytes in one frame of the decoder's output
  let carry = Buffer.alloc(0); // the bytes of a frame cut between two pieces
  const untilS = options.untilS ?? UNBOUNDED_S;
  await runFfmpeg(decodeArgs(file, pinned, downmix, options.untilS), {
    limitMs: encodeLimitMs(untilS), // its pace may be its consumer's (concat's encoder)
    read: async (stdout) => {
      await readWavStream(stdout, {
        header: (h) => {
          if (h.bitsPerSample !== 32) throw new Error('ffmpeg WAV stream is not 32-bit float');
          if (h.channels !== (downmix ? CHANNELS : channels)) throw new Error(`ffmpeg WAV stream has ${h.channels} channels, ${channels} expected`);
          width = 4 * h.channels;
        },
        data: async (bytes) => {
          const all = carry.length ? Buffer.concat([carry, bytes]) : bytes;
          const whole = all.length - (all.length % width);
          carry = Buffer.from(all.subarray(whole));
          if (whole > 0) await onPcm(toStereo(all.subarray(0, whole), width / 4));
        },
      });
    },
  });
  return { channels: channels === 1 ? 1 : 2 };
}

/** The channel count of what decodes from a pinned file (a decode of its first 50 ms); NoAudio when nothing does. */
export async function decodedChannels(file: string, pinned: PinnedAudio): Promise<number> {
  let channels = 0;
  await runFfmpeg(decodeArgs(file, pinned, false, 0.05), {
    limitMs: decodeLimitMs(1),
    read: async (stdout) => {
      await readWavStream(stdout, { header: (h) => (channels = h.channels), data: () => undefined });
    },
  });
  if (channels === 0) throw new NoAudio();
  return channels;
}

/** ffmpeg's arguments for a float WAV on stdout (its header tells the channel count) resampled to SAMPLE_RATE. */
function decodeArgs(file: string, pinned: PinnedAudio, downmix: boolean, untilS?: number): string[] {
  // `untilS`: only the start of the file is needed (a part cut there): nothing after it is decoded.
  const until = untilS !== undefined ? ['-t', untilS.toFixed(6)] : [];
  return ['-loglevel', 'error', ...pinnedInput(pinned.demuxer, file), '-map', '0:a:0', '-map_metadata', '-1', '-fflags', '+bitexact', ...(downmix ? ['-ac', String(CHANNELS)] : []), '-ar', String(SAMPLE_RATE), ...until, '-c:a', 'pcm_f32le', '-f', 'wav', 'pipe:1'];
}

/** Interleaved float32 little-endian samples of 1 or 2 channels as stereo PCM (a copy, 4-byte aligned). */
function toStereo(data: Buffer, channels: number): Float32Array {
  const samples = new Float32Array(data.length / 4);
  new Uint8Array(samples.buffer).set(data);
  if (channels === CHANNELS) return samples;
  if (channels !== 1) throw new Error(`cannot make stereo of ${channels} channels`);
  const stereo = new Float32Array(samples.length * CHANNELS);
  for (let i = 0; i < samples.length; i++) stereo[2 * i] = stereo[2 * i + 1] = samples[i];
  return stereo;
}
