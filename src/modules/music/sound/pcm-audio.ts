import { once } from 'node:events';
import { runFfmpeg } from '../../../infra/ffmpeg/ffmpeg.js';

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
  return Math.round((framesOf(pcm) / SAMPLE_RATE) * 1000) / 1000;
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
 * Writes PCM to `file` as a 192 kb/s MP3 (LAME through ffmpeg, PCM fed on stdin). `file` must be a regular
 * file: ffmpeg seeks back at the end to fill in the Xing/LAME "Info" header, whose gapless fields (encoder
 * delay 576 and the end padding) let decoders trim what LAME adds, so the decoded MP3 lines up with `pcm`
 * sample for sample and has its length (checked with this ffmpeg build, 2018-12: without the header a
 * decoder starts 1105 frames late — 576 of LAME plus 529 of the decoder — and ends about a frame long).
 */
export async function encodeMp3(pcm: Float32Array, file: string, channels: 1 | 2 = CHANNELS): Promise<void> {
  framesOf(pcm);
  const bytes = Buffer.from(pcm.buffer, pcm.byteOffset, pcm.byteLength);
  // A mono file is the mean of the two channels (the same samples when they are equal). Not ffmpeg's `-ac 1`:
  // it mixes each channel at 1/√2, so a mono source copied to both channels would come out 3 dB louder.
  const mono = channels === 1 ? ['-af', 'pan=mono|c0=0.5*c0+0.5*c1'] : [];
  await runFfmpeg(
    ['-loglevel', 'error', '-f', 'f32le', '-ar', String(SAMPLE_RATE), '-ac', String(CHANNELS), '-i', 'pipe:0', ...mono, '-c:a', 'libmp3lame', '-b:a', '192k', '-write_xing', '1', '-f', 'mp3', '-y', file],
    {
      feed: async (stdin) => {
        for (let at = 0; at < bytes.length; at += FEED_CHUNK) {
          if (!stdin.write(bytes.subarray(at, at + FEED_CHUNK))) await once(stdin, 'drain');
        }
      },
    },
  );
}

/**
 * The first audio stream of any file ffmpeg reads (WAV of any rate, depth and channel count, MP3, FLAC, Ogg…)
 * as SAMPLE_RATE stereo PCM. Mono is copied to both channels at full level (ffmpeg's own `-ac 2` would lower
 * it by 3 dB), stereo is kept as is (a 44100 Hz 16-bit WAV comes back exactly, as sample / 32768), and more
 * channels are mixed down by ffmpeg. MP3 encoder delay and padding are trimmed by ffmpeg from the LAME header.
 */
export async function decodeAudio(file: string): Promise<Float32Array> {
  return (await decodeAudioFile(file)).pcm;
}

/** What decodeAudio gives, with the channel count of the file (1, or 2 for stereo and more): what its continuations and joins keep. */
export interface DecodedAudio {
  pcm: Float32Array;
  channels: 1 | 2;
}

export async function decodeAudioFile(file: string, options: { untilS?: number } = {}): Promise<DecodedAudio> {
  const decoded = await decodeToWav(file, false, options.untilS);
  if (decoded.channels <= CHANNELS) return { pcm: toStereo(decoded.data, decoded.channels), channels: decoded.channels === 1 ? 1 : 2 };
  const mixed = await decodeToWav(file, true, options.untilS);
  return { pcm: toStereo(mixed.data, mixed.channels), channels: 2 };
}

/** ffmpeg's decode as a float WAV on stdout (its header tells the channel count), resampled to SAMPLE_RATE. */
async function decodeToWav(file: string, downmix: boolean, untilS?: number): Promise<{ channels: number; data: Buffer }> {
  // `untilS`: only the start of the file is needed (a part cut there): nothing after it is held in memory.
  const until = untilS !== undefined ? ['-t', untilS.toFixed(6)] : [];
  const wav = await runFfmpeg(
    ['-loglevel', 'error', '-i', file, '-map', '0:a:0', '-map_metadata', '-1', '-fflags', '+bitexact', ...(downmix ? ['-ac', String(CHANNELS)] : []), '-ar', String(SAMPLE_RATE), ...until, '-c:a', 'pcm_f32le', '-f', 'wav', 'pipe:1'],
    { collectStdout: true },
  );
  return readFloatWav(wav);
}

/** The channel count and sample bytes of ffmpeg's streamed WAV (its sizes are unknown there: data runs to the end). */
function readFloatWav(wav: Buffer): { channels: number; data: Buffer } {
  if (wav.length < 12 || wav.toString('latin1', 0, 4) !== 'RIFF' || wav.toString('latin1', 8, 12) !== 'WAVE') throw new Error('ffmpeg did not produce a WAV stream');
  let channels = 0;
  for (let at = 12; at + 8 <= wav.length; ) {
    const id = wav.toString('latin1', at, at + 4);
    const size = wav.readUInt32LE(at + 4);
    if (id === 'data') {
      if (!channels) throw new Error('ffmpeg WAV stream has no format before its data');
      const data = wav.subarray(at + 8);
      return { channels, data: data.subarray(0, data.length - (data.length % (4 * channels))) };
    }
    if (id === 'fmt ') {
      channels = wav.readUInt16LE(at + 10);
      if (wav.readUInt16LE(at + 22) !== 32) throw new Error('ffmpeg WAV stream is not 32-bit float');
    }
    at += 8 + size + (size % 2);
  }
  throw new Error('ffmpeg WAV stream has no audio data (no audio in the file?)');
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
