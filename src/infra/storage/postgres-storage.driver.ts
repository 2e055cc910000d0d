import { Readable } from 'node:stream';
import { Injectable } from '@nestjs/common';
import { PrismaService } from '../prisma/prisma.service.js';
import { type ByteRange, bytesOf, type MediaBody, type StorageDriver } from './storage.js';

/**
 * Bytes in the media_blobs table: every instance that shares the database sees them. Made for a
 * laptop or a small deployment: a bytea is written whole, so a stream (or a file) is gathered first.
 */
@Injectable()
export class PostgresStorageDriver implements StorageDriver {
  readonly name = 'postgres' as const;

  constructor(private readonly prisma: PrismaService) {}

  async put(key: string, body: MediaBody): Promise<number> {
    const bytes = await bytesOf(body);
    const data = bytes as Uint8Array<ArrayBuffer>;
    await this.prisma.mediaBlob.upsert({ where: { key }, create: { key, bytes: data }, update: { bytes: data } });
    return bytes.length;
  }

  async open(key: string, range?: ByteRange): Promise<Readable | null> {
    // substring() of a bytea reads only the slice (the value is stored uncompressed: see the migration)
    const [row] = range
      ? await this.prisma.$queryRawUnsafe<{ bytes: Uint8Array }[]>('SELECT substring(bytes FROM $2::int FOR $3::int) AS bytes FROM media_blobs WHERE key = $1', key, range.start + 1, range.end - range.start + 1)
      : await this.prisma.$queryRawUnsafe<{ bytes: Uint8Array }[]>('SELECT bytes FROM media_blobs WHERE key = $1', key);
    return row ? Readable.from([Buffer.from(row.bytes)]) : null;
  }

  async delete(key: string): Promise<void> {
    await this.prisma.mediaBlob.deleteMany({ where: { key } });
  }
}
