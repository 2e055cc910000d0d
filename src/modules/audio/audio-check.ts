import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { stat } from 'node:fs/promises';
import { pipeline } from 'node:stream/promises';
import { parseStream } from 'music-metadata';
import { decodeFailure, measureAudio, type PinnedAudio, pinAudio } from '../../infra/ffmpeg/audio-decode.js';
import { FfmpegFailed } from '../../infra/ffmpeg/ffmpeg.js';
import { AUDIO_FORMATS, type AudioFormatName, MediaRefused } from '../../infra/ffmpeg/media-format.js';
import type { MediaFile } from '../../infra/storage/storage.js';
import type { AudioFacts } from './providers/audio-provider.js';

/** What an uploaded file turned out to be: its format (decided from its bytes) and the length of what decodes. */
export interface CheckedAudio {
  format: AudioFormatName;
  contentType: string;
  durationS: number;
}

/** The check's verdict: the audio, or why the file is refused (a predicate: "is an HLS playlist…") and, for the log only, ffmpeg's words. */
export type AudioVerdict = { ok: true; audio: CheckedAudio } | { ok: false; reason: string; detail?: string };

/**
 * How far what a header claims may be from what decodes: 0.5 s, or 1 % of the claim when that is more.
 * Real files differ by an encoder's delay and padding (MP3 and AAC: some tens of milliseconds); a truncated
 * or lying one by far more.
 */
export const HEADER_TOLERANCE = { seconds: 0.5, fraction: 0.01 };

/** Whether a header's claimed length and the decoded length agree (see HEADER_TOLERANCE). */
export function durationsAgree(claimedS: number, decodedS: number): boolean {
  return Math.abs(claimedS - decodedS) <= Math.max(HEADER_TOLERANCE.seconds, HEADER_TOLERANCE.fraction * claimedS);
}

/** Seconds as a caller reads them, to the tenth. */
function seconds(s: number): string {
  return String(Math.round(s * 10) / 10);
}

/**
 * The upload check, for the sandbox's clips and the relay's kept copies alike: the format is decided from
 * the bytes (one of AUDIO_FORMATS: playlists, lists of files and anything else are refused), the file is
 * decoded with that format pinned, within `maxDurationS` and a wall-clock limit, and what its header
 * claims (a WAV's data size, an MP3's Xing/Info frame count, FLAC's sample count, an MP4's duration…)
 * must agree with what decodes. The duration is what decodes.
 */
export async function checkAudio(file: string, options: { maxDurationS: number; maxDurationName: string }): Promise<AudioVerdict> {
  let pinned: PinnedAudio;
  try {
    pinned = await pinAudio(file);
  } catch (err) {
    if (err instanceof MediaRefused) return { ok: false, reason: err.message };
    throw err;
  }
  let decodedS: number;
  try {
    decodedS = (await measureAudio(file, pinned, { maxS: options.maxDurationS })).durationS;
  } catch (err) {
    const reason = decodeFailure(err, pinned.format);
    if (reason === undefined) throw err;
    return { ok: false, reason, ...(err instanceof FfmpegFailed ? { detail: err.detail } : {}) };
  }
  if (decodedS > options.maxDurationS) return { ok: false, reason: `lasts more than ${options.maxDurationName} (${options.maxDurationS} s)` };
  const claimedS = await claimedDuration(file, pinned);
  if (claimedS !== null && !durationsAgree(claimedS, decodedS)) {
    return { ok: false, reason: `is damaged: its header says ${seconds(claimedS)} s, ${seconds(decodedS)} s of audio decode` };
  }
  return { ok: true, audio: { format: pinned.format, contentType: AUDIO_FORMATS[pinned.format].contentType, durationS: decodedS } };
}

/**
 * The length the file's header claims, or null when it claims none: a WAV's data chunk size over its byte
 * rate (read by the sniff; a streamed WAV's "unknown" size claims nothing); for the other formats, what
 * music-metadata reads from their headers (Xing/Info or VBRI frame counts, FLAC's STREAMINFO, an MP4's
 * movie header, an Ogg stream's last granule…). A header music-metadata cannot read claims nothing: the
 * decode alone decides.
 */
async function claimedDuration(file: string, pinned: PinnedAudio): Promise<number | null> {
  if (pinned.format === 'wav') return pinned.wav?.dataBytes != null ? pinned.wav.dataBytes / pinned.wav.byteRate : null;
  try {
    // the parser of the format the bytes were found to be (not one music-metadata picks), reading headers
    // only: what the file claims, not a second decode of it in this process
    const { format } = await parseStream(createReadStream(file), { mimeType: AUDIO_FORMATS[pinned.format].contentType, size: (await stat(file)).size }, { duration: false, skipCovers: true });
    return typeof format.duration === 'number' && Number.isFinite(format.duration) && format.duration > 0 ? format.duration : null;
  } catch {
    return null;
  }
}

/**
 * The facts of a fetched file that passes checkAudio (format, the duration that decodes, size, SHA-256,
 * and the file itself as the clip to keep), or why it does not: what the sandbox and the relay's kept copy
 * share.
 */
export async function checkedFacts(clip: MediaFile, size: number, maxDurationS: number): Promise<{ ok: true; facts: AudioFacts } | { ok: false; reason: string; detail?: string }> {
  const verdict = await checkAudio(clip.path, { maxDurationS, maxDurationName: 'AUDIO_MAX_DURATION_S' });
  if (!verdict.ok) return verdict;
  const { format, durationS, contentType } = verdict.audio;
  return { ok: true, facts: { format, duration: durationS, sizeBytes: size, sha256: await sha256Of(clip.path), clip: { body: clip, contentType } } };
}

async function sha256Of(file: string): Promise<string> {
  const hash = createHash('sha256');
  await pipeline(createReadStream(file), hash);
  return hash.digest('hex');
}
