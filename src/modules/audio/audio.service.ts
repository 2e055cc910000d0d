import { randomUUID } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import type { Principal } from '../../common/auth/credential.js';
import type { AudioUploadResultDto, CreateAudioUploadDto } from './dto/audio-upload.dto.js';
import { AudioRepository } from './audio.repository.js';

@Injectable()
export class AudioService {
  constructor(private readonly uploads: AudioRepository) {}

  /** Registers the clip (status pending); fetching and checking it is the job's work. */
  async createUpload(principal: Principal, dto: CreateAudioUploadDto): Promise<AudioUploadResultDto> {
    const row = await this.uploads.createUpload({ id: randomUUID(), owner: principal.owner, url: dto.url, createdAt: new Date() });
    return { code: 'success', message: '', data: row.id };
  }
}
