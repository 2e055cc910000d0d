import { Injectable } from '@nestjs/common';
import type { TaskTx } from '../../common/tasks/task-kind.js';
import { type LinkedMedia, MediaService } from '../../modules/media/media.service.js';
import type { DoorRendering } from '../contracts/door.js';
import { KLING_DOOR } from './kling.door.js';
import type { ExpandTaskDetailDto, ExpandTaskDto, ExpandTaskStatusValue } from './dto/expand-task.dto.js';
import { EXPAND_DEFINITION } from '../../modules/expand/expand.definition.js';
import type { ExpandTask } from '../../modules/expand/expand-task.js';

/** Kling's task records of expand tasks: the query answer's `data`, and each callback's whole body. */
@Injectable()
export class ExpandRecords implements DoorRendering<ExpandTask> {
  readonly door = KLING_DOOR;
  readonly kind = EXPAND_DEFINITION.name;
  /** Expand tasks store no door: Kling's is their only one. */
  readonly fallback = true;

  constructor(private readonly media: MediaService) {}

  /** The records of these tasks, with fresh signed links to their result images (`tx`: read in a state change's transaction). */
  async records(tasks: ExpandTask[], tx?: TaskTx): Promise<ExpandTaskDetailDto[]> {
    const mediaOf = await this.media.linkedMedia(tasks, tx);
    return tasks.map((task) => toTaskDetailDto(task, mediaOf(task)));
  }
}

/** The short record (the create answer). */
export function toTaskDto(task: Pick<ExpandTask, 'id' | 'state' | 'externalId' | 'createdAt' | 'updatedAt'>): ExpandTaskDto {
  return {
    task_id: task.id,
    task_status: EXPAND_DEFINITION.states[task.state] as ExpandTaskStatusValue,
    task_info: { external_task_id: task.externalId },
    created_at: task.createdAt.getTime(),
    updated_at: task.updatedAt.getTime(),
  };
}

function toTaskDetailDto(task: ExpandTask, { media, link: urlOf }: LinkedMedia): ExpandTaskDetailDto {
  const { task_id, task_status, task_info, created_at, updated_at } = toTaskDto(task);
  const watermarks = new Map(media.filter((m) => m.role === 'watermark').map((m) => [m.index, m]));
  const images = media
    .filter((m) => m.role === 'image')
    .map((m) => {
      const watermark = watermarks.get(m.index);
      return { index: m.index, url: urlOf(m), ...(watermark ? { watermark_url: urlOf(watermark) } : {}) };
    });
  const final = task.state === 'succeeded' || task.state === 'failed';
  return {
    task_id,
    task_status,
    task_status_msg: task.message ?? '',
    task_info,
    watermark_info: { enabled: task.params.watermark },
    task_result: { images, media_expired: task.mediaExpiredAt !== null },
    created_at,
    updated_at,
    ...(final ? { final_unit_deduction: String(task.state === 'succeeded' ? task.credits : 0) } : {}),
  };
}
