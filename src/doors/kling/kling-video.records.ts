import { Injectable } from '@nestjs/common';
import type { TaskTx } from '../../common/tasks/task-kind.js';
import { MediaService } from '../../modules/media/media.service.js';
import type { KlingVideoTaskDto } from './dto/kling-video.dto.js';
import { VIDEO_DEFINITION } from '../../modules/video/video.definition.js';
import { durationOf, type VideoTask } from '../../modules/video/video-task.js';
import type { DoorRendering } from '../contracts/door.js';
import { KLING_DOOR } from './kling.door.js';

const STATUS = { queued: 'submitted', running: 'processing', succeeded: 'succeed', failed: 'failed' } as const;

/** Kling's video task records of generations, whichever door made them: what its query answers and its callbacks carry. */
@Injectable()
export class KlingVideoRecords implements DoorRendering<VideoTask> {
  readonly door = KLING_DOOR;
  readonly kind = VIDEO_DEFINITION.name;

  constructor(private readonly media: MediaService) {}

  /** The request's frames by the fields Kling's body gives them in. */
  field(field: string): string {
    return field === 'firstFrame' ? 'image' : field === 'lastFrame' ? 'image_tail' : field;
  }

  /** `tx`: read in a state change's transaction (a notification). */
  async records(tasks: VideoTask[], tx?: TaskTx): Promise<KlingVideoTaskDto[]> {
    const mediaOf = await this.media.linkedMedia(tasks, tx);
    return tasks.map((task) => {
      const { media, link } = mediaOf(task);
      const video = media.find((m) => m.role === 'video');
      const succeeded = task.state === 'succeeded' && video;
      return {
        task_id: task.id,
        task_status: STATUS[task.state],
        task_status_msg: task.state === 'failed' ? (task.message ?? '') : '',
        task_info: { external_task_id: task.externalId },
        ...(succeeded ? { task_result: { videos: [{ id: video.id, url: link(video), duration: String(durationOf(task.params)) }] }, final_unit_deduction: String(task.credits ?? 0) } : {}),
        created_at: task.createdAt.getTime(),
        updated_at: task.updatedAt.getTime(),
      };
    });
  }
}
