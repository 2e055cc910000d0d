import { Inject, Injectable } from '@nestjs/common';
import { AppConfig } from '../../infra/config/app-config.js';
import { retryOnDeadlock } from '../../infra/database/database-errors.js';
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
 * Accepts tasks into the database, an owner's concurrent submissions grouped into one statement.
 *
 * Admission locks the owner's counter row from the statement that inserts a task until its commit (so
 * instances cannot both take the last slot): submissions of one owner are serialized by that lock. Sent
 * one statement each, they queue in PostgreSQL's lock manager, each holding a connection and a round
 * trip. Here, while one statement of an owner is in flight, the owner's next submissions wait in memory
 * and then go together, in arrival order, as one statement (TaskRepository.insertTasks): admission
 * decides each in turn, as if they had come one by one. An idle owner's task goes at once, alone.
 *
 * A statement that fails on a duplicate external id is sent again one task at a time, so the conflict is
 * answered to the task that has it; any other failure is every task's. A submission waits for its turn at
 * most DATABASE_POOL_TIMEOUT_MS, as it would wait for a connection, then answers 503.
 */
@Injectable()
export class TaskIntake {
  /** Owners with a statement in flight, and the submissions waiting for it to end. */
  private readonly waiting = new Map<string, Entry[]>();

  constructor(
    private readonly config: AppConfig,
    private readonly tasks: TaskRepository,
    private readonly tracing: Tracing,
    @Inject(TASK_HOOKS) private readonly hooks: TaskHooks,
  ) {}

  /** Admits and inserts the task with its detail rows and its job; answers its admission. */
  accept(task: NewTaskRow, details: DetailRows[], price: Price): Promise<Admission> {
    return new Promise<Admission>((resolve, reject) => {
      const entry: Entry = { task, details, price, bytes: sizeOf(details), resolve, reject };
      const queue = this.waiting.get(task.owner);
      if (!queue) {
        this.waiting.set(task.owner, []);
        void this.run(task.owner, [entry]);
        return;
      }
      entry.trace = this.tracing.capture();
      queue.push(entry);
      entry.timer = setTimeout(() => {
        const at = queue.indexOf(entry);
        if (at < 0) return;
        queue.splice(at, 1);
        reject(new AppError('UNAVAILABLE', 'The database did not take this task in time; retry later', BUSY_RETRY_AFTER_S));
      }, this.config.databasePoolTimeoutMs);
    });
  }

  /** Runs a statement for `batch`, then one for whatever of the owner's submissions came meanwhile. */
  private async run(owner: string, batch: Entry[]): Promise<void> {
    await this.insert(owner, batch);
    const queue = this.waiting.get(owner)!;
    if (queue.length === 0) {
      this.waiting.delete(owner);
      return;
    }
    const next: Entry[] = [];
    let bytes = 0;
    while (queue.length > 0 && next.length < MAX_BATCH && (next.length === 0 || bytes + queue[0].bytes <= MAX_BATCH_BYTES)) {
      const entry = queue.shift()!;
      clearTimeout(entry.timer);
      bytes += entry.bytes;
      next.push(entry);
    }
    // in the first one's trace, rather than that of the request whose statement has just ended
    void this.tracing.within(next[0].trace, () => this.run(owner, next));
  }

  private async insert(owner: string, batch: Entry[]): Promise<void> {
    try {
      // a deadlock's victim runs again: an insert whose external id matches a task ending at that moment waits
      // for the end's transaction (the unique check), which waits for this statement's lock on the owner's counters
      const admissions = await retryOnDeadlock(() => this.tasks.insertTasks(batch, this.hooks.admissionSql(owner, batch.map((e) => ({ id: e.task.id, price: e.price })))));
      batch.forEach((entry, i) => entry.resolve(admissions[i]));
    } catch (err) {
      if (batch.length > 1 && (err as { code?: string }).code === '23505') {
        for (const entry of batch) await this.insert(owner, [entry]);
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
