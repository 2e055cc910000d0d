import { Injectable } from '@nestjs/common';
import type { AudioUpload } from '../../generated/prisma/client.js';
import { PrismaService } from '../../infra/prisma/prisma.service.js';

export type AudioUploadRow = AudioUpload;

@Injectable()
export class AudioRepository {
  constructor(private readonly prisma: PrismaService) {}

  createUpload(upload: Pick<AudioUpload, 'id' | 'owner' | 'url' | 'createdAt'>): Promise<AudioUploadRow> {
    return this.prisma.audioUpload.create({ data: { ...upload, updatedAt: upload.createdAt } });
  }
}
