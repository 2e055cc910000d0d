import { Injectable } from '@nestjs/common';
import type { TaskTx } from '../../common/tasks/task-kind.js';
import { MediaService } from '../../modules/media/media.service.js';
import type { AudioUploadDetailDto } from './dto/audio-upload.dto.js';
import { AUDIO_DEFINITION } from '../../modules/audio/audio.definition.js';
import type { AudioTask } from '../../modules/audio/audio-task.js';
import type { DoorRendering } from '../contracts/door.js';
import { SUNO_DOOR } from './suno.door.js';

/** An upload's record: GET /music-a/uploads/{id} answers it as `data`; the audio kind's one rendering. */
@Injectable()
export class AudioRecords implements DoorRendering<AudioTask> {
  readonly door = SUNO_DOOR;
  readonly kind = AUDIO_DEFINITION.name;
  readonly fallback = true;

  constructor(private readonly media: MediaService) {}

  /** The records of these uploads, with a fresh signed link to each kept clip (`tx`: read in a state change's transaction). */
  async records(tasks: AudioTask[], tx?: TaskTx): Promise<AudioUploadDetailDto[]> {
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
