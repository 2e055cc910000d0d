import type { Logger } from '@nestjs/common';
import type { AppConfig } from '../../infra/config/app-config.js';
import type { DatabaseStatus } from '../../infra/database/database-status.service.js';

/** Sweeps come every half lease (0.5 to 5 s), so work of a dead worker waits at most about 2 × WORKER_LEASE_S. */
export function sweepIntervalMs(leaseS: number): number {
  return Math.min(5000, Math.max(500, (leaseS * 1000) / 2));
}

/**
 * A sweep that repeats, on instances that run workers, every half lease (or its own interval) with ±25 % jitter (so instances do
 * not sweep in step); nothing is swept while the database is down, and a failed sweep is logged, not fatal.
 * `sweep(first)` is told when it is the first of this process.
 */
export class SweepLoop {
  private timer?: NodeJS.Timeout;
  private running?: Promise<void>;
  private stopped = false;

  constructor(
    private readonly what: string,
    private readonly config: AppConfig,
    private readonly database: DatabaseStatus,
    private readonly logger: Logger,
    private readonly sweep: (first: boolean) => Promise<void>,
    /** Its own interval, in ms, instead of half a lease. */
    private readonly intervalMs?: number,
  ) {}

  start(): void {
    if (!this.config.runsWorkers) return;
    const interval = this.intervalMs ?? sweepIntervalMs(this.config.workerLeaseS);
    let first = true;
    const tick = () => {
      const isFirst = first;
      first = false;
      this.running = this.once(isFirst).finally(() => {
        this.running = undefined;
        if (!this.stopped) this.timer = setTimeout(tick, interval * (0.75 + Math.random() / 2));
      });
    };
    this.timer = setTimeout(tick, Math.min(1000, interval));
  }

  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    this.timer = undefined;
    await this.running;
  }

  private async once(first: boolean): Promise<void> {
    if (!this.database.isAvailable) return;
    try {
      await this.sweep(first);
    } catch (err) {
      if (!this.database.report(err)) this.logger.error({ msg: `sweeping ${this.what} failed`, err });
    }
  }
}
