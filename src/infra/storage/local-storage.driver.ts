import { randomUUID } from 'node:crypto';
import { createReadStream, createWriteStream } from 'node:fs';
import { mkdir, rename, rm, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { type ByteRange, type MediaBody, MediaFile, type StorageDriver, streamOf } from './storage.js';

/** Files under DATA_DIR/media. Only instances that share that directory see them. */
export class LocalStorageDriver implements StorageDriver {
  readonly name = 'local' as const;

  constructor(private readonly root: string) {}

  async put(key: string, body: MediaBody): Promise<number> {
    const file = this.pathOf(key);
    await mkdir(path.dirname(file), { recursive: true });
    if (body instanceof MediaFile) {
      // the work directory is on the same file system by default (DATA_DIR/work): the file just moves
      const moved = await rename(body.path, file).then(
        () => true,
        (err: NodeJS.ErrnoException) => {
          if (err.code === 'EXDEV') return false;
          throw err;
        },
      );
      if (moved) return (await stat(file)).size;
    }
    const temp = `${file}.${randomUUID()}.tmp`;
    try {
      let size: number;
      if (Buffer.isBuffer(body)) {
        await writeFile(temp, body);
        size = body.length;
      } else {
        await pipeline(streamOf(body), createWriteStream(temp));
        size = (await stat(temp)).size;
      }
      await rename(temp, file); // readers never see a half-written file
      return size;
    } catch (err) {
      await rm(temp, { force: true });
      throw err;
    }
  }

  async open(key: string, range?: ByteRange): Promise<Readable | null> {
    const file = this.pathOf(key);
    const stream = createReadStream(file, range ? { start: range.start, end: range.end } : {});
    // wait for the open, so a missing file is a null here rather than an error mid-answer
    return new Promise((resolve, reject) => {
      stream.once('open', () => resolve(stream));
      stream.once('error', (err: NodeJS.ErrnoException) => (err.code === 'ENOENT' ? resolve(null) : reject(err)));
    });
  }

  async delete(key: string): Promise<void> {
    await rm(this.pathOf(key), { force: true });
  }

  private pathOf(key: string): string {
    if (!/^[A-Za-z0-9][A-Za-z0-9/_.-]*$/.test(key) || key.includes('..')) throw new Error(`invalid storage key ${key}`);
    return path.join(this.root, key);
  }
}
