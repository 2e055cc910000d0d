import { encodeLimitMs } from '../../infra/ffmpeg/audio-decode.js';
import { feedTo, FfmpegFailed, FfmpegTimedOut, runFfmpeg } from '../../infra/ffmpeg/ffmpeg.js';
import { bufferReader, sniffAudio } from '../../infra/ffmpeg/media-format.js';
import { UpstreamRefused } from '../../infra/relay/upstream-client.js';

/** A clip as Mureka's `POST /v1/files/upload` takes it: its bytes, a file name and a Content-Type. */
export interface MurekaFile {
  bytes: Buffer;
  filename: string;
  type: string;
}

/**
 * A clip of ours as Mureka's upload takes it: MP3 or M4A as it is (the formats its `audio` purpose takes), any
 * other format the service accepts (WAV, FLAC, Ogg, AAC, AIFF, WebM) encoded to MP3 first, its demuxer decided
 * from its bytes and pinned (as every decode here is). The clip's own samples up to the continuation point are
 * ours anyway: what Mureka hears is for it to continue from.
 */
export async function murekaFileOf(clip: { bytes: Buffer; durationS: number }): Promise<MurekaFile> {
  const sniffed = await sniffAudio(bufferReader(clip.bytes), clip.bytes.length);
  if (!sniffed.ok) throw new UpstreamRefused(`the clip to continue cannot be sent to Mureka: it ${sniffed.reason}`, 0, 'request', true);
  if (sniffed.format === 'mp3') return { bytes: clip.bytes, filename: 'clip.mp3', type: 'audio/mpeg' };
  if (sniffed.format === 'm4a') return { bytes: clip.bytes, filename: 'clip.m4a', type: 'audio/mp4' };
  const args = ['-protocol_whitelist', 'pipe', '-format_whitelist', sniffed.demuxer, '-f', sniffed.demuxer, '-i', 'pipe:0', '-vn', '-c:a', 'libmp3lame', '-b:a', '192k', '-f', 'mp3', 'pipe:1'];
  try {
    const mp3 = await runFfmpeg(args, { limitMs: encodeLimitMs(clip.durationS), feed: (stdin) => feedTo(stdin, clip.bytes), collectStdout: true });
    return { bytes: mp3, filename: 'clip.mp3', type: 'audio/mpeg' };
  } catch (err) {
    if (err instanceof FfmpegFailed || err instanceof FfmpegTimedOut) throw new UpstreamRefused(`the clip to continue could not be encoded to MP3 for Mureka: ${err.message}`, 0, 'request', true);
    throw err;
  }
}
