import type { StepOutcome, UpstreamWatcher } from '../../../common/tasks/task-kind.js';
import type { SubmitMarks } from '../../../infra/relay/upstream-client.js';
import type { MediaFile } from '../../../infra/storage/storage.js';
import type { WorkFiles } from '../../../infra/workdir/work-dir.service.js';
import type { ExpandTask } from '../expand-task.js';
import type { ImageFacts } from '../image-rules.js';

export interface ExpandSource {
  /** A submitted image, copied into the step's work files; or the bytes fetched from the image URL. */
  image: Buffer | MediaFile;
  facts: ImageFacts;
}

export interface ExpandResultImage {
  /** A render in the step's work files (sandbox), or the bytes downloaded from the upstream (relay). */
  body: Buffer | MediaFile;
  contentType: 'image/png' | 'image/jpeg';
  width: number;
  height: number;
  /** A watermarked copy (same type and size), when the task asked for watermark_info.enabled. */
  watermark?: Buffer | MediaFile;
}

/** What a provider may ask of the kind while it works on a task. */
export interface ExpandContext extends SubmitMarks, WorkFiles {
  /** The input image, decoded and checked against the spec's rules (fetched first when given as a URL). */
  source(): Promise<ExpandSource>;
  /** The input image's bytes as submitted (a relay sends them on as Base64), without a work file where it can. */
  input(): Promise<Buffer>;
}

/** One small interface per operation: the sandbox does the work itself, a relay forwards it. */
export interface ExpandProvider {
  step(task: ExpandTask, ctx: ExpandContext): Promise<StepOutcome<ExpandResultImage[]>>;
  /** How its tasks that wait on an upstream are polled (a relay). */
  readonly watcher?: UpstreamWatcher;
}

export const EXPAND_PROVIDERS = Symbol('EXPAND_PROVIDERS');
