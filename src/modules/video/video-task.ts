import type { Task } from '../../common/tasks/task-kind.js';
import type { FrameFit, VideoFrame, VideoRequest } from '../../vendors/contracts/video-request.js';

export type KeyframePositionName = 'frame0' | 'frame1';
/** The media role of an image a request brought: a keyframe's position, or `ref<i>` for its i-th reference image. */
export type InputImageRole = KeyframePositionName | `ref${number}`;

/** A reference image of a generation (`VideoRequest.referenceImages`): by URL, or uploaded with the request (the task's media of role `ref<index>`). */
export interface ReferenceParams {
  id: string;
  index: number;
  url?: string;
  upload?: true;
}

/** The media role of the i-th reference image. */
export function referenceRole(index: number): InputImageRole {
  return `ref${index}`;
}

/** A keyframe registered as media for a generation: an image by URL, or one of the owner's earlier generations. */
export interface KeyframeParams {
  /** Its media id (media_request.start.id of an image keyframe). */
  id: string;
  position: KeyframePositionName;
  type: 'image' | 'generation';
  url?: string;
  /** An image uploaded with the request (the OpenAI door's input_reference file): the task's media of role `frame0`/`frame1`, no URL. */
  upload?: true;
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
  /** The caller named no model (`model` is the door's default): any configured model that makes the rest serves it. */
  any_model?: true;
  /** The caller gave no aspect ratio (`aspect_ratio` is the door's default): the vendor's default, or the first frame's shape, applies. */
  default_aspect_ratio?: true;
  /** The door it came through (absent: Luma's, as before doors were recorded). */
  door?: 'luma' | 'openai' | 'kling';
  /** Kling's fields the Kling door takes. */
  negative_prompt?: string;
  cfg_scale?: number;
  camera_control?: Record<string, unknown>;
  /** A seed, for doors that take one (the Luma door has none). */
  seed?: number;
  /** Generated sound with the video, for doors that ask for it (the Luma door has none). */
  audio?: boolean;
  /** Images the video keeps to (not frames of it): the OpenAI door's input_reference given as a reference image. */
  references?: ReferenceParams[];
  /** How a first frame is fitted to the asked ratio for a vendor that takes the frame's shape; absent: the channel's default. */
  fit?: FrameFit;
}

/**
 * The normalized request of a generation, whatever door accepted it. An uploaded frame has no URL of its own:
 * `uploadUrls` gives the one to send (a signed link to it here); without, it is empty (enough to check what
 * the request asks).
 */
export function toVideoRequest(params: VideoParams, uploadUrls: Partial<Record<InputImageRole, string>> = {}): VideoRequest {
  const frame = (position: KeyframePositionName): VideoFrame | undefined => {
    const k = params.keyframes.find((f) => f.position === position);
    if (!k) return undefined;
    if (k.type === 'generation') return { type: 'generation', generationId: k.generation_id! };
    return k.upload ? { type: 'image', url: uploadUrls[position] ?? '', hosted: true } : { type: 'image', url: k.url! };
  };
  const first = frame('frame0');
  const last = frame('frame1');
  return {
    prompt: params.prompt,
    loop: params.loop,
    ...(params.default_aspect_ratio ? {} : { aspectRatio: params.aspect_ratio }),
    ...(params.resolution ? { resolution: params.resolution } : {}),
    ...(params.duration ? { durationS: Number.parseInt(params.duration, 10) } : {}),
    ...(first ? { firstFrame: first } : {}),
    ...(last ? { lastFrame: last } : {}),
    ...(params.any_model ? {} : { model: params.model }),
    ...(params.concepts?.length ? { concepts: params.concepts.map((c) => c.key) } : {}),
    ...(params.negative_prompt !== undefined ? { negativePrompt: params.negative_prompt } : {}),
    ...(params.cfg_scale !== undefined ? { cfgScale: params.cfg_scale } : {}),
    ...(params.camera_control !== undefined ? { cameraControl: params.camera_control } : {}),
    ...(params.seed !== undefined ? { seed: params.seed } : {}),
    ...(params.audio !== undefined ? { audio: params.audio } : {}),
    ...(params.references?.length
      ? { referenceImages: params.references.map((r) => (r.upload ? { type: 'image' as const, url: uploadUrls[referenceRole(r.index)] ?? '', hosted: true as const } : { type: 'image' as const, url: r.url! })) }
      : {}),
    ...(params.fit ? { fit: params.fit } : {}),
  };
}

/** A video generation: its result is its media (video, thumbnail), it stores no facts of its own. */
export type VideoTask = Task<VideoParams, Record<string, never>>;
