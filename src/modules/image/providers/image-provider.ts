import type { StepOutcome, UpstreamWatcher } from '../../../common/tasks/task-kind.js';
import type { SubmitMarks } from '../../../infra/relay/upstream-client.js';
import type { WorkFiles } from '../../../infra/workdir/work-dir.service.js';
import type { ImageInput } from '../../../vendors/contracts/image-vendor.js';
import type { ImageTask } from '../image-task.js';

/** What a provider made: the images' bytes as they came (the kind checks them and converts them into the asked size and format). */
export interface ImageOutput {
  images: Buffer[];
  revisedPrompt?: string;
}

/** What a provider may ask of the kind while it works on a task. */
export interface ImageContext extends SubmitMarks, WorkFiles {
  /** The input images (references, or the images an edit changes), read and checked. */
  inputs(): Promise<ImageInput[]>;
  mask(): Promise<ImageInput | undefined>;
  /** Keeps a partial image (shown to a caller who streams). */
  partial(index: number, image: Buffer): Promise<void>;
  signal: AbortSignal;
}

/** One small interface per operation: the sandbox renders the images itself, a relay has vendors make them. */
export interface ImageProvider {
  step(task: ImageTask, ctx: ImageContext): Promise<StepOutcome<ImageOutput>>;
  /** How its tasks that wait on an upstream are polled (a relay). */
  readonly watcher?: UpstreamWatcher;
}

export const IMAGE_PROVIDERS = Symbol('IMAGE_PROVIDERS');
