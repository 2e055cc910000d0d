import { randomUUID } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import type { CallbackAttempt, CallbackDelivery, Prisma, WebhookSecret } from '../../generated/prisma/client.js';
import { SealingKeys } from '../../infra/crypto/sealing-keys.js';
import { PrismaService } from '../../infra/prisma/prisma.service.js';
import { type SqlExecutor, sqlExecutorOf } from '../../infra/prisma/sql-executor.js';
import { QueueService } from '../../infra/queue/queue.service.js';

export type DeliveryRow = CallbackDelivery;
export type DeliveryWithAttempts = CallbackDelivery & { attemptLog: CallbackAttempt[] };
/** An owner's webhook secrets, opened (they are sealed at rest). */
export interface WebhookSecretRow {
  owner: string;
  secret: string;
  previousSecret: string | null;
  previousExpiresAt: Date | null;
  createdAt: Date;
  rotatedAt: Date | null;
}

export interface NewDelivery {
  id: string;
  /** The job sent with it. */
  jobId: string;
  owner: string;
  taskKind: string;
  taskId: string;
  status: string;
  url: string;
  payload: string;
  /** The trace its deliveries continue (see TaskNotification.traceParent). */
  traceParent: string | null;
}

export interface AttemptRecord {
  statusCode: number | null;
  durationMs: number;
  error: string | null;
}

/** Sends the job of delivery `deliveryId` with the job id `jobId`, inside the transaction `db`. */
export type EnqueueDelivery = (db: SqlExecutor, deliveryId: string, jobId: string, startAfterSeconds?: number) => Promise<void>;

@Injectable()
export class CallbacksRepository {
  constructor(
    private readonly prisma: PrismaService,
    private readonly sealing: SealingKeys,
  ) {}

  /**
   * Writes the outbox rows inside the transaction of the status change. The task row is locked by
   * that change, so numbering each task's notifications here cannot race.
   */
  async createDeliveries(tx: Prisma.TransactionClient, deliveries: NewDelivery[]): Promise<void> {
    for (const delivery of deliveries) {
      const last = await tx.callbackDelivery.aggregate({ where: { taskId: delivery.taskId }, _max: { sequence: true } });
      await tx.callbackDelivery.create({ data: { ...delivery, sequence: (last._max.sequence ?? 0) + 1 } });
    }
  }

  findDelivery(id: string): Promise<DeliveryRow | null> {
    return this.prisma.callbackDelivery.findUnique({ where: { id } });
  }

  findDeliveryWithAttempts(id: string): Promise<DeliveryWithAttempts | null> {
    return this.prisma.callbackDelivery.findUnique({ where: { id }, include: { attemptLog: { orderBy: { attemptedAt: 'asc' } } } });
  }

  listForTask(taskId: string): Promise<DeliveryWithAttempts[]> {
    return this.prisma.callbackDelivery.findMany({ where: { taskId }, orderBy: { sequence: 'asc' }, include: { attemptLog: { orderBy: { attemptedAt: 'asc' } } } });
  }

  /** An earlier notification of the same task that is neither delivered nor given up on. */
  async hasPendingPredecessor(delivery: DeliveryRow): Promise<boolean> {
    return (await this.prisma.callbackDelivery.count({ where: { taskId: delivery.taskId, sequence: { lt: delivery.sequence }, state: 'pending' } })) > 0;
  }

  /**
   * Takes one attempt of a pending, due delivery for this sender until `lockS` from now; null when
   * another sender has it, it is not due yet, or it is done. Two workers never send the same attempt.
   */
  async claimAttempt(id: string, lockS: number): Promise<DeliveryRow | null> {
    const now = new Date();
    const rows = await this.prisma.callbackDelivery.updateManyAndReturn({
      where: { id, state: 'pending', nextAttemptAt: { lte: now }, OR: [{ lockedUntil: null }, { lockedUntil: { lt: now } }] },
      data: { attempts: { increment: 1 }, lockedUntil: new Date(now.getTime() + lockS * 1000) },
    });
    return rows[0] ?? null;
  }

  async recordAttempt(deliveryId: string, attempt: AttemptRecord): Promise<void> {
    await this.prisma.callbackAttempt.create({ data: { id: randomUUID(), deliveryId, ...attempt } });
  }

  /** pending → delivered or failed; in the same transaction, the task's next notification is queued. */
  async finish(id: string, state: 'delivered' | 'failed', lastError: string | null, enqueue: EnqueueDelivery): Promise<void> {
    await this.prisma.$transaction(async (tx) => {
      const { count } = await tx.callbackDelivery.updateMany({ where: { id, state: 'pending' }, data: { state, lastError, finishedAt: new Date(), lockedUntil: null } });
      if (count !== 1) return;
      const delivery = await tx.callbackDelivery.findUniqueOrThrow({ where: { id } });
      const next = await tx.callbackDelivery.findFirst({ where: { taskId: delivery.taskId, sequence: { gt: delivery.sequence }, state: 'pending' }, orderBy: { sequence: 'asc' } });
      if (next) await this.enqueue(tx, next.id, enqueue);
    });
  }

  /** Another attempt later: the job for it is queued in the same transaction. */
  async reschedule(id: string, at: Date, lastError: string, enqueue: EnqueueDelivery): Promise<void> {
    await this.prisma.$transaction(async (tx) => {
      const { count } = await tx.callbackDelivery.updateMany({ where: { id, state: 'pending' }, data: { nextAttemptAt: at, lastError, lockedUntil: null } });
      if (count === 1) await this.enqueue(tx, id, enqueue, Math.max(0, (at.getTime() - Date.now()) / 1000));
    });
  }

  /** Starts a new cycle of attempts for a delivery (same webhook-id); its job is queued in the same transaction. */
  async restart(id: string, enqueue: EnqueueDelivery): Promise<DeliveryWithAttempts | null> {
    return this.prisma.$transaction(async (tx) => {
      const now = new Date();
      const { count } = await tx.callbackDelivery.updateMany({
        where: { id },
        data: { state: 'pending', attempts: 0, nextAttemptAt: now, cycleStartedAt: now, finishedAt: null, lockedUntil: null },
      });
      if (count !== 1) return null;
      await this.enqueue(tx, id, enqueue);
      return tx.callbackDelivery.findUnique({ where: { id }, include: { attemptLog: { orderBy: { attemptedAt: 'asc' } } } });
    });
  }

  /**
   * Pending, due, unlocked deliveries that are next in their task's order and whose last job can no
   * longer send them (a worker took it and died, or it failed while the database was down) get a new
   * job, in the same transaction.
   */
  async requeueOrphaned(graceS: number, enqueue: EnqueueDelivery): Promise<string[]> {
    return this.prisma.$transaction(async (tx) => {
      const rows = await tx.$queryRawUnsafe<{ id: string }[]>(
        `SELECT d.id FROM callback_deliveries d
         WHERE d.state = 'pending' AND d.next_attempt_at <= now() AND (d.locked_until IS NULL OR d.locked_until < now())
           AND d.created_at < now() - make_interval(secs => $1)
           AND NOT EXISTS (SELECT 1 FROM callback_deliveries p WHERE p.task_id = d.task_id AND p.sequence < d.sequence AND p.state = 'pending')
           AND ${QueueService.deadJobCondition('d.job_id', "'callback.deliver'", graceS)}
         ORDER BY d.next_attempt_at LIMIT 200 FOR UPDATE OF d SKIP LOCKED`,
        graceS,
      );
      for (const { id } of rows) await this.enqueue(tx, id, enqueue);
      return rows.map((r) => r.id);
    });
  }

  /** Releases the attempt locks taken before `startedAt` (a previous run of this sole instance died mid-send). */
  async releaseLocksTakenBefore(startedAt: Date, lockS: number): Promise<number> {
    // a lock taken at t lasts until t + lockS: those ending before startedAt + lockS were taken before it
    const { count } = await this.prisma.callbackDelivery.updateMany({ where: { state: 'pending', lockedUntil: { not: null, lt: new Date(startedAt.getTime() + lockS * 1000) } }, data: { lockedUntil: null } });
    return count;
  }

  /** Sends the delivery's job and records its id, in the transaction `tx`. */
  private async enqueue(tx: Prisma.TransactionClient, deliveryId: string, enqueue: EnqueueDelivery, startAfterSeconds?: number): Promise<void> {
    const jobId = randomUUID();
    await tx.callbackDelivery.update({ where: { id: deliveryId }, data: { jobId } });
    await enqueue(sqlExecutorOf(tx), deliveryId, jobId, startAfterSeconds);
  }

  /** The owner's signing secret, made on first use. */
  async findOrCreateSecret(owner: string, make: () => string): Promise<WebhookSecretRow> {
    await this.prisma.webhookSecret.createMany({ data: [{ owner, secret: this.sealing.seal(make()) }], skipDuplicates: true });
    return this.opened(await this.prisma.webhookSecret.findUniqueOrThrow({ where: { owner } }));
  }

  /**
   * A new secret; the current one becomes the previous, still signing until `previousUntil`. Rotations of
   * one owner at once queue on its row: the first of an owner without a secret inserts it (a second insert
   * waits, then does nothing), and each later one locks the row before it reads the current secret. (A read
   * then a create let two first rotations both create: a unique violation, answered 500 in a fuzz run; a
   * read then an update let two rotations both demote the same secret, one new secret lost.)
   */
  async rotateSecret(owner: string, make: () => string, previousUntil: Date): Promise<WebhookSecretRow> {
    const row = await this.prisma.$transaction(async (tx) => {
      const now = new Date();
      const inserted = await tx.webhookSecret.createMany({ data: [{ owner, secret: this.sealing.seal(make()), rotatedAt: now }], skipDuplicates: true });
      if (inserted.count === 1) return tx.webhookSecret.findUniqueOrThrow({ where: { owner } });
      await tx.$queryRaw`SELECT 1 FROM webhook_secrets WHERE owner = ${owner} FOR UPDATE`;
      const current = await tx.webhookSecret.findUniqueOrThrow({ where: { owner } });
      // the current secret moves as it is stored (sealed; a row from before sealing is sealed now)
      const previous = current.secret ?? this.sealing.seal(current.plainSecret!);
      return tx.webhookSecret.update({
        where: { owner },
        data: { secret: this.sealing.seal(make()), previousSecret: previous, plainSecret: null, plainPreviousSecret: null, previousExpiresAt: previousUntil, rotatedAt: now },
      });
    });
    return this.opened(row);
  }

  /** Opens a row's secrets (plain only on a row from before sealing that the start has not sealed yet). */
  private opened(row: WebhookSecret): WebhookSecretRow {
    const open = (sealed: Uint8Array | null, plain: string | null) => (sealed ? this.sealing.open(sealed) : plain);
    return {
      owner: row.owner,
      secret: open(row.secret, row.plainSecret)!,
      previousSecret: open(row.previousSecret, row.plainPreviousSecret),
      previousExpiresAt: row.previousExpiresAt,
      createdAt: row.createdAt,
      rotatedAt: row.rotatedAt,
    };
  }
}
