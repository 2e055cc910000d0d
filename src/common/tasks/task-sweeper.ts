import { Injectable, Logger, type OnApplicationBootstrap, type OnModuleDestroy } from '@nestjs/common';
import { AppConfig } from '../../infra/config/app-config.js';
import { DatabaseStatus } from '../../infra/database/database-status.service.js';

/** A kind of work the sweeper looks after (a task table, the callback outbox). */
export interface Sweepable {
  readonly kind: string;
  /** Fails unfinished tasks past their deadline; returns how many. */
  failOverdue(): Promise<number>;
  /** Re-queues processing tasks whose lease ran out (their worker died); returns how many. */
  requeueAbandoned(): Promise<number>;
  /** Re-queues waiting work whose job died before any worker claimed it; returns how many. */
  requeueOrphaned(): Promise<number>;
  /** Voids every lease (only when this instance is the only one: see AppConfig.soleInstance). */
  expireLeases(): Promise<number>;
  /** Re-queues at once the work `worker` still holds (its instance is shutting down); returns how many. */
  handBack?(worker: string): Promise<number>;
}

/** Sweeps come every half lease (0.5 to 5 s), so work of a dead worker waits at most about 2 × WORKER_LEASE_S. */
function sweepIntervalMs(leaseS: number): number {
  return Math.min(5000, Math.max(500, (leaseS * 1000) / 2));
}

/**
 * On instances that run workers: every few seconds, fail what is past its deadline and hand tasks
 * of dead workers to the queue again: those whose lease ran out, and those whose job a worker took and
 * died with before claiming them. Several instances may sweep at once; each change is a guarded
 * update, so a task is re-queued by one of them only. Nothing is swept while the database is down.
 */
@Injectable()
export class TaskSweeper implements OnApplicationBootstrap, OnModuleDestroy {
  private readonly logger = new Logger(TaskSweeper.name);
  private readonly kinds: Sweepable[] = [];
  private timer?: NodeJS.Timeout;
  private running?: Promise<void>;
  private stopped = false;

  constructor(
    private readonly config: AppConfig,
    private readonly database: DatabaseStatus,
  ) {}

  register(kind: Sweepable): void {
    this.kinds.push(kind);
  }

  onApplicationBootstrap(): void {
    if (!this.config.runsWorkers) return;
    const interval = sweepIntervalMs(this.config.workerLeaseS);
    let first = true;
    const tick = () => {
      // Modules register in their own bootstrap hooks, so the first sweep comes after all of them.
      const voidLeases = first && this.config.soleInstance ? this.expireLeases() : Promise.resolve();
      first = false;
      this.running = voidLeases.then(() => this.sweep()).finally(() => {
        this.running = undefined;
        if (!this.stopped) this.timer = setTimeout(tick, interval * (0.75 + Math.random() / 2));
      });
    };
    this.timer = setTimeout(tick, Math.min(1000, interval));
  }

  async onModuleDestroy(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    this.timer = undefined;
    await this.running;
  }

  /** At shutdown: what this instance's worker still holds goes to the other instances now. */
  async handBack(worker: string): Promise<number> {
    let total = 0;
    for (const kind of this.kinds) {
      const count = (await kind.handBack?.(worker).catch((err: unknown) => (this.logger.warn(`could not hand back ${kind.kind} tasks: ${String(err)}`), 0))) ?? 0;
      if (count) this.logger.log(`${count} running ${kind.kind} task(s) handed back to the queue for another instance`);
      total += count;
    }
    return total;
  }

  /** A previous run of this very instance (killed mid-task) held these leases; nobody else can. */
  private async expireLeases(): Promise<void> {
    for (const kind of this.kinds) {
      const voided = await kind.expireLeases().catch(() => 0);
      if (voided) this.logger.warn(`${voided} ${kind.kind} task(s) were left running by a previous run; taking them back`);
    }
  }

  async sweep(): Promise<void> {
    if (!this.database.isAvailable) return;
    for (const kind of this.kinds) {
      try {
        const overdue = await kind.failOverdue();
        const abandoned = await kind.requeueAbandoned();
        const orphaned = await kind.requeueOrphaned();
        if (overdue) this.logger.warn(`${overdue} ${kind.kind} task(s) failed: past their deadline`);
        if (abandoned) this.logger.warn(`${abandoned} ${kind.kind} item(s) re-queued: their worker stopped renewing its lease`);
        if (orphaned) this.logger.warn(`${orphaned} ${kind.kind} item(s) re-queued: their job was taken by a worker that stopped before starting them`);
      } catch (err) {
        if (this.database.report(err)) return;
        this.logger.error({ msg: `sweeping ${kind.kind} failed`, err });
      }
    }
  }
}
