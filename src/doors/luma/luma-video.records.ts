import { Injectable } from '@nestjs/common';
import type { TaskTx } from '../../common/tasks/task-kind.js';
import { type LinkedMedia, MediaService } from '../../modules/media/media.service.js';
import type { ConceptRefDto, GenerationDetailDto, GenerationDto, GenerationStateValue, KeyframeRefDto, KeyframesRefDto, MediaRefDto } from './dto/generation.dto.js';
import { VIDEO_DEFINITION } from '../../modules/video/video.definition.js';
import type { DoorRendering } from '../contracts/door.js';
import { LUMA_DOOR } from './luma.door.js';
import { DEFAULT_ASPECT_RATIO, type StoredVideoFrame, type VideoParams, type VideoTask } from '../../modules/video/video-task.js';

/**
 * Luma's generation records: what GET answers, and each callback's whole body. The video kind's fallback
 * rendering: a generation that stores no door reads as Luma's (the door of the kind's first API).
 */
@Injectable()
export class LumaVideoRecords implements DoorRendering<VideoTask> {
  readonly door = LUMA_DOOR;
  readonly kind = VIDEO_DEFINITION.name;
  readonly fallback = true;

  constructor(private readonly media: MediaService) {}

  /** The records of these generations, with fresh signed links to their assets (`tx`: read in a state change's transaction). */
  async records(tasks: VideoTask[], tx?: TaskTx): Promise<GenerationDetailDto[]> {
    const mediaOf = await this.media.linkedMedia(tasks, tx);
    return tasks.map((task) => toGenerationDetailDto(task, mediaOf(task)));
  }

  /** The request's images by the fields Luma's body gives them in: `keyframes.frame0.url`, or `keyframes.frame0` naming a generation. */
  field(field: string, task: VideoTask): string {
    const frame = field === 'firstFrame' ? 'frame0' : field === 'lastFrame' ? 'frame1' : undefined;
    if (!frame) return field;
    return task.params[field as 'firstFrame' | 'lastFrame']?.type === 'generation' ? `keyframes.${frame}` : `keyframes.${frame}.url`;
  }
}
/** What Luma's record shows as the model of a generation that named none (any configured model that makes the rest serves it). */
export const DEFAULT_VIDEO_MODEL = 'ray-2';

function mediaRef(frame: StoredVideoFrame | undefined): MediaRefDto | null {
  if (!frame) return null;
  return frame.type === 'image' ? { id: frame.id, media_type: null, thumbnail: null, type: 'upload' } : { id: frame.generationId, media_type: null, thumbnail: null, type: 'generation' };
}

/** The keyframes as they were given (Luma echoes them in `request`). */
function keyframesAsGiven(p: VideoParams): KeyframesRefDto | undefined {
  // an uploaded image (another door's) has no URL to echo: media_request names it
  const ref = (k: StoredVideoFrame): KeyframeRefDto => (k.type === 'image' ? { type: 'image', url: k.url! } : { type: 'generation', id: k.generationId });
  const keyframes = (
    [
      ['frame0', p.firstFrame],
      ['frame1', p.lastFrame],
    ] as const
  ).filter((k): k is readonly ['frame0' | 'frame1', StoredVideoFrame] => k[1] !== undefined && !(k[1].type === 'image' && k[1].upload));
  return keyframes.length ? Object.fromEntries(keyframes.map(([position, k]) => [position, ref(k)])) : undefined;
}

/** As Luma, what a generation does not have is left out: failure_reason unless it failed, assets unless it completed. */
function toGenerationDetailDto(task: VideoTask, { media, link: urlOf }: LinkedMedia): GenerationDetailDto {
  const video = media.find((m) => m.role === 'video');
  const image = media.find((m) => m.role === 'thumbnail');
  return {
    ...toGenerationDto(task),
    ...(task.state === 'failed' && task.message ? { failure_reason: task.message } : {}),
    ...(task.state === 'succeeded' && video ? { assets: { video: urlOf(video), ...(image ? { image: urlOf(image) } : {}) } } : {}),
    media_expired: task.mediaExpiredAt !== null,
  };
}

/** The generation record: the spec's fields, and Luma's generation_type, model and request parameters. */
export function toGenerationDto(task: VideoTask): GenerationDto {
  const p = task.params;
  const withKeyframes = p.firstFrame !== undefined || p.lastFrame !== undefined;
  const keyframes = keyframesAsGiven(p);
  // the request echoes the model asked (Luma's own default when none was); the generation, the one that made it once it has ended
  const model = p.model ?? DEFAULT_VIDEO_MODEL;
  return {
    id: task.id,
    generation_type: 'video',
    state: VIDEO_DEFINITION.states[task.state] as GenerationStateValue,
    model: p.model ?? task.result?.model ?? DEFAULT_VIDEO_MODEL,
    created_at: task.createdAt.toISOString(),
    request: {
      prompt: p.prompt,
      aspect_ratio: p.aspectRatio ?? DEFAULT_ASPECT_RATIO,
      // Luma's door asks its upstream to enhance the prompt; the others' generations are sent as written
      enhance: p.door === LUMA_DOOR,
      request_type: withKeyframes ? 'image_to_video' : 'text_to_video',
      generation_type: 'video',
      model,
      loop: p.loop,
      ...(p.resolution ? { resolution: p.resolution } : {}),
      ...(p.durationS !== undefined ? { duration: `${p.durationS}s` } : {}),
      ...(keyframes ? { keyframes } : {}),
      ...(p.concepts ? { concepts: p.concepts.map((key): ConceptRefDto => ({ key })) } : {}),
      ...(task.callbackUrl ? { callback_url: task.callbackUrl } : {}),
    },
    media_request: { end: mediaRef(p.lastFrame), loop: p.loop, prompt_type: withKeyframes ? 'keyframe' : 'text', start: mediaRef(p.firstFrame), text: p.prompt },
  };
}
