import { Injectable } from '@nestjs/common';
import { NotificationSeries, type TaskTx } from '../../common/tasks/task-kind.js';
import { MediaService } from '../../modules/media/media.service.js';
import { WAV_DEFINITION } from '../../modules/wav/wav.definition.js';
import { WAV_ROLE, type WavTask } from '../../modules/wav/wav-task.js';
import type { DoorRendering } from '../contracts/door.js';
import type { SunoapiWavRecordDto } from './dto/sunoapi-wav.dto.js';
import { SUNOAPI_DOOR } from './sunoapi.door.js';

/** The code a failed conversion's record and callback carry: their callbacks document 200 and 500. */
const FAILED_CODE = 500;

/**
 * A WAV task in the sunoapi.org family's words: `wav/record-info`'s record (taskId, musicId, callbackUrl,
 * completeTime, response.audioWavUrl, successFlag, createTime, errorCode, errorMessage) for its GET and
 * `GET /tasks/{id}`; and their one callback, sent when it ends (none when it starts: "a single callback"):
 * `{code: 200, msg: "success", data: {audioWavUrl, task_id}}`, or `{code: 500, msg: <reason>, data: {task_id}}`.
 * The only door of WAV tasks: also the rendering of those that store no door name.
 */
@Injectable()
export class SunoapiWavRecords implements DoorRendering<WavTask> {
  readonly door = SUNOAPI_DOOR;
  readonly kind = WAV_DEFINITION.name;
  readonly fallback = true;

  constructor(private readonly media: MediaService) {}

  async records(tasks: WavTask[], tx?: TaskTx): Promise<SunoapiWavRecordDto[]> {
    const urlOf = await this.wavUrls(tasks, tx);
    return tasks.map((task) => {
      const url = urlOf(task);
      return {
        taskId: task.id,
        musicId: task.params.clip_id,
        callbackUrl: task.callbackUrl,
        completeTime: task.finishedAt ? wallTime(task.finishedAt) : null,
        response: url ? { audioWavUrl: url } : null,
        successFlag: WAV_DEFINITION.states[task.state],
        createTime: wallTime(task.createdAt),
        errorCode: task.state === 'failed' ? FAILED_CODE : null,
        errorMessage: task.state === 'failed' ? (task.message ?? 'failed') : null,
      };
    });
  }

  /** Their one callback, at the end; nothing while it is pending. */
  async callbacks(tasks: WavTask[], tx: TaskTx): Promise<unknown[]> {
    const urlOf = await this.wavUrls(tasks, tx);
    return tasks.map((task) => {
      if (task.state === 'succeeded') return { code: 200, msg: 'success', data: { audioWavUrl: urlOf(task), task_id: task.id } };
      if (task.state === 'failed') return { code: FAILED_CODE, msg: task.message ?? 'failed', data: { task_id: task.id } };
      return new NotificationSeries([]);
    });
  }

  /** How the door names a field of the request in failure words. */
  field(field: string): string {
    return FIELD_NAMES[field] ?? field;
  }

  /** Each succeeded task's WAV link ('' before, and once retention removed it). */
  private async wavUrls(tasks: WavTask[], tx?: TaskTx): Promise<(task: WavTask) => string> {
    const mediaOf = await this.media.linkedMedia(
      tasks.filter((t) => !t.mediaExpiredAt),
      tx,
    );
    return (task) => {
      if (task.mediaExpiredAt || task.state !== 'succeeded') return '';
      const { media, link } = mediaOf(task);
      const row = media.find((m) => m.role === WAV_ROLE && m.index === 0);
      return row ? link(row) : '';
    };
  }
}

const FIELD_NAMES: Record<string, string> = { music_task_id: 'taskId', clip_id: 'audioId' };

/** "YYYY-MM-DD HH:mm:ss", UTC, as their records write times. */
function wallTime(at: Date): string {
  return at.toISOString().slice(0, 19).replace('T', ' ');
}
