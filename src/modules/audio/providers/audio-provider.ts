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

export interface AudioProvider {
  step(upload: AudioTask, ctx: AudioContext): Promise<StepOutcome<AudioFacts>>;
  /** How its tasks that wait on an upstream are polled (a relay). */
  readonly watcher?: UpstreamWatcher;
}

export const AUDIO_PROVIDERS = Symbol('AUDIO_PROVIDERS');
