import { open } from 'node:fs/promises';

// What a file is, decided from its bytes before any decoder sees it. ffmpeg, left to itself, probes every
// demuxer it has (HLS playlists and ffconcat lists among them, which open the files they name, even behind
// an ID3 tag), so the service decides here, from magic numbers, which one of a short list of audio formats
// a file is, and ffmpeg is then told that one demuxer and no other (pinnedInput).

/** The audio formats the service accepts: its name (the upload's `format`), ffmpeg's demuxer for it, its Content-Type. */
export const AUDIO_FORMATS = {
  mp3: { demuxer: 'mp3', contentType: 'audio/mpeg', label: 'MP3' },
  aac: { demuxer: 'aac', contentType: 'audio/aac', label: 'AAC (ADTS)' },
  wav: { demuxer: 'wav', contentType: 'audio/wav', label: 'WAV' },
  aiff: { demuxer: 'aiff', contentType: 'audio/aiff', label: 'AIFF' },
  flac: { demuxer: 'flac', contentType: 'audio/flac', label: 'FLAC' },
  ogg: { demuxer: 'ogg', contentType: 'audio/ogg', label: 'Ogg' },
  opus: { demuxer: 'ogg', contentType: 'audio/ogg', label: 'Ogg Opus' },
  m4a: { demuxer: 'mov', contentType: 'audio/mp4', label: 'M4A' },
  webm: { demuxer: 'matroska', contentType: 'audio/webm', label: 'WebM' },
} as const;

export type AudioFormatName = keyof typeof AUDIO_FORMATS;

/** The accepted formats as a caller reads them in a refusal. */
export const ACCEPTED_AUDIO = 'MP3, AAC (ADTS), WAV (PCM or float), AIFF, FLAC, Ogg (Vorbis, Opus or FLAC), M4A (MP4 audio), WebM';

/** What a WAV's header says: the header-claimed duration is its data size over its byte rate (null: size unknown). */
export interface WavHeader {
  channels: number;
  sampleRate: number;
  byteRate: number;
  /** The data chunk's size as the header gives it; null when it says "unknown" (0 or 0xFFFFFFFF, as streamed WAVs do) or the data chunk was not found near the start. */
  dataBytes: number | null;
}

export type AudioSniff = { ok: true; format: AudioFormatName; demuxer: string; wav?: WavHeader } | { ok: false; reason: string };

/**
 * Thrown when a file is not one the service decodes; the message is a predicate about the file, safe to show
 * a caller after "the file at url" or "the audio of clip X" ("is an HLS playlist, not audio …").
 */
export class MediaRefused extends Error {
  constructor(reason: string) {
    super(reason);
    this.name = 'MediaRefused';
  }
}

/** Reads `length` bytes at `offset` (fewer at the end). */
export type ByteReader = (offset: number, length: number) => Promise<Buffer>;

/** ID3 tags skipped in a row at most (real files have one, rarely two). */
const MAX_ID3_TAGS = 8;

/** How much of the file after its ID3 tags the sniff looks at. */
const WINDOW = 64 * 1024;

/** A reader over a buffer (tests, samples). */
export function bufferReader(bytes: Buffer): ByteReader {
  return async (offset, length) => bytes.subarray(offset, offset + length);
}

/** Sniffs the file at `path` (see sniffAudio). */
export async function sniffAudioFile(path: string): Promise<AudioSniff> {
  const handle = await open(path, 'r');
  try {
    const { size } = await handle.stat();
    return await sniffAudio(async (offset, length) => {
      const buffer = Buffer.alloc(Math.max(0, Math.min(length, size - offset)));
      const { bytesRead } = await handle.read(buffer, 0, buffer.length, offset);
      return buffer.subarray(0, bytesRead);
    }, size);
  } finally {
    await handle.close();
  }
}

/**
 * The format of a file of `size` bytes, from its first bytes: one of AUDIO_FORMATS, or a refusal saying
 * what the file is instead (a playlist, a list of files, a WAV of another codec, nothing known).
 * ID3v2 tags (any size, several in a row) are skipped; what follows them must be MP3 or AAC frames or FLAC.
 */
export async function sniffAudio(read: ByteReader, size: number): Promise<AudioSniff> {
  let offset = 0;
  let tags = 0;
  for (;;) {
    const head = await read(offset, 10);
    const tagSize = id3Size(head);
    if (tagSize === null) break;
    if (++tags > MAX_ID3_TAGS) return refuse(`has more than ${MAX_ID3_TAGS} ID3 tags in a row`);
    offset += tagSize;
  }
  const tagged = tags > 0;
  if (offset >= size && tagged) return refuse('has an ID3 tag and nothing after it');
  let window = await read(offset, WINDOW);
  const list = listKind(window);
  if (list) return refuse(list);
  if (tagged) {
    // the tag may be followed by zeros (padding written outside it); frames must come next
    let zeros = 0;
    while (zeros < window.length && window[zeros] === 0) zeros++;
    if (zeros === window.length && offset + zeros < size) return refuse('has an ID3 tag followed by more than 64 kB of zeros');
    offset += zeros;
    window = window.subarray(zeros);
    const after = listKind(window);
    if (after) return refuse(after);
    if (ascii(window, 0, 4) === 'fLaC') return accept('flac');
    const frames = await mpegFrames(read, offset, size);
    if (frames) return accept(frames);
    return refuse('has an ID3 tag with no MP3, AAC or FLAC audio after it');
  }
  if (ascii(window, 0, 4) === 'RIFF' && ascii(window, 8, 12) === 'WAVE') return wavFormat(window);
  if (ascii(window, 0, 4) === 'FORM' && ['AIFF', 'AIFC'].includes(ascii(window, 8, 12))) return accept('aiff');
  if (ascii(window, 0, 4) === 'fLaC') return accept('flac');
  if (ascii(window, 0, 4) === 'OggS') return accept(window.includes('OpusHead', 0, 'latin1') ? 'opus' : 'ogg');
  if (ascii(window, 4, 8) === 'ftyp') return accept('m4a');
  if (window.length >= 4 && window.readUInt32BE(0) === 0x1a45dfa3) return accept('webm');
  const frames = await mpegFrames(read, 0, size);
  if (frames) return accept(frames);
  return refuse(`is not audio in an accepted format (${ACCEPTED_AUDIO})`);
}

function accept(format: AudioFormatName, wav?: WavHeader): AudioSniff {
  return { ok: true, format, demuxer: AUDIO_FORMATS[format].demuxer, ...(wav ? { wav } : {}) };
}

function refuse(reason: string): AudioSniff {
  return { ok: false, reason };
}

function ascii(bytes: Buffer, from: number, to: number): string {
  return bytes.length >= to ? bytes.toString('latin1', from, to) : '';
}

/** The whole size of an ID3v2 tag at the start of `head` (header, body, footer), or null if none is there. */
function id3Size(head: Buffer): number | null {
  if (head.length < 10 || ascii(head, 0, 3) !== 'ID3' || head[3] === 0xff || head[4] === 0xff) return null;
  if ((head[6] | head[7] | head[8] | head[9]) & 0x80) return null; // sizes are syncsafe: 7 bits a byte
  const body = (head[6] << 21) | (head[7] << 14) | (head[8] << 7) | head[9];
  return 10 + body + (head[5] & 0x10 ? 10 : 0);
}

/** What a text list is, by its first line: an HLS playlist or an ffconcat list (after a BOM and blank space), else null. */
function listKind(window: Buffer): string | null {
  const text = window.subarray(0, 256).toString('latin1').replace(/^\xef\xbb\xbf/, '').trimStart();
  if (/^#EXT(M3U|INF|-X-)/i.test(text)) return 'is an HLS playlist, not audio (playlists are not accepted)';
  if (/^ffconcat\b/i.test(text)) return 'is an ffconcat list, not audio (lists of files are not accepted)';
  return null;
}

const MPEG1_L3_KBPS = [0, 32, 40, 48, 56, 64, 80, 96, 112, 128, 160, 192, 224, 256, 320];
const MPEG2_L3_KBPS = [0, 8, 16, 24, 32, 40, 48, 56, 64, 80, 96, 112, 128, 144, 160];
const MPEG_RATES = [
  [11025, 12000, 8000], // MPEG 2.5
  [], // reserved
  [22050, 24000, 16000], // MPEG 2
  [44100, 48000, 32000], // MPEG 1
];
const ADTS_RATES = [96000, 88200, 64000, 48000, 44100, 32000, 24000, 22050, 16000, 12000, 11025, 8000, 7350];

/** One audio frame's header at `at`: its kind, its length in bytes and what the next frame must share. */
function frameAt(bytes: Buffer, at: number): { kind: 'mp3' | 'aac'; length: number; family: number } | null {
  if (at + 7 > bytes.length || bytes[at] !== 0xff) return null;
  const b1 = bytes[at + 1];
  const b2 = bytes[at + 2];
  if ((b1 & 0xf6) === 0xf0) {
    // ADTS: 12-bit sync, layer 00, frame length over 13 bits (header included)
    const rate = (b2 >> 2) & 0x0f;
    const length = ((bytes[at + 3] & 0x03) << 11) | (bytes[at + 4] << 3) | (bytes[at + 5] >> 5);
    if (rate >= ADTS_RATES.length || length < 7) return null;
    return { kind: 'aac', length, family: (b1 << 8) | (b2 & 0xfc) };
  }
  if ((b1 & 0xe0) !== 0xe0 || ((b1 >> 1) & 0x03) !== 0x01) return null; // 11-bit sync, Layer III
  const version = (b1 >> 3) & 0x03;
  const bitrateIndex = b2 >> 4;
  const rateIndex = (b2 >> 2) & 0x03;
  if (version === 1 || bitrateIndex === 0 || bitrateIndex === 15 || rateIndex === 3) return null;
  const kbps = (version === 3 ? MPEG1_L3_KBPS : MPEG2_L3_KBPS)[bitrateIndex];
  const rate = MPEG_RATES[version][rateIndex];
  const length = Math.floor(((version === 3 ? 144 : 72) * kbps * 1000) / rate) + ((b2 >> 1) & 0x01);
  return { kind: 'mp3', length, family: (b1 << 8) | (b2 & 0x0c) };
}

/**
 * mp3 or aac when `offset` starts a frame followed by another of the same stream (version, layer, rate), or
 * by the end of the file; null otherwise. Two frames in a row is what ffmpeg's own probes ask too.
 */
async function mpegFrames(read: ByteReader, offset: number, size: number): Promise<'mp3' | 'aac' | null> {
  const first = frameAt(await read(offset, 8), 0);
  if (!first) return null;
  const next = offset + first.length;
  if (next === size) return first.kind;
  const second = frameAt(await read(next, 8), 0);
  return second && second.kind === first.kind && second.family === first.family ? first.kind : null;
}

/** Format tags of the WAVs accepted: integer PCM, IEEE float, and WAVE_FORMAT_EXTENSIBLE holding either. */
const WAV_PCM = 0x0001;
const WAV_FLOAT = 0x0003;
const WAV_EXTENSIBLE = 0xfffe;

/**
 * A WAV is accepted when its fmt chunk is PCM or float and consistent with itself: 1 to 32 channels, a
 * rate from 1000 to 768000 Hz, a sample width the codec has, block align = channels × bytes a sample, byte
 * rate = rate × block align (a header that lies about its format is refused here, one that lies about its
 * size when its duration is compared with what decodes).
 */
function wavFormat(window: Buffer): AudioSniff {
  let fmt: WavHeader | undefined;
  for (let at = 12; at + 8 <= window.length; ) {
    const id = ascii(window, at, at + 4);
    const size = window.readUInt32LE(at + 4);
    if (id === 'fmt ') {
      if (size < 16 || at + 8 + 16 > window.length) return refuse('is damaged: its WAV header is cut short');
      const f = at + 8;
      let tag = window.readUInt16LE(f);
      const channels = window.readUInt16LE(f + 2);
      const sampleRate = window.readUInt32LE(f + 4);
      const byteRate = window.readUInt32LE(f + 8);
      const blockAlign = window.readUInt16LE(f + 12);
      const bits = window.readUInt16LE(f + 14);
      if (tag === WAV_EXTENSIBLE) {
        if (size < 40 || f + 26 > window.length) return refuse('is damaged: its WAV header is cut short');
        tag = window.readUInt16LE(f + 24); // the sub-format GUID's first two bytes
      }
      if (tag !== WAV_PCM && tag !== WAV_FLOAT) return refuse(`is a WAV of compressed or unusual audio (format tag 0x${tag.toString(16).padStart(4, '0')}); only PCM and float WAV are accepted`);
      const widths = tag === WAV_PCM ? [8, 16, 24, 32] : [32, 64];
      const problem =
        channels < 1 || channels > 32 ? `${channels} channels`
        : sampleRate < 1000 || sampleRate > 768_000 ? `a rate of ${sampleRate} Hz`
        : !widths.includes(bits) ? `${bits}-bit ${tag === WAV_PCM ? 'PCM' : 'float'} samples`
        : blockAlign !== (channels * bits) / 8 ? `frames of ${blockAlign} bytes for ${channels} × ${bits}-bit samples`
        : byteRate !== sampleRate * blockAlign ? `${byteRate} bytes a second for ${sampleRate} Hz × ${blockAlign}-byte frames`
        : null;
      if (problem) return refuse(`is damaged: its WAV header is inconsistent (${problem})`);
      fmt = { channels, sampleRate, byteRate, dataBytes: null };
    } else if (id === 'data') {
      if (!fmt) return refuse('is damaged: its WAV audio comes before its format');
      return accept('wav', { ...fmt, dataBytes: size === 0 || size === 0xffffffff ? null : size });
    }
    at += 8 + size + (size % 2);
  }
  return fmt ? accept('wav', fmt) : refuse('is damaged: its WAV header has no format chunk near its start');
}

/** A video file's demuxer: MP4 and QuickTime with an ftyp box (what every vendor delivers), else a refusal. */
export async function sniffVideoFile(path: string): Promise<{ ok: true; demuxer: 'mov' } | { ok: false; reason: string }> {
  const handle = await open(path, 'r');
  try {
    const head = Buffer.alloc(12);
    const { bytesRead } = await handle.read(head, 0, 12, 0);
    return ascii(head.subarray(0, bytesRead), 4, 8) === 'ftyp' ? { ok: true, demuxer: 'mov' } : { ok: false, reason: 'is not an MP4 video' };
  } finally {
    await handle.close();
  }
}
