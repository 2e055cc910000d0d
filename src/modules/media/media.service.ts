import { createHmac, randomUUID, timingSafeEqual } from 'node:crypto';
import { Injectable, Logger, type OnModuleInit, StreamableFile } from '@nestjs/common';
import { HttpAdapterHost } from '@nestjs/core';
import { AppError } from '../../common/errors/app-error.js';
import type { Prisma } from '../../generated/prisma/client.js';
import { AppConfig } from '../../infra/config/app-config.js';
import { QueueService } from '../../infra/queue/queue.service.js';
import { StorageService } from '../../infra/storage/storage.service.js';
import { type MediaRow, MediaRepository } from './media.repository.js';

/** Deletes the media of finished tasks older than the cutoff and marks them expired; returns how many tasks. */
export type RetentionHandler = (cutoff: Date) => Promise<number>;

export interface StoreMedia {
  owner: string;
  taskId: string;
  role: 'image' | 'watermark' | 'video' | 'thumbnail';
  index: number;
  bytes: Buffer;
  contentType: string;
  width?: number | null;
  height?: number | null;
}

const EXTENSIONS: Record<string, string> = { 'image/png': 'png', 'image/jpeg': 'jpg', 'video/mp4': 'mp4' };

/**
 * Result files: stored through the storage driver, served at /media/{id} by URLs signed with an
 * expiry (RESULT_URL_TTL_S), so they open in a browser or another service without the API key.
 */
@Injectable()
export class MediaService implements OnModuleInit {
  private readonly logger = new Logger(MediaService.name);
  private signingKey?: Buffer;
  private readonly retention: RetentionHandler[] = [];

  constructor(
    private readonly media: MediaRepository,
    private readonly storage: StorageService,
    private readonly config: AppConfig,
    private readonly queue: QueueService,
    private readonly http: HttpAdapterHost,
  ) {}

  async onModuleInit(): Promise<void> {
    this.signingKey = Buffer.from(await this.media.findOrCreateSecret('media_url_signing_key'), 'base64url');
    if (this.config.runsWorkers) {
      await this.queue.work('media.retention', 1, () => this.runRetention().then(() => undefined));
      await this.queue.schedule('media.retention', '17 * * * *');
    }
  }

  /** Each task module registers how to expire its media. */
  registerRetention(handler: RetentionHandler): void {
    this.retention.push(handler);
  }

  /** Deletes media of tasks finished more than RESULT_RETENTION_DAYS ago (the hourly `media.retention` job). */
  async runRetention(now = new Date()): Promise<number> {
    const cutoff = new Date(now.getTime() - this.config.resultRetentionDays * 24 * 3600 * 1000);
    let expired = 0;
    for (const handler of this.retention) expired += await handler(cutoff);
    if (expired) this.logger.log(`media of ${expired} task(s) expired (older than ${this.config.resultRetentionDays} days)`);
    return expired;
  }

  async store(input: StoreMedia): Promise<MediaRow> {
    const driver = this.storage.current;
    const storageKey = `${input.taskId}/${input.role}-${input.index}.${EXTENSIONS[input.contentType] ?? 'bin'}`;
    await driver.put(storageKey, input.bytes);
    return this.media.saveMedia({
      id: randomUUID(),
      owner: input.owner,
      taskId: input.taskId,
      role: input.role,
      index: input.index,
      contentType: input.contentType,
      sizeBytes: input.bytes.length,
      width: input.width ?? null,
      height: input.height ?? null,
      driver: driver.name,
      storageKey,
    });
  }

  /** `tx`: read inside a transaction (a status change building its notification). */
  listForTasks(taskIds: string[], tx?: Prisma.TransactionClient): Promise<MediaRow[]> {
    return taskIds.length ? this.media.listForTasks(taskIds, tx) : Promise.resolve([]);
  }

  /** Removes the files of these tasks (deleted tasks, expired media). */
  async deleteForTasks(taskIds: string[]): Promise<void> {
    if (taskIds.length === 0) return;
    for (const row of await this.media.deleteForTasks(taskIds)) {
      await this.storage.driver(row.driver).delete(row.storageKey).catch((err: unknown) => this.logger.warn(`could not delete ${row.storageKey}: ${String(err)}`));
    }
  }

  /** Reads a stored file (for the service's own use, such as continuing from a generation). */
  async readBytes(row: MediaRow): Promise<Buffer | null> {
    return this.storage.driver(row.driver).get(row.storageKey);
  }

  /**
   * The base of a task's result links, the same in every answer and callback: PUBLIC_BASE_URL when set,
   * else the base of the request that created the task (stored with it). Only a task created without a
   * Host header has neither; its links use the address this process listens on.
   */
  linkBase(taskBase: string | null): string {
    if (this.config.publicBaseUrl ?? taskBase) return (this.config.publicBaseUrl ?? taskBase)!;
    const address = this.http.httpAdapter?.getHttpServer()?.address() as { port?: number } | null | undefined;
    return `http://localhost:${address?.port ?? this.config.port}`;
  }

  signedUrl(row: MediaRow, base: string): string {
    const expires = Math.floor(Date.now() / 1000) + this.config.resultUrlTtlS;
    return `${base}/media/${row.id}?expires=${expires}&signature=${this.sign(row.id, expires)}`;
  }

  /** Checks the link's signature and expiry, then reads the file. */
  async open(id: string, expires: string | undefined, signature: string | undefined): Promise<{ row: MediaRow; bytes: Buffer }> {
    const exp = Number(expires);
    const expected = Number.isInteger(exp) ? Buffer.from(this.sign(id, exp)) : Buffer.alloc(0);
    const given = Buffer.from(String(signature ?? ''));
    if (expected.length === 0 || given.length !== expected.length || !timingSafeEqual(given, expected)) {
      throw new AppError('FORBIDDEN', 'This media link is not valid: its signature does not match');
    }
    if (exp * 1000 < Date.now()) {
      throw new AppError('FORBIDDEN', 'This media link has expired; read the task again for a fresh link');
    }
    const row = await this.media.findById(id);
    const bytes = row ? await this.readBytes(row) : null;
    if (!row || !bytes) {
      throw new AppError('NOT_FOUND', 'This file is no longer available: it was deleted or has expired (RESULT_RETENTION_DAYS)');
    }
    return { row, bytes };
  }

  async download(id: string, expires: string | undefined, signature: string | undefined): Promise<StreamableFile> {
    const { row, bytes } = await this.open(id, expires, signature);
    const name = row.storageKey.split('/').pop();
    return new StreamableFile(bytes, { type: row.contentType, length: bytes.length, disposition: `inline; filename="${name}"` });
  }

  private sign(id: string, expires: number): string {
    return createHmac('sha256', this.signingKey!).update(`${id}.${expires}`).digest('base64url');
  }
}
