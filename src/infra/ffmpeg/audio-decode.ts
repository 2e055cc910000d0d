import { FfmpegFailed, FfmpegTimedOut, pinnedInput, runFfmpeg } from './ffmpeg.js';
import { AUDIO_FORMATS, type AudioFormatName, MediaRefused, sniffAudioFile, type WavHeader } from './media-format.js';

/** A file whose format was decided from its bytes: the demuxer every decode of it is pinned to. */
export interface PinnedAudio {
  format: AudioFormatName;
  demuxer: string;
  /** What its WAV header says, for a WAV. */
  wav?: WavHeader;
}

/** The format of the audio file at `path` from its bytes; throws MediaRefused (a reason a caller may read) for anything else. */
export async function pinAudio(path: string): Promise<PinnedAudio> {
  const sniffed = await sniffAudioFile(path);
  if (!sniffed.ok) throw new MediaRefused(sniffed.reason);
  return { format: sniffed.format, demuxer: sniffed.demuxer, ...(sniffed.wav ? { wav: sniffed.wav } : {}) };
}

/**
 * The wall-clock limit of a decode that may produce `audioS` seconds of audio: 30 s, plus 0.1 s for each
 * second (ten times faster than real time at the least, which a loaded machine decodes well within).
 */
export function decodeLimitMs(audioS: number): number {
  return 30_000 + Math.ceil(audioS * 100);
}

/**
 * The wall-clock limit of a run paced by an MP3 encoder (the encode itself, or a decode whose output goes
 * into one) for `audioS` seconds of audio: 30 s, plus 0.5 s for each second (twice real time at the least).
 */
export function encodeLimitMs(audioS: number): number {
  return 30_000 + Math.ceil(audioS * 500);
}

/** No audio stream, or one that decodes to nothing. */
export class NoAudio extends Error {
  constructor() {
    super('no audio decodes from the file');
    this.name = 'NoAudio';
  }
}

/** The format of ffmpeg's streamed WAV output. */
export interface WavStreamHeader {
  channels: number;
  sampleRate: number;
  bitsPerSample: number;
}

/**
 * Reads ffmpeg's WAV on stdout as it comes: `header` once its format is known, then `data` for each piece
 * of samples (sizes in its header are unknown there: the data runs to the end; pieces are not aligned to
 * samples). Resolves at the end of the stream, saying whether a header came (none: ffmpeg wrote nothing).
 */
export async function readWavStream(stdout: NodeJS.ReadableStream, on: { header(h: WavStreamHeader): void; data(bytes: Buffer): void | Promise<void> }): Promise<boolean> {
  let head: Buffer | null = Buffer.alloc(0);
  for await (const chunk of stdout as AsyncIterable<Buffer>) {
    if (!head) {
      await on.data(chunk);
      continue;
    }
    head = Buffer.concat([head, chunk]);
    const parsed = parseWavHead(head);
    if (!parsed) continue;
    on.header(parsed.header);
    const rest = head.subarray(parsed.dataAt);
    head = null;
    if (rest.length) await on.data(rest);
  }
  return head === null;
}

/** The header of ffmpeg's WAV stream and where its samples start, or null while more bytes are needed. */
function parseWavHead(wav: Buffer): { header: WavStreamHeader; dataAt: number } | null {
  if (wav.length < 12) return null;
  if (wav.toString('latin1', 0, 4) !== 'RIFF' || wav.toString('latin1', 8, 12) !== 'WAVE') throw new Error('ffmpeg did not produce a WAV stream');
  let header: WavStreamHeader | undefined;
  for (let at = 12; at + 8 <= wav.length; ) {
    const id = wav.toString('latin1', at, at + 4);
    const size = wav.readUInt32LE(at + 4);
    if (id === 'data') {
      if (!header) throw new Error('ffmpeg WAV stream has no format before its data');
      return { header, dataAt: at + 8 };
    }
    if (id === 'fmt ') {
      if (at + 8 + 16 > wav.length) return null;
      header = { channels: wav.readUInt16LE(at + 10), sampleRate: wav.readUInt32LE(at + 12), bitsPerSample: wav.readUInt16LE(at + 22) };
    }
    at += 8 + size + (size % 2);
  }
  if (wav.length > 1 << 16) throw new Error('ffmpeg WAV stream has no data chunk');
  return null;
}

/** What decodes from a file: its length (to the millisecond), channels and rate, none of its samples kept. */
export interface MeasuredAudio {
  durationS: number;
  channels: number;
  sampleRate: number;
}

/**
 * Decodes the file with its format pinned and counts what comes out, holding none of it: the length of the
 * audio that really decodes, whatever a header says. Decodes at most `maxS` + 1 s (so a longer file shows as
 * longer than `maxS` without being decoded whole), within decodeLimitMs of that. Throws NoAudio when no
 * audio decodes, FfmpegFailed or FfmpegTimedOut.
 */
export async function measureAudio(file: string, pinned: PinnedAudio, options: { maxS: number }): Promise<MeasuredAudio> {
  const untilS = options.maxS + 1;
  let header: WavStreamHeader | undefined;
  let bytes = 0;
  await runFfmpeg(['-loglevel', 'error', ...pinnedInput(pinned.demuxer, file), '-map', '0:a:0', '-map_metadata', '-1', '-fflags', '+bitexact', '-t', String(untilS), '-c:a', 'pcm_s16le', '-f', 'wav', 'pipe:1'], {
    limitMs: decodeLimitMs(untilS),
    read: async (stdout) => {
      await readWavStream(stdout, { header: (h) => (header = h), data: (piece) => void (bytes += piece.length) });
    },
  });
  if (!header || bytes < header.channels * 2) throw new NoAudio();
  const frames = Math.floor(bytes / (header.channels * 2));
  return { durationS: Math.round((frames / header.sampleRate) * 1000) / 1000, channels: header.channels, sampleRate: header.sampleRate };
}

/**
 * A decode's failure as a predicate a caller may read ("is damaged: its MP3 audio does not decode"), or
 * undefined for an error that is not about the file (to be handled as any unexpected error). Never
 * ffmpeg's words or a path: those go to the log.
 */
export function decodeFailure(err: unknown, format?: AudioFormatName): string | undefined {
  if (err instanceof MediaRefused) return err.message;
  if (err instanceof FfmpegTimedOut) return `took longer than ${Math.round(err.limitMs / 1000)} s to decode`;
  if (err instanceof NoAudio) return 'is damaged: no audio decodes from it';
  if (err instanceof FfmpegFailed) return `is damaged: its ${format ? `${AUDIO_FORMATS[format].label} ` : ''}audio does not decode`;
  return undefined;
}

/** A file that does not decode as audio: `reason` a caller may read ("is damaged: …"); `detail`, ffmpeg's words, for the log only. */
export class AudioUnreadable extends Error {
  constructor(
    readonly reason: string,
    readonly detail?: string,
  ) {
    super(reason);
    this.name = 'AudioUnreadable';
  }
}

/**
 * Runs `work` on the audio file at `path` with its format decided from its bytes and pinned (pinAudio), and
 * turns a refusal or a failed decode into AudioUnreadable (see decodeFailure); other errors pass as they are.
 */
export async function withPinnedAudio<T>(path: string, work: (pinned: PinnedAudio) => Promise<T>): Promise<T> {
  let pinned: PinnedAudio | undefined;
  try {
    pinned = await pinAudio(path);
    return await work(pinned);
  } catch (err) {
    const reason = decodeFailure(err, pinned?.format);
    if (reason === undefined) throw err;
    throw new AudioUnreadable(reason, err instanceof FfmpegFailed ? err.detail : undefined);
  }
}
