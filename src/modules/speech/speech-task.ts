import type { Task } from '../../common/tasks/task-kind.js';
import type { SpeechFormat, SpeechRequest } from '../../vendors/contracts/speech-vendor.js';

/**
 * A speech task's parameters document: the normalized request itself (SpeechRequest, the gateway's own words),
 * and the door it came through. A door maps its body into it; an adapter maps it out to its vendor.
 */
export type SpeechParams = SpeechRequest & { door: string };

/** What a success stores: the audio's format and length (its bytes are the media row `audio`). */
export interface SpeechResult {
  format: SpeechFormat;
  duration_s: number;
  /** The characters spoken (what it was priced by). */
  chars: number;
}

export type SpeechTask = Task<SpeechParams, SpeechResult>;

/** The normalized request of a stored task. */
export function speechRequestOf(params: SpeechParams): SpeechRequest {
  const { door: _door, ...request } = params;
  return request;
}

/** The media role of a task's audio. */
export const AUDIO_ROLE = 'audio';

/** The content type of each format, as OpenAI answers it. */
export const CONTENT_TYPES: Record<SpeechFormat, string> = {
  mp3: 'audio/mpeg',
  opus: 'audio/ogg',
  aac: 'audio/aac',
  flac: 'audio/flac',
  wav: 'audio/wav',
  pcm: 'audio/pcm',
};
