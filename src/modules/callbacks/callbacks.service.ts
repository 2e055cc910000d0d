import { randomBytes, randomUUID } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import { isUUID } from 'class-validator';
import { AppError } from '../../common/errors/app-error.js';
import { NotificationSeries, type TaskNotification, type TaskTx } from '../../common/tasks/task-kind.js';
import { AppConfig } from '../../infra/config/app-config.js';
import type { SqlExecutor } from '../../infra/prisma/sql-executor.js';
import { QueueService } from '../../infra/queue/queue.service.js';
import { type DeliveryWithAttempts, CallbacksRepository, type EnqueueDelivery, type WebhookSecretRow } from './callbacks.repository.js';
import type { CallbackDeliveryDto, WebhookSecretDto } from './dto/callback.dto.js';

/** `whsec_` + base64 of 24 random bytes: the Standard Webhooks secret format. */
export function newWebhookSecret(): string {
  return `whsec_${randomBytes(24).toString('base64')}`;
}

/**
 * The notification outbox. The task engine calls `notify` (its TaskHooks) in the transaction of every
 * status change of a task with a callback_url: one delivery row per notification (per body of a
 * NotificationSeries, in its order), with the exact body fixed now, and its job queued; CallbackSender does
 * the rest.
 */
@Injectable()
export class CallbacksService {
  constructor(
    private readonly deliveries: CallbacksRepository,
    private readonly queue: QueueService,
    private readonly config: AppConfig,
  ) {}

  async notify(db: SqlExecutor, tx: TaskTx, notifications: TaskNotification[]): Promise<void> {
    // a series is one delivery per body, numbered in its order (a task's later delivery waits for its earlier ones)
    const bodies = (n: TaskNotification) => (n.body instanceof NotificationSeries ? n.body.bodies : [n.body]);
    const rows = notifications.flatMap((n) =>
      bodies(n).map((body) => ({ id: randomUUID(), jobId: randomUUID(), owner: n.owner, taskKind: n.kind, taskId: n.taskId, status: n.status, url: n.url, payload: JSON.stringify(body), traceParent: n.traceParent })),
    );
    if (rows.length === 0) return;
    await this.deliveries.createDeliveries(tx, rows);
    for (const row of rows) await this.enqueueDelivery(db, row.id, row.jobId);
    // the jobs commit with the caller's transaction, a few ms from now: this instance's sender looks then
    // rather than at its next look (up to 500 ms later); a look before the commit costs one fetch
    this.queue.jobsDueIn('callback.deliver', 0);
  }

  /** Sends a delivery's job (inside the caller's transaction `db`). */
  readonly enqueueDelivery: EnqueueDelivery = async (db, deliveryId, jobId, startAfterSeconds) => {
    await this.queue.send('callback.deliver', { deliveryId }, { db, id: jobId, startAfterSeconds });
  };

  async listForTask(taskId: string): Promise<CallbackDeliveryDto[]> {
    return (await this.deliveries.listForTask(taskId)).map(toDeliveryDto);
  }

  /** A new cycle of attempts for one notification, with the same webhook-id and body. */
  async redeliver(id: string): Promise<CallbackDeliveryDto> {
    const row = isUUID(id) ? await this.deliveries.restart(id, this.enqueueDelivery) : null;
    if (!row) throw new AppError('NOT_FOUND', `No callback delivery ${id}`);
    return toDeliveryDto(row);
  }

  async secretOf(owner: string): Promise<WebhookSecretDto> {
    return toSecretDto(await this.deliveries.findOrCreateSecret(owner, newWebhookSecret));
  }

  async rotateSecret(owner: string): Promise<WebhookSecretDto> {
    const until = new Date(Date.now() + this.config.callbacks.rotationOverlapS * 1000);
    return toSecretDto(await this.deliveries.rotateSecret(owner, newWebhookSecret, until));
  }
}

function toDeliveryDto(row: DeliveryWithAttempts): CallbackDeliveryDto {
  return {
    id: row.id,
    status: row.status,
    url: row.url,
    state: row.state,
    attempts: row.attempts,
    created_at: row.createdAt.toISOString(),
    finished_at: row.finishedAt?.toISOString() ?? null,
    last_error: row.lastError,
    attempt_log: row.attemptLog.map((a) => ({ attempted_at: a.attemptedAt.toISOString(), status_code: a.statusCode, duration_ms: a.durationMs, error: a.error })),
  };
}

function toSecretDto(row: WebhookSecretRow): WebhookSecretDto {
  const overlapping = row.previousExpiresAt && row.previousExpiresAt > new Date();
  return {
    owner: row.owner,
    secret: row.secret,
    previous_secret: overlapping ? row.previousSecret : null,
    previous_expires_at: overlapping ? row.previousExpiresAt!.toISOString() : null,
    rotated_at: row.rotatedAt?.toISOString() ?? null,
  };
}
