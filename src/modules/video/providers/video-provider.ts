import type { StepOutcome, UpstreamWatcher } from '../../../common/tasks/task-kind.js';
import type { SubmitMarks } from '../../../infra/relay/upstream-client.js';
import type { MediaFile } from '../../../infra/storage/storage.js';
import type { WorkFiles } from '../../../infra/workdir/work-dir.service.js';
import type { InputImageRole, KeyframePositionName, VideoTask } from '../video-task.js';

export interface VideoResult {
  /** The MP4, in the step's work files: rendered or downloaded there, stored from there as a stream. */
  video: MediaFile;
  /** A JPEG or PNG still of the video. */
  thumbnail: Buffer;
  thumbnailType: 'image/jpeg' | 'image/png';
  width: number;
  height: number;
  /** The name of the model that made it, where the step knows it (a channel's name for it; `sandbox` in the sandbox when none was named). */
  model?: string;
}


export interface VideoContext extends SubmitMarks, WorkFiles {
  /** The keyframe as an image file: fetched from its URL, or the last frame of the named generation. */
  keyframeImage(position: KeyframePositionName): Promise<Buffer | undefined>;
  /** The upstream's id of a generation named as a keyframe, and the channel that holds it (relay); undefined if it never went upstream. */
  upstreamOf(generationId: string): Promise<{ upstreamId: string; channelId: string | null } | undefined>;
  /** The i-th reference image as an image file, fetched from its URL or read from its upload. */
  referenceImage(index: number): Promise<Buffer | undefined>;
  /** A link an upstream can fetch an uploaded keyframe or reference image at (signed, on the task's base URL). */
  uploadUrl(role: InputImageRole): Promise<string | undefined>;
  /**
   * The first frame fitted to `ratio` (frame-fit.ts), kept as the task's media of role `fit0` (replaced when a
   * step runs again) and linked for the upstream to fetch; its bytes for vendors that take images inline.
   * Undefined when the frame is at the ratio already (it is sent as it is).
   */
  fittedFrame(fit: 'crop' | 'pad', ratio: string, minSide?: number): Promise<{ url: string; bytes: Buffer } | undefined>;
  /** A field of the request (`firstFrame`, `referenceImages[0]`…) as the door the task came through names it, for failure words. */
  fieldName(field: string): string;
}

export interface VideoProvider {
  step(generation: VideoTask, ctx: VideoContext): Promise<StepOutcome<VideoResult>>;
  /** How its tasks that wait on an upstream are polled (a relay). */
  readonly watcher?: UpstreamWatcher;
}

export const VIDEO_PROVIDERS = Symbol('VIDEO_PROVIDERS');
