import { Injectable } from '@nestjs/common';
import type { TaskTx } from '../../common/tasks/task-kind.js';
import { AppConfig } from '../../infra/config/app-config.js';
import type { MediaRow } from '../../modules/media/media.repository.js';
import { MediaService } from '../../modules/media/media.service.js';
import type { OpenAiVideoDto } from './dto/openai-video.dto.js';
import { VIDEO_DEFINITION } from '../../modules/video/video.definition.js';
import { DEFAULT_ASPECT_RATIO, durationOf, type VideoTask } from '../../modules/video/video-task.js';
import type { DoorRendering } from '../contracts/door.js';
import { OPENAI_DOOR } from './openai.door.js';
import { COMMON_ASPECT_RATIOS, RESOLUTION_SIDES, sizeOf } from '../../vendors/contracts/resolution.js';

const STATUS = { queued: 'queued', running: 'in_progress', succeeded: 'completed', failed: 'failed' } as const;
const PROGRESS = { queued: 0, in_progress: 50, completed: 100, failed: 100 } as const;
const DAY_S = 86_400;

/**
 * OpenAI's video objects of generations, whichever door made them. The rendering of the door's own
 * generations: it takes no callback URL, so their records are read only by GET /tasks/{id}.
 */
@Injectable()
export class OpenAiVideoRecords implements DoorRendering<VideoTask> {
  readonly door = OPENAI_DOOR;
  readonly kind = VIDEO_DEFINITION.name;

  constructor(
    private readonly media: MediaService,
    private readonly config: AppConfig,
  ) {}

  /** `tx`: read in a state change's transaction. */
  async records(tasks: VideoTask[], tx?: TaskTx): Promise<OpenAiVideoDto[]> {
    const mediaOf = await this.media.linkedMedia(tasks, tx);
    return tasks.map((task) => this.toVideo(task, mediaOf(task).media));
  }

  /** The request's image by the field OpenAI's body gives it in: `input_reference` uploaded, or its `image_url`. */
  field(field: string, task: VideoTask): string {
    const image = field === 'firstFrame' ? task.params.firstFrame : field === 'referenceImages[0]' ? task.params.referenceImages?.[0] : undefined;
    if (!image) return field;
    return image.type === 'image' && image.upload ? 'input_reference' : 'input_reference.image_url';
  }

  private toVideo(task: VideoTask, media: MediaRow[]): OpenAiVideoDto {
    const p = task.params;
    const status = STATUS[task.state];
    const seconds = unix(task.finishedAt);
    const video = media.find((m) => m.role === 'video');
    return {
      id: task.id,
      object: 'video',
      model: p.model ?? task.result?.model ?? 'auto',
      status,
      progress: PROGRESS[status],
      created_at: unix(task.createdAt)!,
      completed_at: status === 'completed' ? seconds : null,
      expires_at: seconds === null ? null : seconds + this.config.resultRetentionDays * DAY_S,
      prompt: p.prompt,
      remixed_from_video_id: null,
      seconds: String(durationOf(p)),
      size: video?.width && video.height ? `${video.width}x${video.height}` : sizeOf(p.aspectRatio ?? DEFAULT_ASPECT_RATIO, p.resolution),
      error: status === 'failed' ? { code: 'generation_failed', message: task.message ?? 'the generation failed' } : null,
    };
  }
}

function unix(date: Date | null): number | null {
  return date ? Math.floor(date.getTime() / 1000) : null;
}

/** The aspect ratio and resolution class of a size `WxH` whose shorter side is a class; null when it is none. */
export function classOf(size: string): { aspectRatio: string; resolution: string } | null {
  const [w, h] = size.split('x').map(Number);
  const resolution = Object.entries(RESOLUTION_SIDES).find(([, side]) => side === Math.min(w, h))?.[0];
  if (!resolution) return null;
  const common = COMMON_ASPECT_RATIOS.find((ratio) => sizeOf(ratio, resolution) === size);
  if (common) return { aspectRatio: common, resolution };
  const divisor = gcd(w, h);
  const aspectRatio = `${w / divisor}:${h / divisor}`;
  return sizeOf(aspectRatio, resolution) === size ? { aspectRatio, resolution } : null;
}

function gcd(a: number, b: number): number {
  return b === 0 ? a : gcd(b, a % b);
}
