import type { Task } from '../../common/tasks/task-kind.js';

/** An expand task's parameters document (tasks.params), as accepted. */
export interface ExpandParams {
  /** Set when the image was given as a URL (fetched when the task runs); otherwise the bytes are an input of the task. */
  image_url?: string;
  /** What a Base64 image turned out to be at acceptance. */
  image_format?: string;
  image_width?: number;
  image_height?: number;
  up_ratio: number;
  bottom_ratio: number;
  left_ratio: number;
  right_ratio: number;
  prompt?: string;
  n: number;
  /** watermark_info.enabled: each result also has a watermarked copy (watermark_url). */
  watermark: boolean;
}

/** An expand task: its result is its media (images), it stores no facts of its own. */
export type ExpandTask = Task<ExpandParams, Record<string, never>>;
