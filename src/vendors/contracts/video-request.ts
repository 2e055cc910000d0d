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
  /** The video's height class (its shorter side): 480p, 540p, 720p, 768p, 1080p or 4k (contracts/resolution.ts). */
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
  /**
   * Images the video keeps to (a subject, a product, a style), in the role vendors call `reference_image`
   * (Seedance's content role, Veo's `referenceImages` of type asset, Kling's `image_list`): not frames of the video.
   */
  referenceImages?: VideoImage[];
  /** How a first frame of another shape than `aspectRatio` is made to fit it, for a vendor whose video takes its frame's shape; undefined: the channel's default (FrameFit). */
  fit?: FrameFit;
}

/**
 * An image by URL. `hosted`: the URL is a signed link to the gateway's own copy (an uploaded image, a frame it
 * fitted), which an upstream outside the company's network may not reach: an adapter whose vendor takes
 * images inline sends its bytes instead (VendorCreate.frameImage, referenceImage).
 */
export type VideoImage = { type: 'image'; url: string; hosted?: true };
export type VideoFrame = VideoImage | { type: 'generation'; generationId: string };

/**
 * How the gateway fits a first frame to the asked aspect ratio before sending it to a vendor whose video
 * takes the frame's shape (`shapeFromImage`: Kling's image-to-video): `crop` its centre to the ratio, `pad`
 * it to the ratio on a blurred fill of itself, or `none` (such a vendor is then never chosen for a request
 * that asks a ratio with a first frame). Asked by the caller (`fit`), else the channel's `frame_fit`, else
 * DEFAULT_FRAME_FIT.
 */
export const FRAME_FITS = ['crop', 'pad', 'none'] as const;
export type FrameFit = (typeof FRAME_FITS)[number];
export const DEFAULT_FRAME_FIT: FrameFit = 'crop';

/** What a request asks for, by the normalized field a model must honour. */
export const VIDEO_FIELDS = ['model', 'prompt', 'negativePrompt', 'aspectRatio', 'resolution', 'durationS', 'firstFrame', 'lastFrame', 'referenceImages', 'continues', 'loop', 'seed', 'audio', 'concepts', 'cfgScale', 'cameraControl'] as const;
export type VideoField = (typeof VIDEO_FIELDS)[number];

/** What one vendor model can do. A field it lacks is refused (never dropped). */
export interface VideoModelSpec {
  /** The vendor's id of the model. */
  id: string;
  /** Durations it makes, in seconds. */
  durations: readonly number[];
  /** What it makes when a request names no duration (its API's default), where that is not the first of `durations`; stated, it is sent (sentDurationS). */
  defaultDurationS?: number;
  /** Frame shapes it makes (`<w>:<h>`), or any; with a first frame and `shapeFromImage`, the image decides. */
  aspectRatios: readonly string[] | 'any';
  resolutions: readonly string[];
  /** What it makes when a request names no resolution (its API's default), where that is not the first of `resolutions`; stated, it is sent (sentResolution). */
  defaultResolution?: string;
  /** Durations it makes at a resolution, where fewer than `durations` (Veo on the Gemini API: 1080p is 8 s only). */
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
  /** How many reference images it takes (`VideoRequest.referenceImages`); none when absent. */
  referenceImages?: number;
  /** It takes reference images together with a first or last frame (Seedance and Veo do not: one or the other). */
  referencesWithFrames?: boolean;
  /** The shorter side a frame it takes must have at least, in pixels (Kling: 300): a fitted frame is scaled up to it. */
  frameMinSide?: number;
  /** How the channel serving it fits a first frame by default (its `frame_fit`); set by the channel, never by a vendor's catalog. */
  frameFit?: FrameFit;
}

/**
 * The duration and resolution a model makes for a request: the asked ones, else its API's defaults (what a
 * request that names none is made at, and priced at): `defaultDurationS` and `defaultResolution` where the
 * spec states them, else the first listed; a default duration the made resolution does not take
 * (`durationsAt`) gives way to the first it does.
 */
export function madeDurationS(spec: Pick<VideoModelSpec, 'durations' | 'defaultDurationS' | 'durationsAt' | 'resolutions' | 'defaultResolution' | 'lastFrameResolution'>, request: Pick<VideoRequest, 'durationS' | 'resolution' | 'lastFrame'>): number {
  if (request.durationS !== undefined) return request.durationS;
  const fallback = spec.defaultDurationS ?? spec.durations[0];
  const at = spec.durationsAt?.[madeResolution(spec, request)];
  return at?.length && !at.includes(fallback) ? at[0] : fallback;
}

/** See madeDurationS. */
export function madeResolution(spec: Pick<VideoModelSpec, 'resolutions' | 'defaultResolution' | 'lastFrameResolution'>, request: Pick<VideoRequest, 'resolution' | 'lastFrame'>): string {
  // what is sent where anything is (a last frame's resolution: Kling's pro mode), else the list's first
  return sentResolution(spec, request) ?? spec.resolutions[0];
}

/**
 * The duration a vendor is sent: the asked one, else the made one where the spec states a default (a declared
 * model always does: its operator's `default_duration_s`, else its list's first), else none, and the vendor
 * makes its own default, which a catalog spec lists first. So what is made is what is priced (madeDurationS)
 * when the gateway cannot know the vendor's own default.
 */
export function sentDurationS(spec: Parameters<typeof madeDurationS>[0], request: Parameters<typeof madeDurationS>[1]): number | undefined {
  return request.durationS ?? (spec.defaultDurationS !== undefined ? madeDurationS(spec, request) : undefined);
}

/** The resolution a vendor is sent, as sentDurationS: the asked one, a last frame's (the one the model makes it at), else the spec's stated default, else none. */
export function sentResolution(spec: Pick<VideoModelSpec, 'lastFrameResolution' | 'defaultResolution'>, request: Pick<VideoRequest, 'resolution' | 'lastFrame'>): string | undefined {
  return request.resolution ?? (request.lastFrame !== undefined ? spec.lastFrameResolution : undefined) ?? spec.defaultResolution;
}

/** The fields of `request` this model cannot honour (empty: it can make exactly what was asked). */
export function unmetFields(spec: VideoModelSpec, request: VideoRequest): VideoField[] {
  const unmet: VideoField[] = [];
  const frames = [request.firstFrame, request.lastFrame];
  const references = request.referenceImages?.length ?? 0;
  if ([...request.prompt].length > spec.maxPromptChars) unmet.push('prompt');
  if (request.negativePrompt !== undefined && !spec.negativePrompt) unmet.push('negativePrompt');
  if (request.durationS !== undefined && !spec.durations.includes(request.durationS)) unmet.push('durationS');
  if (request.resolution !== undefined && !spec.resolutions.includes(request.resolution)) unmet.push('resolution');
  else if (request.resolution !== undefined && request.durationS !== undefined && spec.durationsAt?.[request.resolution] && !spec.durationsAt[request.resolution].includes(request.durationS)) unmet.push('durationS');
  if (request.aspectRatio !== undefined) {
    // a vendor that takes its frame's shape honours a ratio only when the gateway fits an image frame to it first
    const fromImage = spec.shapeFromImage && request.firstFrame !== undefined && frameFitFor(spec, request) === null;
    if (fromImage || (spec.aspectRatios !== 'any' && !spec.aspectRatios.includes(request.aspectRatio))) unmet.push('aspectRatio');
    else if (request.resolution !== undefined && spec.sizes && !spec.sizes.includes(`${request.aspectRatio}@${request.resolution}`)) unmet.push('resolution');
  }
  // a video from reference images has no first frame: the model's taking them is what it needs
  if (request.firstFrame === undefined ? !spec.textToVideo && !(references > 0 && (spec.referenceImages ?? 0) > 0) : !spec.firstFrame) unmet.push('firstFrame');
  if (request.lastFrame !== undefined) {
    if (!spec.lastFrame || (request.firstFrame === undefined && !spec.lastFrameAlone)) unmet.push('lastFrame');
    else if (spec.lastFrameResolution && request.resolution !== undefined && request.resolution !== spec.lastFrameResolution) unmet.push('resolution');
  }
  if (references > 0 && (references > (spec.referenceImages ?? 0) || (!spec.referencesWithFrames && frames.some((f) => f !== undefined)))) unmet.push('referenceImages');
  if (frames.some((f) => f?.type === 'generation') && !spec.continues) unmet.push('continues');
  if (request.loop && !spec.loop) unmet.push('loop');
  if (request.seed !== undefined && !spec.seed) unmet.push('seed');
  if (request.audio && !spec.audio) unmet.push('audio');
  if (request.concepts?.length && !spec.concepts) unmet.push('concepts');
  if (request.cfgScale !== undefined && !spec.cfgScale) unmet.push('cfgScale');
  if (request.cameraControl !== undefined && !spec.cameraControl) unmet.push('cameraControl');
  return [...new Set(unmet)];
}

/**
 * How the first frame is fitted before it is sent to this model: `crop` or `pad` when the model takes its
 * video's shape from the frame (`shapeFromImage`), the request asks a ratio and its first frame is an image
 * (an earlier generation's last frame is never refitted), and the fit in force (the request's, else the
 * channel's, else DEFAULT_FRAME_FIT) is not `none`; null: the frame is sent as it is.
 */
export function frameFitFor(spec: VideoModelSpec, request: VideoRequest): Exclude<FrameFit, 'none'> | null {
  if (!spec.shapeFromImage || request.aspectRatio === undefined || request.firstFrame?.type !== 'image') return null;
  const fit = request.fit ?? spec.frameFit ?? DEFAULT_FRAME_FIT;
  return fit === 'none' ? null : fit;
}

/** A model that can do everything a request may ask (the sandbox renders every field). */
export function everything(id: string): VideoModelSpec {
  return {
    id,
    // every duration a catalog model makes (Seedance 2.0's 15 s the longest): in the sandbox, a request any of
    // them could make is made by it, and its record names it; so every resolution and reference count below
    durations: Array.from({ length: 15 }, (_, i) => i + 1),
    // the sandbox's clip when no duration is asked (DEFAULT_DURATION_S, every door's default)
    defaultDurationS: 5,
    aspectRatios: 'any',
    // every resolution a catalog model makes (Seedance's and Wan's 480p, MiniMax's 768p), 540p first: GET /models'
    // default for it (a request asking none is rendered at about 640x360)
    resolutions: ['540p', '480p', '720p', '768p', '1080p', '4k'],
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
    // as many as any catalog model takes (Seedance 2.0's 9)
    referenceImages: 9,
    referencesWithFrames: true,
  };
}
