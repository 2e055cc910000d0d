import type { Task } from '../../common/tasks/task-kind.js';

export type KeyframePositionName = 'frame0' | 'frame1';

/** A keyframe registered as media for a generation: an image by URL, or one of the owner's earlier generations. */
export interface KeyframeParams {
  /** Its media id (media_request.start.id of an image keyframe). */
  id: string;
  position: KeyframePositionName;
  type: 'image' | 'generation';
  url?: string;
  /** For type generation: the generation it continues. */
  generation_id?: string;
}

/** A generation's parameters document (tasks.params): Luma's request, as accepted. */
export interface VideoParams {
  prompt: string;
  aspect_ratio: string;
  loop: boolean;
  enhance: boolean;
  model: string;
  resolution?: string;
  duration?: string;
  concepts?: { key: string }[];
  keyframes: KeyframeParams[];
}

/** A video generation: its result is its media (video, thumbnail), it stores no facts of its own. */
export type VideoTask = Task<VideoParams, Record<string, never>>;
