import { Injectable } from '@nestjs/common';
import type { TaskTx } from '../../common/tasks/task-kind.js';
import { type LinkedMedia, MediaService } from '../media/media.service.js';
import type { ConceptRefDto, GenerationDetailDto, GenerationDto, GenerationStateValue, KeyframeRefDto, KeyframesRefDto, MediaRefDto } from './dto/generation.dto.js';
import { VIDEO_DEFINITION } from './video.definition.js';
import type { KeyframeParams, VideoTask } from './video-task.js';

/** Luma's generation records: what GET answers, and each callback's whole body. */
@Injectable()
export class VideoRecords {
  constructor(private readonly media: MediaService) {}

  /** The records of these generations, with fresh signed links to their assets (`tx`: read in a state change's transaction). */
  async details(tasks: VideoTask[], tx?: TaskTx): Promise<GenerationDetailDto[]> {
    const mediaOf = await this.media.linkedMedia(tasks, tx);
    return tasks.map((task) => toGenerationDetailDto(task, mediaOf(task)));
  }
}

function mediaRef(frame: KeyframeParams | undefined): MediaRefDto | null {
  if (!frame) return null;
  return frame.type === 'image' ? { id: frame.id, media_type: null, thumbnail: null, type: 'upload' } : { id: frame.generation_id!, media_type: null, thumbnail: null, type: 'generation' };
}

/** The keyframes as they were given (Luma echoes them in `request`). */
function keyframesAsGiven(all: KeyframeParams[]): KeyframesRefDto | undefined {
  // an uploaded image (another door's) has no URL to echo: media_request names it
  const keyframes = all.filter((k) => !k.upload);
  if (keyframes.length === 0) return undefined;
  const ref = (k: KeyframeParams): KeyframeRefDto => (k.type === 'image' ? { type: 'image', url: k.url! } : { type: 'generation', id: k.generation_id! });
  return Object.fromEntries(keyframes.map((k) => [k.position, ref(k)]));
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
  const start = p.keyframes.find((k) => k.position === 'frame0');
  const end = p.keyframes.find((k) => k.position === 'frame1');
  const withKeyframes = p.keyframes.length > 0;
  const keyframes = keyframesAsGiven(p.keyframes);
  return {
    id: task.id,
    generation_type: 'video',
    state: VIDEO_DEFINITION.states[task.state] as GenerationStateValue,
    model: p.model,
    created_at: task.createdAt.toISOString(),
    request: {
      prompt: p.prompt,
      aspect_ratio: p.aspect_ratio,
      enhance: p.enhance,
      request_type: withKeyframes ? 'image_to_video' : 'text_to_video',
      generation_type: 'video',
      model: p.model,
      loop: p.loop,
      ...(p.resolution ? { resolution: p.resolution } : {}),
      ...(p.duration ? { duration: p.duration } : {}),
      ...(keyframes ? { keyframes } : {}),
      ...(p.concepts ? { concepts: p.concepts as ConceptRefDto[] } : {}),
      ...(task.callbackUrl ? { callback_url: task.callbackUrl } : {}),
    },
    media_request: { end: mediaRef(end), loop: p.loop, prompt_type: withKeyframes ? 'keyframe' : 'text', start: mediaRef(start), text: p.prompt },
  };
}
