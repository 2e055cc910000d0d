import type { Task } from '../../common/tasks/task-kind.js';
import type { VideoFrame, VideoImage, VideoRequest } from '../../vendors/contracts/video-request.js';

/** The media role of an uploaded first (`frame0`) or last (`frame1`) frame. */
export type KeyframePositionName = 'frame0' | 'frame1';
/** The media role of an image a request brought: a frame's position, or `ref<i>` for its i-th reference image. */
export type InputImageRole = KeyframePositionName | `ref${number}`;

/** The media role of the i-th reference image. */
export function referenceRole(index: number): InputImageRole {
  return `ref${index}`;
}

/**
 * An input image as a task stores it: the caller's URL, or an image uploaded with the request (the task's
 * media of its role: `frame0`, `frame1`, `ref<i>`), whose link is made when a step sends it. `id` names it in
 * records (the media's id for an upload, one given at acceptance for a URL).
 */
export type StoredVideoImage = { type: 'image'; id: string; url: string; upload?: never } | { type: 'image'; id: string; upload: true; url?: never };
/** A first or last frame as a task stores it: an image, or the last frame of one of the owner's generations. */
export type StoredVideoFrame = StoredVideoImage | { type: 'generation'; generationId: string };

/**
 * A generation's parameters document (tasks.params): the normalized request (`VideoRequest`), in the
 * gateway's own words whatever door accepted it, its images as stored, and the door it came through (whose
 * records and callbacks render it). Doors map their bodies into it and their records out of it; vendors read
 * the request it holds (`videoRequestOf`). Rows of the Luma door's shape were rewritten by the migration
 * `20261202030000_video_params`.
 */
export interface VideoParams extends Omit<VideoRequest, 'firstFrame' | 'lastFrame' | 'referenceImages'> {
  firstFrame?: StoredVideoFrame;
  lastFrame?: StoredVideoFrame;
  referenceImages?: StoredVideoImage[];
  /** The door it came through, by its name in the door registry: the one that renders its records and callbacks. */
  door: string;
}

/** The longest prompt a door takes, in characters (a model's own limit is its spec's `maxPromptChars`). */
export const PROMPT_MAX_CHARS = 5000;

/** What a generation makes when it does not say: the shape of a video no ratio or frame decides (the sandbox's), and its length (the price's). */
export const DEFAULT_ASPECT_RATIO = '16:9';
export const DEFAULT_DURATION_S = 5;

/** The seconds of video a generation asks for (DEFAULT_DURATION_S when it does not say). */
export function durationOf(params: VideoParams): number {
  return params.durationS ?? DEFAULT_DURATION_S;
}

/** The normalized field of the image whose upload has this media role: `firstFrame`, `lastFrame`, `referenceImages[<i>]` (a door words it: TaskDoors.field). */
export function fieldOf(role: InputImageRole): string {
  return role === 'frame0' ? 'firstFrame' : role === 'frame1' ? 'lastFrame' : `referenceImages[${role.slice(3)}]`;
}

/** An image the request brought, with the media role an upload of it has. */
export interface InputImage {
  role: InputImageRole;
  image: StoredVideoFrame;
}

/** The first and last frames and the reference images, each with its role. */
export function inputImages(params: VideoParams): InputImage[] {
  return [
    ...(params.firstFrame ? [{ role: 'frame0' as const, image: params.firstFrame }] : []),
    ...(params.lastFrame ? [{ role: 'frame1' as const, image: params.lastFrame }] : []),
    ...(params.referenceImages ?? []).map((image, i) => ({ role: referenceRole(i), image })),
  ];
}

/**
 * The normalized request a generation stores, as vendors read it. `hostedUrls` names the images that are the
 * gateway's own files (hosted: a vendor that takes images inline is sent their bytes) and the URL to send for
 * each: an uploaded image's signed link here, or a sample of the service's as it was given. An uploaded image
 * has no URL of its own: without a link, it is empty (enough to check what the request asks).
 */
export function videoRequestOf(params: VideoParams, hostedUrls: Partial<Record<InputImageRole, string>> = {}): VideoRequest {
  const { door: _door, firstFrame, lastFrame, referenceImages, ...request } = params;
  const image = (stored: StoredVideoImage, role: InputImageRole): VideoImage => {
    const hosted = hostedUrls[role];
    if (hosted !== undefined || stored.upload) return { type: 'image', url: hosted ?? '', hosted: true };
    return { type: 'image', url: stored.url };
  };
  const frame = (stored: StoredVideoFrame, role: KeyframePositionName): VideoFrame => (stored.type === 'generation' ? stored : image(stored, role));
  return {
    ...request,
    ...(firstFrame ? { firstFrame: frame(firstFrame, 'frame0') } : {}),
    ...(lastFrame ? { lastFrame: frame(lastFrame, 'frame1') } : {}),
    ...(referenceImages?.length ? { referenceImages: referenceImages.map((r, i) => image(r, referenceRole(i))) } : {}),
  };
}

/** A video generation: its result is its media (video, thumbnail), it stores no facts of its own. */
/** What a video task keeps of its end: the model that made it (absent on tasks made before it was kept, and where unknown). */
export interface VideoTaskResult {
  model?: string;
}

export type VideoTask = Task<VideoParams, VideoTaskResult>;
