import { Injectable, Logger, type OnApplicationBootstrap, type OnApplicationShutdown } from '@nestjs/common';
import { AppConfig } from '../../infra/config/app-config.js';

/** A kind of task the sweeper looks after. */
export interface Sweepable {
  readonly kind: string;
  /** Fails unfinished tasks past their deadline; returns how many. */
  failOverdue(): Promise<number>;
  /** Re-queues processing tasks whose lease ran out (their worker died); returns how many. */
  requeueAbandoned(): Promise<number>;
}

const SWEEP_INTERVAL_MS = 5000;

/**
 * On instances that run workers: every few seconds, fail what is past its deadline and hand tasks
 * of dead workers to the queue again. Several instances may sweep at once; each change is a guarded
 * update, so a task is re-queued by one of them only.
 */
@Injectable()
export class TaskSweeper implements OnApplicationBootstrap, OnApplicationShutdown {
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
    const tick = () => {
      this.running = this.sweep().finally(() => {
        this.running = undefined;
        if (!this.stopped) this.timer = setTimeout(tick, SWEEP_INTERVAL_MS * (0.75 + Math.random() / 2));
      });
    };
    this.timer = setTimeout(tick, 500);
  }

  async onApplicationShutdown(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    this.timer = undefined;
    await this.running;
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
