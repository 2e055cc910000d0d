import { Injectable } from '@nestjs/common';
import type { TaskTx } from '../../common/tasks/task-kind.js';
import { MediaService } from '../media/media.service.js';
import type { KlingVideoTaskDto } from './dto/kling-video.dto.js';
import { durationOf, type VideoTask } from './video-task.js';

/** The Kling door's name, as its generations store it (`params.door`). */
export const KLING_DOOR = 'kling';

const STATUS = { queued: 'submitted', running: 'processing', succeeded: 'succeed', failed: 'failed' } as const;

/** Kling's video task records of generations, whichever door made them: what its query answers and its callbacks carry. */
@Injectable()
export class KlingVideoRecords {
  constructor(private readonly media: MediaService) {}

  /** `tx`: read in a state change's transaction (a notification). */
  async details(tasks: VideoTask[], tx?: TaskTx): Promise<KlingVideoTaskDto[]> {
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
