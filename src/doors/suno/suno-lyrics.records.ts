import { Injectable } from '@nestjs/common';
import type { TaskTx } from '../../common/tasks/task-kind.js';
import { LYRICS_DEFINITION } from '../../modules/lyrics/lyrics.definition.js';
import type { LyricsTask } from '../../modules/lyrics/lyrics-task.js';
import type { DoorRendering } from '../contracts/door.js';
import type { LyricsTaskDto } from './dto/lyrics-task.dto.js';
import { progressOf, taskStatus, unixSeconds } from './suno-clip.records.js';
import { SUNO_DOOR } from './suno.door.js';

/** The lyrics' own status beside the task's, as Suno's lyrics report it. */
const LYRICS_STATUS: Record<string, string> = { SUBMITTED: 'submitted', QUEUED: 'queued', IN_PROGRESS: 'running', SUCCESS: 'complete', FAILURE: 'error' };

/**
 * A lyrics task's record as new-api answers it (GET /music-a/fetch/{id}: action LYRICS, its lyrics `{id, text,
 * title, status}` in `data`), and its callbacks' body. Where the model wrote several versions, `data` is the first
 * and `data.versions` lists them all.
 */
@Injectable()
export class SunoLyricsRecords implements DoorRendering<LyricsTask> {
  readonly door = SUNO_DOOR;
  readonly kind = LYRICS_DEFINITION.name;
  readonly fallback = true;

  records(tasks: LyricsTask[], _tx?: TaskTx, now = new Date()): Promise<LyricsTaskDto[]> {
    return Promise.resolve(tasks.map((task) => lyricsRecord(task, now)));
  }

  /** The door's names of the normalized request's fields. */
  field(field: string): string {
    return field === 'model' ? 'mv' : field;
  }
}

export function lyricsRecord(task: LyricsTask, now: Date): LyricsTaskDto {
  const status = taskStatus(task, now);
  const versions = status === 'SUCCESS' ? (task.result?.versions ?? []) : [];
  const first = versions[0];
  return {
    task_id: task.id,
    action: 'LYRICS',
    status,
    fail_reason: task.state === 'failed' ? (task.message ?? 'failed') : '',
    submit_time: unixSeconds(task.createdAt),
    start_time: task.startedAt && status !== 'QUEUED' ? unixSeconds(task.startedAt) : 0,
    finish_time: task.finishedAt ? unixSeconds(task.finishedAt) : 0,
    progress: progressOf(task, status, now),
    data: {
      id: task.id,
      text: first?.text ?? '',
      title: first?.title ?? '',
      status: LYRICS_STATUS[status],
      ...(versions.length > 1 ? { versions } : {}),
    },
  };
}
