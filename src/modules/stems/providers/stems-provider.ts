import type { StepOutcome, UpstreamWatcher } from '../../../common/tasks/task-kind.js';
import type { AudioFormatName } from '../../../infra/ffmpeg/media-format.js';
import type { SubmitMarks } from '../../../infra/relay/upstream-client.js';
import type { MediaFile } from '../../../infra/storage/storage.js';
import type { WorkFiles } from '../../../infra/workdir/work-dir.service.js';
import type { StemsTask } from '../stems-task.js';

/** One stem a step produced: its name, its audio (a work file) and format, its duration read from it. */
export interface StemTake {
  name: string;
  audio: MediaFile;
  format: AudioFormatName;
  durationS: number;
}

export interface StemsContext extends SubmitMarks, WorkFiles {
  signal?: AbortSignal;
}

export interface StemsProvider {
  /** The stems of the task's clip, in the order they are kept (each becomes a clip). */
  step(task: StemsTask, ctx: StemsContext): Promise<StepOutcome<StemTake[]>>;
  /** How its tasks that wait on an upstream are polled (a relay). */
  readonly watcher?: UpstreamWatcher;
}

export const STEMS_PROVIDERS = Symbol('STEMS_PROVIDERS');
