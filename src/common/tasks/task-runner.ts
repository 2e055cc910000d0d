import { randomUUID } from 'node:crypto';
import { Injectable, Logger } from '@nestjs/common';
import { AppConfig } from '../../infra/config/app-config.js';
import { DatabaseStatus } from '../../infra/database/database-status.service.js';
import { MetricsService } from '../../infra/metrics/metrics.service.js';
import type { JobResult } from '../../infra/queue/queue.service.js';

/** The outcome of one step of work on a task. */
export type StepOutcome<R> =
  | { kind: 'done'; result: R }
  | { kind: 'failed'; reason: string }
  /** Not finished (an upstream is still working): run the next step after this many seconds. */
  | { kind: 'wait'; seconds: number }
  /** The upstream is at capacity and did not take the task: try again after this many seconds, off the deadline's clock. */
  | { kind: 'busy'; seconds: number };

/** Thrown by a step (or what it calls) to end the task failed with a reason meant for the caller. */
export class TaskFailure extends Error {}

/** A claimed task; `firstStart` when it had never started, after waiting `waitedS` since acceptance. */
export type Claimed<T> = { kind: 'claimed'; task: T; firstStart: boolean; waitedS: number };

/** The guarded state changes a task table offers the runner. Each changes exactly one row, or none. */
export interface TaskLease<T> {
  /**
   * Takes the task (waiting → processing, or processing with no live lease). Null when finished or held;
   * deferred when it has not started and the upstream cap is reached.
   */
  claim(id: string, worker: string, leaseS: number): Promise<Claimed<T> | { kind: 'deferred' } | null>;
  /** Extends the lease; false when the worker no longer holds it. */
  heartbeat(id: string, worker: string, leaseS: number): Promise<boolean>;
  /** Lets go while waiting for an upstream (the sweeper takes it back if no step comes by then), or after an unexpected error. */
  release(id: string, worker: string, untilS: number, failed?: boolean): Promise<void>;
  /** Lets go until `seconds` from now, moving the task's start (and deadline) there: the upstream did not take it. */
  postpone(id: string, worker: string, seconds: number, leaseS: number): Promise<void>;
  /** processing → failed, only while this worker holds the lease. */
  fail(id: string, worker: string, reason: string): Promise<boolean>;
}

export interface TaskStep<T, R> {
  lease: TaskLease<T>;
  /** Metric labels of the task. */
  labels(task: T): { owner: string; operation: string };
  deadlineOf(task: T): Date;
  /** The failure reason when the deadline passes. */
  timeoutReason: string;
  attemptsOf(task: T): number;
  step(task: T): Promise<StepOutcome<R>>;
  /** processing → done, only while this worker holds the lease; false if it no longer does. */
  complete(task: T, worker: string, result: R): Promise<boolean>;
  /** Enqueues the next step. */
  next(seconds: number): Promise<void>;
  /** Sends the task's job again, to start when the upstream cap leaves room. */
  defer(): Promise<void>;
}

/** How long a consumer fetches no more work after a task had to wait for the upstream cap. */
export const DEFER_BACKOFF_MS = 1000;

/** A task whose handler keeps failing unexpectedly ends failed instead of retrying forever. */
export const MAX_ATTEMPTS = 5;

/**
 * Runs one step of a task under a lease, so that any number of workers on any number of instances
 * can share the work: each task is held by one worker at a time, its lease is renewed by a heartbeat,
 * and a worker that dies (kill -9) simply stops renewing, so the sweeper hands the task to another.
 * Every state change is guarded by the lease, so a late or duplicate worker never moves a finished task.
 *
 * A database outage is weather: the claim and every state change wait for the database to answer again
 * (a finished result is not thrown away), and a step that failed only because the database went away
 * is put back to run again, not counted as a failure.
 */
@Injectable()
export class TaskRunner {
  private readonly logger = new Logger(TaskRunner.name);
  /** This instance's worker identity (lease owner). */
  readonly worker = `${process.pid}-${randomUUID().slice(0, 8)}`;

  constructor(
    private readonly config: AppConfig,
    private readonly database: DatabaseStatus,
    private readonly metrics: MetricsService,
  ) {}

  /**
   * Runs one step of the task. A task that cannot start yet (the upstream cap is reached) is sent back
   * to the queue, and the consumer is asked to back off for a moment.
   */
  async run<T, R>(id: string, spec: TaskStep<T, R>): Promise<JobResult> {
    const durably = <V>(work: () => Promise<V>) => this.database.retryWhileUnavailable(work);
    const claim = await durably(() => spec.lease.claim(id, this.worker, this.config.workerLeaseS));
    if (!claim) return; // finished, deleted, or held by a live worker: nothing to do
    if (claim.kind === 'deferred') {
      await durably(() => spec.defer());
      return { backOffMs: DEFER_BACKOFF_MS };
    }
    const { task } = claim;
    const labels = spec.labels(task);
    if (claim.firstStart) this.metrics.queueWait.observe(labels, claim.waitedS);
    this.metrics.tasksRunning.inc(labels);
    try {
      await this.runClaimed(id, task, spec, durably);
    } finally {
      this.metrics.tasksRunning.dec(labels);
    }
  }

  private async runClaimed<T, R>(id: string, task: T, spec: TaskStep<T, R>, durably: <V>(work: () => Promise<V>) => Promise<V>): Promise<void> {
    const leaseS = this.config.workerLeaseS;
    if (spec.deadlineOf(task).getTime() <= Date.now()) {
      await durably(() => spec.lease.fail(id, this.worker, spec.timeoutReason));
      return;
    }
    const beat = setInterval(() => {
      spec.lease.heartbeat(id, this.worker, leaseS).catch((err: unknown) => {
        if (!this.database.report(err)) this.logger.warn(`heartbeat failed for ${id}: ${String(err)}`);
      });
    }, (leaseS * 1000) / 3);
    try {
      let outcome: StepOutcome<R>;
      try {
        outcome = await spec.step(task);
      } catch (err) {
        if (!(err instanceof TaskFailure) && (await this.database.confirm(err))) {
          // The step needed the database and it went away: not the task's fault. Put it back to run again.
          this.logger.warn(`task ${id} interrupted by a database outage; it will run again when the database answers`);
          await durably(() => spec.lease.release(id, this.worker, 0));
          await durably(() => spec.next(0));
          return;
        }
        throw err;
      }
      switch (outcome.kind) {
        case 'done':
          if (!(await durably(() => spec.complete(task, this.worker, outcome.result)))) {
            // Too late (the deadline passed: fail it, if it is still ours) or taken over by another worker.
            const failed = await durably(() => spec.lease.fail(id, this.worker, spec.timeoutReason));
            this.logger.warn(`task ${id} finished too late; ${failed ? 'it failed on its deadline' : 'another worker or the sweeper had already ended it'}; result dropped`);
          }
          return;
        case 'failed':
          await durably(() => spec.lease.fail(id, this.worker, outcome.reason));
          return;
        case 'wait':
          await durably(() => spec.lease.release(id, this.worker, outcome.seconds + leaseS));
          await durably(() => spec.next(outcome.seconds));
          return;
        case 'busy':
          await durably(() => spec.lease.postpone(id, this.worker, outcome.seconds, leaseS));
          await durably(() => spec.next(outcome.seconds));
          return;
      }
    } catch (err) {
      if (err instanceof TaskFailure) {
        await durably(() => spec.lease.fail(id, this.worker, err.message));
        return;
      }
      if (spec.attemptsOf(task) >= MAX_ATTEMPTS) {
        this.logger.error({ msg: `task ${id} failed ${MAX_ATTEMPTS} times; giving up`, err });
        await durably(() => spec.lease.fail(id, this.worker, 'internal error while processing the task'));
        return;
      }
      await durably(() => spec.lease.release(id, this.worker, 0, true));
      throw err; // the queue retries the job with backoff
    } finally {
      clearInterval(beat);
    }
  }
}
