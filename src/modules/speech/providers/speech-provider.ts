import type { StepOutcome, UpstreamWatcher } from '../../../common/tasks/task-kind.js';
import type { SubmitMarks } from '../../../infra/relay/upstream-client.js';
import type { WorkFiles } from '../../../infra/workdir/work-dir.service.js';
import type { FinishedSpeech } from '../speech-audio.js';
import type { SpeechTask } from '../speech-task.js';

/** What a provider may ask of the kind while it works on a task. */
export interface SpeechContext extends SubmitMarks, WorkFiles {
  signal: AbortSignal;
}

/**
 * One small interface per operation: the sandbox speaks itself, a relay has vendors speak; each answers the
 * audio finished in the asked format (finishSpeech), so that a vendor's audio that does not decode is that
 * channel's failed generation, which fails over, not the task's end.
 */
export interface SpeechProvider {
  step(task: SpeechTask, ctx: SpeechContext): Promise<StepOutcome<FinishedSpeech>>;
  readonly watcher?: UpstreamWatcher;
}

export const SPEECH_PROVIDERS = Symbol('SPEECH_PROVIDERS');
