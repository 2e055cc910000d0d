import { Injectable } from '@nestjs/common';
import { PrismaService } from '../prisma/prisma.service.js';
import type { StorageDriver } from './storage.js';

/** Bytes in the media_blobs table: every instance that shares the database sees them. */
@Injectable()
export class PostgresStorageDriver implements StorageDriver {
  readonly name = 'postgres' as const;

  constructor(private readonly prisma: PrismaService) {}

  async put(key: string, bytes: Buffer): Promise<void> {
    const data = bytes as Uint8Array<ArrayBuffer>;
    await this.prisma.mediaBlob.upsert({ where: { key }, create: { key, bytes: data }, update: { bytes: data } });
  }

  async get(key: string): Promise<Buffer | null> {
    const row = await this.prisma.mediaBlob.findUnique({ where: { key } });
    return row ? Buffer.from(row.bytes) : null;
  }

  async delete(key: string): Promise<void> {
    await this.prisma.mediaBlob.deleteMany({ where: { key } });
  }
}
