import { encodeLimitMs, type PinnedAudio } from './audio-decode.js';
import { pinnedInput, runFfmpeg } from './ffmpeg.js';

/** The lossless formats a stored clip is exported to: ffmpeg's muxer and encoder for each, and its Content-Type. */
export const PCM16_EXPORTS = {
  wav: { muxer: 'wav', codec: 'pcm_s16le', contentType: 'audio/wav' },
  flac: { muxer: 'flac', codec: 'flac', contentType: 'audio/flac' },
} as const;

export type Pcm16Export = keyof typeof PCM16_EXPORTS;

/** How long an export of a file of unknown length may take: as for an hour of audio. */
const UNKNOWN_LENGTH_S = 3600;

/**
 * Writes the first audio stream of a pinned file (its format decided from its bytes, see pinAudio) to `out`
 * as 16-bit PCM WAV or 16-bit FLAC at the file's own sample rate and channel count (no resampling, no
 * mixing, no dither: an MP3's decoded samples rounded to 16 bits, a 16-bit WAV's own samples). `out` must be
 * a regular file: ffmpeg seeks back at the end to write the sizes in the WAV header, and the sample count
 * and MD5 in FLAC's STREAMINFO (a pipe leaves them unknown). `durationS`: the file's length when known,
 * for the run's wall-clock limit. Throws FfmpegFailed, FfmpegTimedOut.
 */
export async function exportPcm16(file: string, pinned: PinnedAudio, out: string, format: Pcm16Export, durationS: number | null): Promise<void> {
  const { muxer, codec } = PCM16_EXPORTS[format];
  await runFfmpeg(
    ['-loglevel', 'error', ...pinnedInput(pinned.demuxer, file), '-map', '0:a:0', '-map_metadata', '-1', '-fflags', '+bitexact', '-sample_fmt', 's16', '-c:a', codec, '-f', muxer, '-y', `file:${out}`],
    { limitMs: encodeLimitMs(durationS ?? UNKNOWN_LENGTH_S) },
  );
}
