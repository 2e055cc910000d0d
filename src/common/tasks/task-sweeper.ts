import { Injectable, Logger, type OnApplicationBootstrap, type OnModuleDestroy } from '@nestjs/common';
import { AppConfig } from '../../infra/config/app-config.js';

/** A kind of task the sweeper looks after. */
export interface Sweepable {
  readonly kind: string;
  /** Fails unfinished tasks past their deadline; returns how many. */
  failOverdue(): Promise<number>;
  /** Re-queues processing tasks whose lease ran out (their worker died); returns how many. */
  requeueAbandoned(): Promise<number>;
  /** Voids every lease (only when this instance is the only one: see AppConfig.soleInstance). */
  expireLeases(): Promise<number>;
}

const SWEEP_INTERVAL_MS = 5000;

/**
 * On instances that run workers: every few seconds, fail what is past its deadline and hand tasks
 * of dead workers to the queue again. Several instances may sweep at once; each change is a guarded
 * update, so a task is re-queued by one of them only.
 */
@Injectable()
export class TaskSweeper implements OnApplicationBootstrap, OnModuleDestroy {
  private readonly logger = new Logger(TaskSweeper.name);
  private readonly kinds: Sweepable[] = [];
  private timer?: NodeJS.Timeout;
  private running?: Promise<void>;
  private stopped = false;

  constructor(private readonly config: AppConfig) {}

  register(kind: Sweepable): void {
    this.kinds.push(kind);
  }

  onApplicationBootstrap(): void {
    if (!this.config.runsWorkers) return;
    let first = true;
    const tick = () => {
      // Modules register in their own bootstrap hooks, so the first sweep comes after all of them.
      const voidLeases = first && this.config.soleInstance ? this.expireLeases() : Promise.resolve();
      first = false;
      this.running = voidLeases.then(() => this.sweep()).finally(() => {
        this.running = undefined;
        if (!this.stopped) this.timer = setTimeout(tick, SWEEP_INTERVAL_MS * (0.75 + Math.random() / 2));
      });
    };
    this.timer = setTimeout(tick, 1000);
  }

  async onModuleDestroy(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    this.timer = undefined;
    await this.running;
  }

  /** A previous run of this very instance (killed mid-task) held these leases; nobody else can. */
  private async expireLeases(): Promise<void> {
    for (const kind of this.kinds) {
      const voided = await kind.expireLeases().catch(() => 0);
      if (voided) this.logger.warn(`${voided} ${kind.kind} task(s) were left running by a previous run; taking them back`);
    }
  }

  async sweep(): Promise<void> {
    for (const kind of this.kinds) {
      try {
        const overdue = await kind.failOverdue();
        const abandoned = await kind.requeueAbandoned();
        if (overdue) this.logger.warn(`${overdue} ${kind.kind} task(s) failed: past their deadline`);
        if (abandoned) this.logger.warn(`${abandoned} ${kind.kind} task(s) re-queued: their worker stopped renewing its lease`);
      } catch (err) {
        this.logger.error({ msg: `sweeping ${kind.kind} tasks failed`, err });
      }
    }
  }
}
