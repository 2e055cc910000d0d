import type { Task } from '../../common/tasks/task-kind.js';
import type { ImageRequest } from '../../vendors/contracts/image-request.js';

/** An input image of a task: a file sent with the request (the task's media of role `input` or `mask`, by index), or a caller's URL read when the task runs. */
export interface ImageInputParams {
  /** Set when it came as a URL (Kling's `image`); otherwise its bytes are the task's media. */
  url?: string;
  format?: string;
  width?: number;
  height?: number;
}

/** An image task's parameters document (tasks.params): the normalized request, the door it came through, and its inputs. */
export interface ImageParams extends ImageRequest {
  /** The door it came through (its name in src/doors/registry.ts), which renders it back. */
  door: string;
  /** The input images (request.images of them), in order; the mask's facts when there is one. */
  inputs: ImageInputParams[];
  mask_facts?: ImageInputParams;
  /** OpenAI's `user`, kept as given. */
  user?: string;
  /** A streaming caller's partial images per image (OpenAI's partial_images, 0-3). */
  partial_images?: number;
  /** The size the stored images are made into when none was asked (an edit keeps its first image's). */
  target_size?: string;
}

/** What a success stores beside its media: the prompt the vendor revised the caller's into, where it says. */
export interface ImageResult {
  revised_prompt?: string;
}

export type ImageTask = Task<ImageParams, ImageResult>;

/** The normalized request of a task (what vendors read), without the door's own bookkeeping. */
export function imageRequestOf(params: ImageParams): ImageRequest {
  const { door: _door, inputs: _inputs, mask_facts: _mask, user: _user, partial_images: _partials, target_size: _target, ...request } = params;
  return request;
}
