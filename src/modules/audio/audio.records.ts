import { Injectable } from '@nestjs/common';
import type { TaskTx } from '../../common/tasks/task-kind.js';
import { MediaService } from '../media/media.service.js';
import type { AudioUploadDetailDto } from './dto/audio-upload.dto.js';
import { AUDIO_DEFINITION } from './audio.definition.js';
import type { AudioTask } from './audio-task.js';

/** An upload's record: GET /music-a/uploads/{id} answers it as `data`. */
@Injectable()
export class AudioRecords {
  constructor(private readonly media: MediaService) {}

  /** The records of these uploads, with a fresh signed link to each kept clip (`tx`: read in a state change's transaction). */
  async details(tasks: AudioTask[], tx?: TaskTx): Promise<AudioUploadDetailDto[]> {
    const mediaOf = await this.media.linkedMedia(tasks.filter((t) => !t.mediaExpiredAt), tx);
    return tasks.map((task) => {
      const { media, link } = mediaOf(task);
      const clip = media.find((m) => m.role === 'clip');
      return toDetail(task, clip ? link(clip) : null);
    });
  }
}

function toDetail(task: AudioTask, clipUrl: string | null): AudioUploadDetailDto {
  return {
    id: task.id,
    url: task.params.url,
    status: AUDIO_DEFINITION.states[task.state],
    format: task.result?.format ?? null,
    duration: task.result?.duration ?? null,
    size_bytes: task.result?.size_bytes ?? null,
    sha256: task.result?.sha256 ?? null,
    clip_url: clipUrl,
    error: task.message,
    created_at: task.createdAt.toISOString(),
  };
}
