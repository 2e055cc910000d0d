import type { StepOutcome, UpstreamWatcher } from '../../../common/tasks/task-kind.js';
import type { SubmitMarks } from '../../../infra/relay/upstream-client.js';
import type { LyricsText } from '../../../vendors/contracts/lyrics-vendor.js';
import type { LyricsTask } from '../lyrics-task.js';

/** One small interface per operation: the sandbox writes lyrics itself, a relay has vendors write them. */
export interface LyricsProvider {
  step(task: LyricsTask, marks: SubmitMarks): Promise<StepOutcome<LyricsText[]>>;
  readonly watcher?: UpstreamWatcher;
}

export const LYRICS_PROVIDERS = Symbol('LYRICS_PROVIDERS');
