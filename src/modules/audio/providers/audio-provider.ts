import type { StepOutcome, UpstreamWatcher } from '../../../common/tasks/task-kind.js';
import type { SubmitMarks } from '../../../infra/relay/upstream-client.js';
import type { MediaFile } from '../../../infra/storage/storage.js';
import type { WorkFiles } from '../../../infra/workdir/work-dir.service.js';
import type { AudioTask } from '../audio-task.js';

/** What the clip turned out to be. */
export interface AudioFacts {
  format: string;
  duration: number;
  sizeBytes: number;
  sha256: string;
  /** The clip itself, to keep in the media store (a provider that fetched it); its Content-Type. */
  clip?: { body: Buffer | MediaFile; contentType: string };
}

export interface AudioContext extends SubmitMarks, WorkFiles {}

/** The Content-Type a kept clip is served with, by format name. */
const CONTENT_TYPES: Record<string, string> = { mp3: 'audio/mpeg', wav: 'audio/wav', ogg: 'audio/ogg', opus: 'audio/ogg', m4a: 'audio/mp4', webm: 'audio/webm', flac: 'audio/flac', aac: 'audio/aac' };

export function clipContentType(format: string): string {
  return CONTENT_TYPES[format] ?? 'application/octet-stream';
}

export interface AudioProvider {
  step(upload: AudioTask, ctx: AudioContext): Promise<StepOutcome<AudioFacts>>;
  /** How its tasks that wait on an upstream are polled (a relay). */
  readonly watcher?: UpstreamWatcher;
}

export const AUDIO_PROVIDERS = Symbol('AUDIO_PROVIDERS');
