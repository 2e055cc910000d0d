import { createHmac, randomUUID, timingSafeEqual } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { pipeline } from 'node:stream/promises';
import { Injectable, Logger, type OnModuleInit } from '@nestjs/common';
import { HttpAdapterHost } from '@nestjs/core';
import { AppError } from '../../common/errors/app-error.js';
import type { Task, TaskTx } from '../../common/tasks/task-kind.js';
import { type Holder, LeaseLost, TaskStatesRepository } from '../../common/tasks/task-states.repository.js';
import type { Prisma } from '../../generated/prisma/client.js';
import { AppConfig } from '../../infra/config/app-config.js';
import { QueueService } from '../../infra/queue/queue.service.js';
import { collect, type MediaBody } from '../../infra/storage/storage.js';
import { AppSecretsRepository } from '../../infra/prisma/app-secrets.repository.js';
import { StorageService } from '../../infra/storage/storage.service.js';
import { type MediaAnswer, type MediaRequest, answerFor, dispositionOf } from './media-delivery.js';
import { type MediaRow, MediaRepository, type NewMedia } from './media.repository.js';

export interface StoreMedia {
  owner: string;
  taskId: string;
  role: MediaRole;
  index: number;
  /** The bytes (small images), a stream, or a file of the work directory (a video is never held whole). */
  body: MediaBody;
  contentType: string;
  width?: number | null;
  height?: number | null;
}

/** A task's stored files, and the link to each. */
export interface LinkedMedia {
  media: MediaRow[];
  link(m: MediaRow): string;
}

/** What a stored object is to its task, named by its kind: 'image', 'video', 'input', 'clip'… (at most 16 characters). */
export type MediaRole = string;

const EXTENSIONS: Record<string, string> = { 'image/png': 'png', 'image/jpeg': 'jpg', 'image/webp': 'webp', 'video/mp4': 'mp4', 'audio/mpeg': 'mp3', 'audio/wav': 'wav', 'audio/mp4': 'm4a', 'audio/ogg': 'ogg', 'audio/flac': 'flac', 'audio/webm': 'webm', 'audio/aac': 'aac', 'audio/pcm': 'pcm' };

function extensionOf(contentType: string): string {
  return EXTENSIONS[contentType] ?? 'bin';
}

/** `<task>/<role>-<index>.<ext>`, or with a claim's mark, `<task>/<role>-<index>-<claim>.<ext>`. */
function keyOf(input: Pick<StoreMedia, 'taskId' | 'role' | 'index' | 'contentType'>, claim?: string): string {
  return `${input.taskId}/${input.role}-${input.index}${claim ? `-${claim}` : ''}.${extensionOf(input.contentType)}`;
}

/**
 * Result files: stored through the storage driver, served at /media/{id} by URLs signed with an
 * expiry (RESULT_URL_TTL_S), so they open in a browser or another service without the API key.
 */
@Injectable()
export class MediaService implements OnModuleInit {
  private readonly logger = new Logger(MediaService.name);
  private signingKey?: Buffer;

  constructor(
    private readonly media: MediaRepository,
    private readonly storage: StorageService,
    private readonly config: AppConfig,
    private readonly queue: QueueService,
    private readonly http: HttpAdapterHost,
    private readonly tasks: TaskStatesRepository,
    private readonly secrets: AppSecretsRepository,
  ) {}

  async onModuleInit(): Promise<void> {
    this.signingKey = Buffer.from(await this.secrets.findOrCreate('media_url_signing_key'), 'base64url');
    if (this.config.runsWorkers) {
      await this.queue.work('media.retention', 1, () => this.runRetention().then(() => undefined));
      await this.queue.schedule('media.retention', '17 * * * *');
    }
  }

  /**
   * Deletes media of tasks (of every kind) finished more than RESULT_RETENTION_DAYS ago (the hourly
   * `media.retention` job); the tasks stay, marked media_expired.
   */
  async runRetention(now = new Date()): Promise<number> {
    const cutoff = new Date(now.getTime() - this.config.resultRetentionDays * 24 * 3600 * 1000);
    const ids = await this.tasks.markMediaExpired(cutoff);
    await this.deleteForTasks(ids);
    if (ids.length) this.logger.log(`media of ${ids.length} task(s) expired (older than ${this.config.resultRetentionDays} days)`);
    return ids.length;
  }

  /**
   * Writes the objects of a task's result and answers their rows, which the engine writes in the statement
   * that ends the task (mediaEndRows). When that end does not land (the deadline or another claim came
   * first), they are discarded (discardObjects).
   *
   * Their keys are this claim's own (`attempt`, the number the task's claim fences its writes with:
   * `<task>/<role>-<index>-a<attempt>.<ext>`), so that a step which outlived its lease and the claim that took
   * the task over never write, or discard, each other's objects. An earlier claim's objects under the same
   * name are deleted: none of its writes can end the task any more, so no row names them or ever will (a
   * claim that stored and then died, or one still storing, which discards its own when its end fails).
   */
  async putResult(attempt: number, inputs: StoreMedia[]): Promise<NewMedia[]> {
    const media: NewMedia[] = [];
    for (const input of inputs) {
      media.push(await this.putObject(input, `a${attempt}`));
      for (let earlier = 1; earlier < attempt; earlier++) await this.deleteObject(this.storage.current.name, keyOf(input, `a${earlier}`));
    }
    return media;
  }

  /**
   * Whether a task's input (an expand image) goes to the media store as an object. Only an object store
   * (s3) takes them; with local or postgres the input stays in the task's database, written with the task.
   */
  get storesInputs(): boolean {
    return this.storage.current.name === 's3';
  }

  /**
   * Writes the object and answers the media row that records it, for the caller to insert (with its task).
   * Its key is `<task>/<role>-<index>.<ext>` (an input, written with its task at accept), or with a claim's
   * mark, `<task>/<role>-<index>-<claim>.<ext>` (what a step writes: putResult, putNow).
   */
  async putObject(input: StoreMedia, claim?: string): Promise<NewMedia> {
    const driver = this.storage.current;
    const storageKey = keyOf(input, claim);
    const sizeBytes = await driver.put(storageKey, input.body, input.contentType);
    return {
      id: randomUUID(),
      owner: input.owner,
      taskId: input.taskId,
      role: input.role,
      index: input.index,
      contentType: input.contentType,
      sizeBytes,
      width: input.width ?? null,
      height: input.height ?? null,
      driver: driver.name,
      storageKey,
    };
  }

  /** Deletes objects whose rows were never written (their task was refused, or ended without them). */
  async discardObjects(media: NewMedia[]): Promise<void> {
    for (const m of media) await this.deleteObject(m.driver, m.storageKey);
  }

  /** Deletes an object (one that is not there is no error); a failure is logged, never thrown. */
  private deleteObject(driver: string, key: string): Promise<void> {
    return this.storage
      .driver(driver)
      .delete(key)
      .catch((err: unknown) => this.logger.warn(`could not delete ${key}: ${String(err)}`));
  }

  /**
   * The stored media of these tasks (of those that succeeded) with how to link each file: a signed link on
   * the task's own base (see linkBase), fresh at each read. `tx`: read in a state change's transaction.
   */
  async linkedMedia(tasks: Pick<Task, 'id' | 'state' | 'baseUrl'>[], tx?: TaskTx): Promise<(task: Pick<Task, 'id' | 'baseUrl'>) => LinkedMedia> {
    const rows = await this.listForTasks(tasks.filter((t) => t.state === 'succeeded').map((t) => t.id), tx);
    return (task) => {
      const base = this.linkBase(task.baseUrl);
      return { media: rows.filter((m) => m.taskId === task.id), link: (m) => this.signedUrl(m, base) };
    };
  }

  /** `tx`: read inside a transaction (a status change building its notification). */
  listForTasks(taskIds: string[], tx?: Prisma.TransactionClient): Promise<MediaRow[]> {
    return taskIds.length ? this.media.listForTasks(taskIds, tx) : Promise.resolve([]);
  }

  /** Removes the files of these tasks (deleted tasks, expired media). */
  async deleteForTasks(taskIds: string[]): Promise<void> {
    if (taskIds.length === 0) return;
    for (const row of await this.media.deleteForTasks(taskIds)) await this.deleteObject(row.driver, row.storageKey);
  }

  /**
   * Copies a stored object into `file` as a stream (for the service's own use: an expand's input on its way
   * to the renderer, a video to continue from); its size, or null when the object is gone.
   */
  async copyToFile(row: MediaRow, file: string): Promise<number | null> {
    const stream = await this.storage.driver(row.driver).open(row.storageKey);
    if (!stream) return null;
    const sink = createWriteStream(file);
    await pipeline(stream, sink);
    return sink.bytesWritten;
  }

  /**
   * Writes an object and records it at once, while its task runs (a partial image a streaming caller is shown,
   * a fitted frame), while `holder`'s claim has the task; answers its row. Keyed by the claim as results are
   * (putResult): a late step neither replaces the bytes nor the row of the claim that has the task now; its
   * object is deleted again and it stops (LeaseLost). What earlier claims left under the name is deleted.
   */
  async putNow(input: StoreMedia, holder: Holder): Promise<MediaRow> {
    const media = await this.putObject(input, `a${holder.attempt}`);
    const row = await this.media.upsertWhileHeld(media, holder);
    if (!row) {
      await this.deleteObject(media.driver, media.storageKey);
      throw new LeaseLost(input.taskId);
    }
    for (let earlier = 1; earlier < holder.attempt; earlier++) await this.deleteObject(media.driver, keyOf(input, `a${earlier}`));
    return row;
  }

  /** A stored object's bytes (a small one: an image), or null when it is gone. */
  async readBytes(row: MediaRow): Promise<Buffer | null> {
    const stream = await this.storage.driver(row.driver).open(row.storageKey);
    return stream ? collect(stream) : null;
  }

  /** A task's stored object of this role (its input image, its clip), if there is one. */
  findForTask(taskId: string, role: MediaRole, index = 0): Promise<MediaRow | null> {
    return this.media.findForTask(taskId, role, index);
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

  /**
   * A signed link's answer, as a CDN would give it: the whole file or a Range of it (206), 304 when the
   * client's copy is current (If-None-Match), Cache-Control for the link's remaining life, and a file
   * name. With MEDIA_DELIVERY=redirect (s3), a 302 to a presigned URL of the bucket instead.
   */
  async answer(id: string, expires: string | undefined, signature: string | undefined, request: MediaRequest): Promise<MediaAnswer> {
    const exp = this.verify(id, expires, signature);
    const row = await this.media.findById(id);
    if (!row) throw gone();
    return this.deliver(row, Math.max(0, exp - Math.floor(Date.now() / 1000)), request);
  }

  /** A stored file's answer (see answer), for a route that found it for its owner; `remainingS`: how long the answer may be cached. */
  async deliver(row: MediaRow, remainingS: number, request: MediaRequest): Promise<MediaAnswer> {
    const driver = this.storage.driver(row.driver);
    if (this.config.mediaDelivery === 'redirect' && driver.presign) {
      const location = await driver.presign(row.storageKey, Math.min(this.config.mediaRedirectTtlS, Math.max(1, remainingS)), { contentType: row.contentType, disposition: dispositionOf(row) });
      return { status: 302, headers: { location, 'cache-control': 'private, no-store' } };
    }
    return answerFor(row, remainingS, request, async (range) => {
      const body = await driver.open(row.storageKey, range);
      if (!body) throw gone();
      return body;
    });
  }

  /** The expiry of a link whose signature is this service's and which has not expired yet. */
  private verify(id: string, expires: string | undefined, signature: string | undefined): number {
    const exp = Number(expires);
    const expected = Number.isInteger(exp) ? Buffer.from(this.sign(id, exp)) : Buffer.alloc(0);
    const given = Buffer.from(String(signature ?? ''));
    if (expected.length === 0 || given.length !== expected.length || !timingSafeEqual(given, expected)) {
      throw new AppError('FORBIDDEN', 'This media link is not valid: its signature does not match');
    }
    if (exp * 1000 < Date.now()) {
      throw new AppError('FORBIDDEN', 'This media link has expired; read the task again for a fresh link');
    }
    return exp;
  }

  private sign(id: string, expires: number): string {
    return createHmac('sha256', this.signingKey!).update(`${id}.${expires}`).digest('base64url');
  }
}

function gone(): AppError {
  return new AppError('NOT_FOUND', 'This file is no longer available: it was deleted or has expired (RESULT_RETENTION_DAYS)');
}
