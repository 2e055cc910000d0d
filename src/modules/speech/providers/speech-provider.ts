import type { StepOutcome, UpstreamWatcher } from '../../../common/tasks/task-kind.js';
import type { SubmitMarks } from '../../../infra/relay/upstream-client.js';
import type { WorkFiles } from '../../../infra/workdir/work-dir.service.js';
import type { SpeechAudio } from '../../../vendors/contracts/speech-vendor.js';
import type { SpeechTask } from '../speech-task.js';

/** What a provider may ask of the kind while it works on a task. */
export interface SpeechContext extends SubmitMarks, WorkFiles {
  signal: AbortSignal;
}

/** One small interface per operation: the sandbox speaks itself, a relay has vendors speak (the kind converts what either makes into the asked format). */
export interface SpeechProvider {
  step(task: SpeechTask, ctx: SpeechContext): Promise<StepOutcome<SpeechAudio>>;
  readonly watcher?: UpstreamWatcher;
}

export const SPEECH_PROVIDERS = Symbol('SPEECH_PROVIDERS');
