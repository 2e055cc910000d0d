import { Injectable, Logger, type OnModuleDestroy, type OnModuleInit } from '@nestjs/common';
import PgBoss from 'pg-boss';
import { AppConfig } from '../config/app-config.js';
import type { SqlExecutor } from '../prisma/sql-executor.js';
import { type JobName, type JobPayloads, QUEUES } from './jobs.js';

export interface SendOptions {
  /** Run inside this transaction (see sqlExecutorOf), so the job exists exactly when the row does. */
  db?: SqlExecutor;
  /** Not before this many seconds from now. */
  startAfterSeconds?: number;
  /** At most one queued job with this key (a scheduling tick, a redelivery). */
  singletonKey?: string;
}

/**
 * The job queue: pg-boss 10 in the same PostgreSQL (schema `pgboss`). Every instance can send;
 * instances whose ROLE runs workers also poll, supervise (expiry, archiving) and run schedules.
 */
@Injectable()
export class QueueService implements OnModuleInit, OnModuleDestroy {
  private readonly logger = new Logger('Queue');
  private readonly boss: PgBoss;

  constructor(config: AppConfig) {
    this.boss = new PgBoss({
      connectionString: config.databaseUrl,
      schema: 'pgboss',
      max: 4,
      supervise: config.runsWorkers,
      schedule: config.runsWorkers,
      maintenanceIntervalSeconds: 30,
      application_name: 'media-gateway-queue',
    } as PgBoss.ConstructorOptions);
    this.boss.on('error', (err: unknown) => this.logger.error({ msg: 'queue error', err }));
  }

  async onModuleInit(): Promise<void> {
    await this.boss.start();
    for (const [name, settings] of Object.entries(QUEUES)) {
      await this.boss.createQueue(name, { name, ...settings });
    }
  }

  /** First at shutdown: stop fetching, let running jobs finish (up to 10 s), while the database is still open. */
  async onModuleDestroy(): Promise<void> {
    await this.boss.stop({ graceful: true, wait: true, timeout: 10_000 });
  }

  async send<N extends JobName>(name: N, payload: JobPayloads[N], options: SendOptions = {}): Promise<string | null> {
    return this.boss.send(name, payload, {
      db: options.db,
      startAfter: options.startAfterSeconds ? new Date(Date.now() + options.startAfterSeconds * 1000) : undefined,
      singletonKey: options.singletonKey,
    } as PgBoss.SendOptions);
  }

  /** Runs `handler` for each job of `name`, `concurrency` at a time on this instance. */
  async work<N extends JobName>(name: N, concurrency: number, handler: (payload: JobPayloads[N], job: { id: string; retryCount: number }) => Promise<void>): Promise<void> {
    for (let i = 0; i < concurrency; i++) {
      await this.boss.work<JobPayloads[N]>(name, { batchSize: 1, pollingIntervalSeconds: 0.5, includeMetadata: true }, async ([job]) => {
        await handler(job.data, { id: job.id, retryCount: job.retryCount });
      });
    }
  }

  /** A cron schedule (minute resolution); one instance sends each tick. */
  async schedule(name: JobName, cron: string): Promise<void> {
    await this.boss.schedule(name, cron, {}, { tz: 'UTC' });
  }
}
