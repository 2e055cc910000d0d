/**
 * A video generation as every door asks for it and every vendor adapter reads it: what the caller asked,
 * in one vocabulary. A door maps its body into it (the Luma door: `toVideoRequest`); an adapter maps it
 * out into its vendor's request. A field left undefined was not asked for (the vendor's default applies).
 */
export interface VideoRequest {
  prompt: string;
  negativePrompt?: string;
  /** `<w>:<h>`, such as 16:9. */
  aspectRatio?: string;
  /** The video's height class (its shorter side): 540p, 720p, 768p, 1080p or 4k (contracts/resolution.ts). */
  resolution?: string;
  durationS?: number;
  /** The first frame: an image by URL, or the last frame of a generation the same upstream account made. */
  firstFrame?: VideoFrame;
  lastFrame?: VideoFrame;
  loop: boolean;
  seed?: number;
  /** Generated sound with the video. */
  audio?: boolean;
  /** The model's name as callers use it; undefined: any model that can do the rest. */
  model?: string;
  /** Luma's camera-motion concepts, by key. */
  concepts?: string[];
  /** Kling's prompt adherence, 0 to 1. */
  cfgScale?: number;
  /** Kling's camera movement: `{type, config?: {horizontal, vertical, pan, tilt, roll, zoom}}`. */
  cameraControl?: Record<string, unknown>;
}

export type VideoFrame = { type: 'image'; url: string } | { type: 'generation'; generationId: string };

/** What a request asks for, by the normalized field a model must honour. */
export const VIDEO_FIELDS = ['model', 'prompt', 'negativePrompt', 'aspectRatio', 'resolution', 'durationS', 'firstFrame', 'lastFrame', 'continues', 'loop', 'seed', 'audio', 'concepts', 'cfgScale', 'cameraControl'] as const;
export type VideoField = (typeof VIDEO_FIELDS)[number];

/** What one vendor model can do. A field it lacks is refused (never dropped). */
export interface VideoModelSpec {
  /** The vendor's id of the model. */
  id: string;
  /** Durations it makes, in seconds. */
  durations: readonly number[];
  /** Frame shapes it makes (`<w>:<h>`), or any; with a first frame and `shapeFromImage`, the image decides. */
  aspectRatios: readonly string[] | 'any';
  resolutions: readonly string[];
  /** Durations it makes at a resolution, where fewer than `durations` (MiniMax: 1080P is 6 s only). */
  durationsAt?: Readonly<Record<string, readonly number[]>>;
  /** The (aspect ratio, resolution) pairs it makes, when not every pair of the two lists: `16:9@720p`. */
  sizes?: readonly string[];
  /** It makes a video from a prompt alone (no first frame). */
  textToVideo: boolean;
  firstFrame: boolean;
  lastFrame: boolean;
  /** A last frame without a first one. */
  lastFrameAlone?: boolean;
  /** A frame may be an earlier generation of the same account (Luma's `{type: "generation"}`). */
  continues: boolean;
  loop: boolean;
  seed: boolean;
  audio: boolean;
  negativePrompt: boolean;
  concepts: boolean;
  /** It takes a prompt-adherence scale (Kling's cfg_scale). */
  cfgScale?: boolean;
  /** It takes a camera movement (Kling's camera_control). */
  cameraControl?: boolean;
  maxPromptChars: number;
  /** Its image-to-video takes the frame shape of the first frame (Kling): an asked aspect ratio cannot be honoured then. */
  shapeFromImage?: boolean;
  /** A last frame needs this resolution (Kling's `pro` mode). */
  lastFrameResolution?: string;
}

/** The fields of `request` this model cannot honour (empty: it can make exactly what was asked). */
export function unmetFields(spec: VideoModelSpec, request: VideoRequest): VideoField[] {
  const unmet: VideoField[] = [];
  const frames = [request.firstFrame, request.lastFrame];
  if ([...request.prompt].length > spec.maxPromptChars) unmet.push('prompt');
  if (request.negativePrompt !== undefined && !spec.negativePrompt) unmet.push('negativePrompt');
  if (request.durationS !== undefined && !spec.durations.includes(request.durationS)) unmet.push('durationS');
  if (request.resolution !== undefined && !spec.resolutions.includes(request.resolution)) unmet.push('resolution');
  else if (request.resolution !== undefined && request.durationS !== undefined && spec.durationsAt?.[request.resolution] && !spec.durationsAt[request.resolution].includes(request.durationS)) unmet.push('durationS');
  if (request.aspectRatio !== undefined) {
    const fromImage = spec.shapeFromImage && request.firstFrame !== undefined;
    if (fromImage || (spec.aspectRatios !== 'any' && !spec.aspectRatios.includes(request.aspectRatio))) unmet.push('aspectRatio');
    else if (request.resolution !== undefined && spec.sizes && !spec.sizes.includes(`${request.aspectRatio}@${request.resolution}`)) unmet.push('resolution');
  }
  if (request.firstFrame === undefined ? !spec.textToVideo : !spec.firstFrame) unmet.push('firstFrame');
  if (request.lastFrame !== undefined) {
    if (!spec.lastFrame || (request.firstFrame === undefined && !spec.lastFrameAlone)) unmet.push('lastFrame');
    else if (spec.lastFrameResolution && request.resolution !== undefined && request.resolution !== spec.lastFrameResolution) unmet.push('resolution');
  }
  if (frames.some((f) => f?.type === 'generation') && !spec.continues) unmet.push('continues');
  if (request.loop && !spec.loop) unmet.push('loop');
  if (request.seed !== undefined && !spec.seed) unmet.push('seed');
  if (request.audio && !spec.audio) unmet.push('audio');
  if (request.concepts?.length && !spec.concepts) unmet.push('concepts');
  if (request.cfgScale !== undefined && !spec.cfgScale) unmet.push('cfgScale');
  if (request.cameraControl !== undefined && !spec.cameraControl) unmet.push('cameraControl');
  return [...new Set(unmet)];
}

/** A model that can do everything a request may ask (the sandbox renders every field). */
export function everything(id: string): VideoModelSpec {
  return {
    id,
    durations: [1, 2, 3, 4, 5, 6, 7, 8, 9, 10],
    aspectRatios: 'any',
    resolutions: ['540p', '720p', '1080p', '4k'],
    textToVideo: true,
    firstFrame: true,
    lastFrame: true,
    lastFrameAlone: true,
    continues: true,
    loop: true,
    seed: true,
    audio: true,
    negativePrompt: true,
    concepts: true,
    cfgScale: true,
    cameraControl: true,
    maxPromptChars: 5000,
  };
}
