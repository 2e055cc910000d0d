import type { Task } from '../../common/tasks/task-kind.js';
import type { ExpandRequest } from '../../vendors/contracts/expand-vendor.js';

/** An expand task's parameters document (tasks.params), as accepted: the vendor-neutral request and where its image is. */
export interface ExpandParams extends ExpandRequest {
  /** Set when the image was given as a URL (fetched when the task runs); otherwise the bytes are an input of the task. */
  image_url?: string;
  /** What a Base64 image turned out to be at acceptance. */
  image_format?: string;
  image_width?: number;
  image_height?: number;
}

/** An expand task: its result is its media (images), it stores no facts of its own. */
export type ExpandTask = Task<ExpandParams, Record<string, never>>;
