import { Injectable, Logger, type OnApplicationBootstrap, type OnModuleDestroy } from '@nestjs/common';
import { AppConfig } from '../../infra/config/app-config.js';
import { DatabaseStatus } from '../../infra/database/database-status.service.js';
import { orphanGraceS } from '../../infra/queue/queue.service.js';
import { SweepLoop } from './sweep-loop.js';
import { TaskEnds } from './task-ends.js';
import { groupByKind, TaskLifecycle } from './task-lifecycle.js';
import { TaskRunner } from './task-runner.js';
import { type ChangedRow, TaskStatesRepository } from './task-states.repository.js';

/** How often the caps' counters are checked against the task table. */
const COUNTER_CHECK_MS = 60_000;

/**
 * On instances that run workers: every few seconds, fail what is past its deadline and hand tasks of dead
 * workers to the queue again: those whose lease ran out, and those whose job a worker took and died with
 * before claiming them. One statement each covers every kind. Several instances may sweep at once; each
 * change is guarded, so a task is re-queued by one of them only.
 */
@Injectable()
export class TaskSweeper implements OnApplicationBootstrap, OnModuleDestroy {
  private readonly logger = new Logger(TaskSweeper.name);
  private readonly loop: SweepLoop;
  /** Checks the caps' counters against the task table, once a minute (one count per counter: it grows with the tasks in flight). */
  private readonly counters: SweepLoop;

  constructor(
    private readonly config: AppConfig,
    database: DatabaseStatus,
    private readonly states: TaskStatesRepository,
    private readonly lifecycle: TaskLifecycle,
    private readonly runner: TaskRunner,
    private readonly ends: TaskEnds,
  ) {
    this.loop = new SweepLoop('tasks', config, database, this.logger, async (first) => {
      if (first) await this.sweepAtStart();
      await this.sweep();
    });
    this.counters = new SweepLoop('task counters', config, database, this.logger, () => this.checkCounters(), COUNTER_CHECK_MS);
  }

  onApplicationBootstrap(): void {
    this.loop.start();
    this.counters.start();
  }

  async onModuleDestroy(): Promise<void> {
    await Promise.all([this.loop.stop(), this.counters.stop()]);
  }

  /** The caps' counters are kept by the statements that start and end tasks; should one drift, it is set right. */
  async checkCounters(): Promise<void> {
    const corrected = await this.states.rebuildCounters();
    if (corrected.length) this.logger.warn(`task counters corrected (they had drifted from the task table): ${corrected.join(', ')}`);
  }

  async sweep(): Promise<void> {
    const reasons = Object.fromEntries(this.lifecycle.kinds.map((k) => [k.definition.name, this.lifecycle.timeoutReason(k)]));
    const overdue = await this.states.failOverdue(reasons, this.lifecycle.onChange);
    this.ends.announce(overdue.map((r) => r.id));
    this.report(overdue, 'task(s) failed: past their deadline');
    this.report(await this.states.requeueAbandoned(this.config.workerLeaseS), 'task(s) re-queued: their worker stopped renewing its lease');
    this.report(await this.states.requeueFenced(this.config.workerLeaseS), 'task(s) re-queued: claimed by a worker that had already stopped');
    this.report(await this.states.requeueOrphaned(orphanGraceS(this.config.workerLeaseS)), 'task(s) re-queued: their job was taken by a worker that stopped before starting them');
  }

  /** At shutdown: what this instance's worker still holds goes to the other instances now. */
  async handBack(worker: string): Promise<number> {
    try {
      const rows = await this.states.handBack(worker, this.config.workerLeaseS);
      this.report(rows, 'running task(s) handed back to the queue for another instance', 'log');
      return rows.length;
    } catch (err) {
      this.logger.warn(`could not hand back tasks: ${String(err)}`);
      return 0;
    }
  }

  /**
   * The first sweep of a sole instance (it owns its database: nobody else can hold a task) takes back at
   * once the leases a previous run of it left, never what this process already holds: a task claimed in
   * its first moments is its own, and voiding that lease would run the step twice.
   */
  async sweepAtStart(): Promise<void> {
    if (!this.config.soleInstance) return;
    const voided = await this.states.expireLeasesOfOthers(this.runner.worker).catch(() => 0);
    if (voided) this.logger.warn(`${voided} task(s) were left running by a previous run; taking them back`);
  }

  private report(rows: ChangedRow[], what: string, level: 'warn' | 'log' = 'warn'): void {
    for (const [kind, group] of groupByKind(rows)) this.logger[level](`${group.length} ${kind} ${what}`);
  }
}
