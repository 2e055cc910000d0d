import { randomUUID } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import type { Principal } from '../../common/auth/credential.js';
import { AppError } from '../../common/errors/app-error.js';
import { TaskEngine } from '../../common/tasks/task-engine.js';
import { TaskRepository } from '../../common/tasks/task.repository.js';
import { ClipsRepository } from '../../modules/clips/clips.repository.js';
import { CallerUrls } from '../../modules/samples/caller-urls.service.js';
import { AudioKind } from '../../modules/audio/audio.kind.js';
import { AudioRecords } from './suno-audio.records.js';
import type { AudioParams, AudioResult } from '../../modules/audio/audio-task.js';
import type { AudioUploadDetailResultDto, AudioUploadResultDto, CreateAudioUploadDto } from './dto/audio-upload.dto.js';

@Injectable()
export class AudioService {
  constructor(
    private readonly engine: TaskEngine,
    private readonly tasks: TaskRepository,
    private readonly kind: AudioKind,
    private readonly records: AudioRecords,
    private readonly callerUrls: CallerUrls,
  ) {}

  /**
   * Registers the clip (status pending) and enqueues the job that fetches and checks it. The upload is a
   * clip too, with the task's own id: music can continue it and concat join it by that id.
   */
  async createUpload(principal: Principal, dto: CreateAudioUploadDto, requestBase?: string): Promise<AudioUploadResultDto> {
    this.callerUrls.check('url', dto.url, requestBase);
    const id = randomUUID();
    const task = await this.engine.submit(this.kind, {
      id,
      owner: principal.owner,
      params: { url: dto.url },
      baseUrl: requestBase,
      details: [ClipsRepository.newRows([{ id, taskId: id, owner: principal.owner, idx: 0, type: 'upload' }])],
    });
    return { code: 'success', message: '', data: task.id };
  }

  async getUpload(principal: Principal, id: string): Promise<AudioUploadDetailResultDto> {
    const task = await this.tasks.findForOwner<AudioParams, AudioResult>(AudioKind.definition.name, principal.owner, id);
    if (!task) throw new AppError('NOT_FOUND', `No upload ${id} among yours`);
    return { code: 'success', message: '', data: (await this.records.records([task]))[0] };
  }
}
