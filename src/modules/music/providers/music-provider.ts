import type { StepOutcome, UpstreamWatcher } from '../../../common/tasks/task-kind.js';
import type { SubmitMarks } from '../../../infra/relay/upstream-client.js';
import type { MediaFile } from '../../../infra/storage/storage.js';
import type { WorkFiles } from '../../../infra/workdir/work-dir.service.js';
import type { MusicTask } from '../music-task.js';

/** One take a step produced: its MP3 (a work file), its duration read from it, its cover, and the upstream's id of it. */
export interface MusicTake {
  audio: MediaFile;
  durationS: number;
  cover: Buffer | null;
  upstreamId?: string | null;
}

export interface MusicContext extends SubmitMarks, WorkFiles {}

export interface MusicProvider {
  /** Both takes, in the order of the task's clip ids. */
  step(task: MusicTask, ctx: MusicContext): Promise<StepOutcome<MusicTake[]>>;
  /** How its tasks that wait on an upstream are polled (a relay). */
  readonly watcher?: UpstreamWatcher;
}

export const MUSIC_PROVIDERS = Symbol('MUSIC_PROVIDERS');
