import { Injectable } from '@nestjs/common';
import type { TaskTx } from '../../common/tasks/task-kind.js';
import { type LinkedMedia, MediaService } from '../../modules/media/media.service.js';
import type { DoorRendering } from '../contracts/door.js';
import { KLING_DOOR } from './kling.door.js';
import type { KlingImageStatusValue, KlingImageTaskDetailDto, KlingImageTaskDto } from './dto/kling-image-task.dto.js';
import { IMAGE_DEFINITION } from '../../modules/image/image.definition.js';
import type { ImageTask } from '../../modules/image/image-task.js';

/**
 * Kling's image task records: the query answer's `data`, and each callback's whole body. The image kind's
 * fallback rendering: a task of a door that renders none (OpenAI's Images door takes no callback) reads as Kling's.
 */
@Injectable()
export class KlingImageRecords implements DoorRendering<ImageTask> {
  readonly door = KLING_DOOR;
  readonly kind = IMAGE_DEFINITION.name;
  readonly fallback = true;

  constructor(private readonly media: MediaService) {}

  /** The records of these tasks, with fresh signed links to their images (`tx`: read in a state change's transaction). */
  async records(tasks: ImageTask[], tx?: TaskTx): Promise<KlingImageTaskDetailDto[]> {
    const mediaOf = await this.media.linkedMedia(tasks, tx);
    return tasks.map((task) => toKlingImageDetail(task, mediaOf(task)));
  }
}

/** The short record (the create answer). */
export function toKlingImageTask(task: Pick<ImageTask, 'id' | 'state' | 'externalId' | 'createdAt' | 'updatedAt'>): KlingImageTaskDto {
  return {
    task_id: task.id,
    task_status: IMAGE_DEFINITION.states[task.state] as KlingImageStatusValue,
    task_info: { external_task_id: task.externalId },
    created_at: task.createdAt.getTime(),
    updated_at: task.updatedAt.getTime(),
  };
}

function toKlingImageDetail(task: ImageTask, { media, link }: LinkedMedia): KlingImageTaskDetailDto {
  const images = media.filter((m) => m.role === 'image').map((m) => ({ index: m.index, url: link(m) }));
  const final = task.state === 'succeeded' || task.state === 'failed';
  return {
    ...toKlingImageTask(task),
    task_status_msg: task.message ?? '',
    task_result: { images, media_expired: task.mediaExpiredAt !== null },
    ...(final ? { final_unit_deduction: String(task.state === 'succeeded' ? task.credits : 0) } : {}),
  };
}
