import { randomUUID } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import { isUUID } from 'class-validator';
import type { Principal } from '../../common/auth/credential.js';
import { AppError } from '../../common/errors/app-error.js';
import { AppConfig } from '../../infra/config/app-config.js';
import { QueueService } from '../../infra/queue/queue.service.js';
import { LimitsService } from '../limits/limits.service.js';
import { MediaService } from '../media/media.service.js';
import { AudioRepository, type AudioUploadRow } from './audio.repository.js';
import type { AudioUploadDetailDto, AudioUploadDetailResultDto, AudioUploadResultDto, CreateAudioUploadDto } from './dto/audio-upload.dto.js';

@Injectable()
export class AudioService {
  constructor(
    private readonly uploads: AudioRepository,
    private readonly config: AppConfig,
    private readonly queue: QueueService,
    private readonly limits: LimitsService,
    private readonly media: MediaService,
  ) {}

  /** Registers the clip (status pending) and enqueues the job that fetches and checks it. */
  async createUpload(principal: Principal, dto: CreateAudioUploadDto, requestBase?: string): Promise<AudioUploadResultDto> {
    const createdAt = new Date();
    const jobId = randomUUID();
    const price = this.limits.price('audio', {});
    const id = randomUUID();
    const upload = { id, jobId, owner: principal.owner, ...price, url: dto.url, baseUrl: requestBase ?? null, createdAt, deadlineAt: new Date(createdAt.getTime() + this.config.taskTimeoutS.audio * 1000) };
    const row = await this.limits.admit(principal.owner, 'audio', price, (admission) => this.uploads.createUpload(upload, admission, QueueService.jobSql('audio.run', jobId, { uploadId: id })));
    this.queue.jobsAdded('audio.run');
    return { code: 'success', message: '', data: row.id };
  }

  async getUpload(principal: Principal, id: string): Promise<AudioUploadDetailResultDto> {
    const row = isUUID(id) ? await this.uploads.findForOwner(principal.owner, id) : null;
    if (!row) throw new AppError('NOT_FOUND', `No upload ${id} among yours`);
    const clip = row.status === 'ready' && !row.mediaExpiredAt ? await this.media.findForTask(row.id, 'clip') : null;
    return { code: 'success', message: '', data: toDetail(row, clip ? this.media.signedUrl(clip, this.media.linkBase(row.baseUrl)) : null) };
  }
}

function toDetail(row: AudioUploadRow, clipUrl: string | null): AudioUploadDetailDto {
  return {
    id: row.id,
    url: row.url,
    status: row.status,
    format: row.format,
    duration: row.duration,
    size_bytes: row.sizeBytes === null ? null : Number(row.sizeBytes),
    sha256: row.sha256,
    clip_url: clipUrl,
    error: row.error,
    created_at: row.createdAt.toISOString(),
  };
}
