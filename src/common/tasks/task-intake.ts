import { Inject, Injectable } from '@nestjs/common';
import { AppConfig } from '../../infra/config/app-config.js';
import { retryOnDeadlock } from '../../infra/database/database-errors.js';
import { MetricsService } from '../../infra/metrics/metrics.service.js';
import type { DetailRows } from '../../infra/prisma/statement.js';
import { type CapturedTrace, Tracing } from '../../infra/tracing/tracing.service.js';
import { AppError } from '../errors/app-error.js';
import { type Admission, type Price, type TaskHooks, TASK_HOOKS } from './task-kind.js';
import { type NewTaskRow, TaskRepository } from './task.repository.js';

/** At most this many tasks in one statement… */
const MAX_BATCH = 64;
/** …and at most this many bytes of detail rows (a large input image goes alone). */
const MAX_BATCH_BYTES = 4 * 1024 * 1024;
/** Seconds a caller should wait when its task found no turn in time. */
const BUSY_RETRY_AFTER_S = 2;

interface Entry {
  task: NewTaskRow;
  details: DetailRows[];
  price: Price;
  bytes: number;
  resolve(admission: Admission): void;
  reject(err: unknown): void;
  timer?: NodeJS.Timeout;
  /** With tracing: the submitting request's context, which a statement sent for it runs in. */
  trace?: CapturedTrace;
}

/**
 * At most this many statements of acceptance in flight at once on an instance. Each takes every submission
 * waiting (of the owners not already in one), so more mostly split batches. The accept bench's 16 teams (2
 * cores, 32 connections; requests per second against the floor's) measured 1.34-1.53 with one, 1.09-1.29
 * with two, 0.93-0.98 with four, and 0.63-0.83 sending a statement per owner as before. Two, not one: a
 * slow statement (a batch of large input images, a counter row another instance holds) does not then hold
 * up every other owner's submissions.
 */
const IN_FLIGHT = 2;

/**
 * Accepts tasks into the database, concurrent submissions grouped into one statement.
 *
 * Admission locks each owner's counter row from the statement that inserts a task until its commit (so
 * instances cannot both take the last slot): submissions of one owner are serialized by that lock. Sent
 * one statement each, they queue in PostgreSQL's lock manager, each holding a connection and a round
 * trip; and each statement costs the gateway and PostgreSQL about as much whether it carries one task or
 * thirty. Here at most IN_FLIGHT statements are in flight; submissions that come meanwhile wait in memory
 * and then go together, in arrival order, as one statement (TaskRepository.insertTasks), whatever their
 * owners: admission decides each owner's in turn, as if they had come one by one. An owner is in one
 * statement at a time (its submissions keep their order, and never wait on each other's lock), and a
 * statement locks its owners' counters in the byte order of their names (two statements, of this instance or
 * another, never wait on each other in a cycle). A submission that finds a statement free goes at once.
 *
 * A statement that fails on a duplicate external id is sent again one task at a time, so the conflict is
 * answered to the task that has it; any other failure is every task's. A submission waits for its turn at
 * most DATABASE_POOL_TIMEOUT_MS, as it would wait for a connection, then answers 503.
 */
@Injectable()
export class TaskIntake {
  /** Submissions waiting for a statement, in arrival order. */
  private readonly waiting: Entry[] = [];
  /** Owners with a statement in flight. */
  private readonly busy = new Set<string>();
  private inFlight = 0;

  constructor(
    private readonly config: AppConfig,
    private readonly tasks: TaskRepository,
    private readonly tracing: Tracing,
    private readonly metrics: MetricsService,
    @Inject(TASK_HOOKS) private readonly hooks: TaskHooks,
  ) {}

  /** Admits and inserts the task with its detail rows and its job; answers its admission. */
  accept(task: NewTaskRow, details: DetailRows[], price: Price): Promise<Admission> {
    return new Promise<Admission>((resolve, reject) => {
      const entry: Entry = { task, details, price, bytes: sizeOf(details), resolve, reject };
      if (this.inFlight < IN_FLIGHT && !this.busy.has(task.owner)) {
        void this.run([entry]);
        return;
      }
      entry.trace = this.tracing.capture();
      this.waiting.push(entry);
      this.metrics.intakeWaiting.set(this.waiting.length);
      entry.timer = setTimeout(() => {
        const at = this.waiting.indexOf(entry);
        if (at < 0) return;
        this.waiting.splice(at, 1);
        this.metrics.intakeWaiting.set(this.waiting.length);
        reject(new AppError('UNAVAILABLE', 'The database did not take this task in time; retry later', BUSY_RETRY_AFTER_S));
      }, this.config.databasePoolTimeoutMs);
    });
  }

  /** Runs a statement for `batch`, then, while a statement is free, one for what waits. */
  private async run(batch: Entry[]): Promise<void> {
    const owners = new Set(batch.map((e) => e.task.owner));
    this.inFlight++;
    for (const owner of owners) this.busy.add(owner);
    try {
      await this.insert(batch);
    } finally {
      this.inFlight--;
      for (const owner of owners) this.busy.delete(owner);
    }
    while (this.inFlight < IN_FLIGHT) {
      const next = this.nextBatch();
      if (next.length === 0) return;
      // in the first one's trace, rather than that of the request whose statement has just ended
      void this.tracing.within(next[0].trace, () => this.run(next));
    }
  }

  /** The waiting submissions of owners with no statement in flight, in arrival order, within a statement's bounds. */
  private nextBatch(): Entry[] {
    const next: Entry[] = [];
    let bytes = 0;
    for (let i = 0; i < this.waiting.length && next.length < MAX_BATCH; ) {
      const entry = this.waiting[i];
      if (this.busy.has(entry.task.owner) || (next.length > 0 && bytes + entry.bytes > MAX_BATCH_BYTES)) {
        i++;
        continue;
      }
      this.waiting.splice(i, 1);
      clearTimeout(entry.timer);
      bytes += entry.bytes;
      next.push(entry);
    }
    if (next.length > 0) this.metrics.intakeWaiting.set(this.waiting.length);
    return next;
  }

  /** One statement for `batch`: its owners' tasks together, owners in the order of their names (the order their counters are locked). */
  private async insert(batch: Entry[]): Promise<void> {
    const byOwner = new Map<string, Entry[]>();
    for (const entry of batch) byOwner.set(entry.task.owner, [...(byOwner.get(entry.task.owner) ?? []), entry]);
    // by their UTF-8 bytes, as PostgreSQL's "C" collation orders them (LimitsRepository.releaseCtes), whatever the database's collation
    const groups = [...byOwner.entries()].sort(([a], [b]) => Buffer.compare(Buffer.from(a), Buffer.from(b)));
    const ordered = groups.flatMap(([, entries]) => entries);
    const admission = this.hooks.admissionSql(groups.map(([owner, entries]) => ({ owner, tasks: entries.map((e) => ({ id: e.task.id, price: e.price })) })));
    try {
      // a deadlock's victim runs again: an insert whose external id matches a task ending at that moment waits
      // for the end's transaction (the unique check), which waits for this statement's lock on the owner's counters
      const answers = await retryOnDeadlock(() => this.tasks.insertTasks(ordered, admission));
      ordered.forEach((entry, i) => entry.resolve(answers[i]));
    } catch (err) {
      if (batch.length > 1 && (err as { code?: string }).code === '23505') {
        for (const entry of ordered) await this.insert([entry]);
        return;
      }
      for (const entry of batch) entry.reject(err);
    }
  }
}

function sizeOf(details: DetailRows[]): number {
  let bytes = 0;
  for (const d of details) for (const row of d.rows) for (const value of Object.values(row)) bytes += Buffer.isBuffer(value) ? value.length : 64;
  return bytes;
}
