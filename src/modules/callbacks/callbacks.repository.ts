import { randomUUID } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import type { CallbackAttempt, CallbackDelivery, Prisma, WebhookSecret } from '../../generated/prisma/client.js';
import { PrismaService } from '../../infra/prisma/prisma.service.js';
import { type SqlExecutor, sqlExecutorOf } from '../../infra/prisma/sql-executor.js';

export type DeliveryRow = CallbackDelivery;
export type DeliveryWithAttempts = CallbackDelivery & { attemptLog: CallbackAttempt[] };
export type WebhookSecretRow = WebhookSecret;

export interface NewDelivery {
  id: string;
  owner: string;
  taskKind: string;
  taskId: string;
  status: string;
  url: string;
  payload: string;
}

export interface AttemptRecord {
  statusCode: number | null;
  durationMs: number;
  error: string | null;
}

/** Runs in the transaction that ends a delivery: enqueues the task's next notification, if one waits. */
export type EnqueueNext = (db: SqlExecutor, deliveryId: string) => Promise<void>;

@Injectable()
export class CallbacksRepository {
  constructor(private readonly prisma: PrismaService) {}

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
  async finish(id: string, state: 'delivered' | 'failed', lastError: string | null, enqueueNext: EnqueueNext): Promise<void> {
    await this.prisma.$transaction(async (tx) => {
      const { count } = await tx.callbackDelivery.updateMany({ where: { id, state: 'pending' }, data: { state, lastError, finishedAt: new Date(), lockedUntil: null } });
      if (count !== 1) return;
      const delivery = await tx.callbackDelivery.findUniqueOrThrow({ where: { id } });
      const next = await tx.callbackDelivery.findFirst({ where: { taskId: delivery.taskId, sequence: { gt: delivery.sequence }, state: 'pending' }, orderBy: { sequence: 'asc' } });
      if (next) await enqueueNext(sqlExecutorOf(tx), next.id);
    });
  }

  /** Another attempt later: the job for it is queued in the same transaction. */
  async reschedule(id: string, at: Date, lastError: string, enqueue: (db: SqlExecutor) => Promise<void>): Promise<void> {
    await this.prisma.$transaction(async (tx) => {
      const { count } = await tx.callbackDelivery.updateMany({ where: { id, state: 'pending' }, data: { nextAttemptAt: at, lastError, lockedUntil: null } });
      if (count === 1) await enqueue(sqlExecutorOf(tx));
    });
  }

  /** Starts a new cycle of attempts for a delivery (same webhook-id); its job is queued in the same transaction. */
  async restart(id: string, enqueue: (db: SqlExecutor) => Promise<void>): Promise<DeliveryWithAttempts | null> {
    return this.prisma.$transaction(async (tx) => {
      const now = new Date();
      const { count } = await tx.callbackDelivery.updateMany({
        where: { id },
        data: { state: 'pending', attempts: 0, nextAttemptAt: now, cycleStartedAt: now, finishedAt: null, lockedUntil: null },
      });
      if (count !== 1) return null;
      await enqueue(sqlExecutorOf(tx));
      return tx.callbackDelivery.findUnique({ where: { id }, include: { attemptLog: { orderBy: { attemptedAt: 'asc' } } } });
    });
  }

  /** The owner's signing secret, made on first use. */
  async findOrCreateSecret(owner: string, make: () => string): Promise<WebhookSecretRow> {
    await this.prisma.webhookSecret.createMany({ data: [{ owner, secret: make() }], skipDuplicates: true });
    return this.prisma.webhookSecret.findUniqueOrThrow({ where: { owner } });
  }

  /** A new secret; the current one becomes the previous, still signing until `previousUntil`. */
  async rotateSecret(owner: string, make: () => string, previousUntil: Date): Promise<WebhookSecretRow> {
    return this.prisma.$transaction(async (tx) => {
      const current = await tx.webhookSecret.findUnique({ where: { owner } });
      const now = new Date();
      if (!current) return tx.webhookSecret.create({ data: { owner, secret: make(), rotatedAt: now } });
      return tx.webhookSecret.update({ where: { owner }, data: { secret: make(), previousSecret: current.secret, previousExpiresAt: previousUntil, rotatedAt: now } });
    });
  }
}
