import { randomUUID } from 'node:crypto';
import type { TaskLease } from '../../common/tasks/task-runner.js';
import type { Prisma } from '../../generated/prisma/client.js';
import { type JobName, RESUME_PRIORITY } from '../queue/jobs.js';
import { QueueService } from '../queue/queue.service.js';
import type { SubmitMarks } from '../relay/upstream-client.js';
import type { PrismaService } from './prisma.service.js';
import { type SqlExecutor, sqlExecutorOf } from './sql-executor.js';
import { camelRow, prepared, Statement } from './task-insert.js';

/** How one task table names its state: all three follow waiting → processing → done | failed. */
export interface TaskTableSpec {
  table: 'expand_tasks' | 'video_generations' | 'audio_uploads';
  status: 'status' | 'state';
  waiting: string;
  /** The state while a worker has it; audio uploads stay `pending` (their API shows pending | ready | failed). */
  processing: string;
  done: string;
  /** Column that holds the failure reason. */
  message: 'status_message' | 'failure_reason' | 'error';
  /**
   * At most this many tasks of the table (all instances) may have started and not ended: the upstream's
   * capacity (EXPAND_MAX_RUNNING…). A task that has not started waits while the table is full.
   */
  maxRunning?: number;
  /**
   * The column naming where a row's status changes are notified (callback_url). Starting a task is the
   * one change that concerns nothing else, so a start of a row without one takes a single statement.
   */
  notifyColumn?: 'callback_url';
}

/** What a claim got: the task (and, the first time, how long it waited since acceptance), or nothing. */
export type ClaimOutcome =
  /** `row`: the started row (camelCase fields, as Prisma reads them), when the claim read it. */
  | { kind: 'claimed'; firstStart: boolean; waitedS: number; row?: Record<string, unknown> }
  /** The task has not started and the table's maxRunning tasks are running: try again later. */
  | { kind: 'deferred' }
  /** Finished, deleted, or held by a live worker. */
  | null;

/** A task's row as a claim reads it. */
interface ClaimState {
  previous: string;
  fresh: boolean;
  claimable: boolean;
  waited_s: number;
  /** Whether the row's notifyColumn is set (when the table has one). */
  notifies?: boolean;
}

/**
 * Runs inside the transaction of a state change (to `status`): enqueues jobs, writes notifications.
 * `notified`, when the caller knows it, is the subset of `ids` whose rows name where to notify (the
 * table's notifyColumn is set), so a hook need not read the others to find out.
 */
export type InTransaction = (db: SqlExecutor, tx: Prisma.TransactionClient, ids: string[], status: string, notified?: string[]) => Promise<void>;

/** Sends the job that runs task `id`, with the job id `jobId` (and a queue priority), inside the transaction `db`. */
export type EnqueueTask = (db: SqlExecutor, id: string, jobId: string, priority?: number) => Promise<void>;

/** Runs every hook, in order, in the same transaction. */
export function allInTransaction(...hooks: (InTransaction | undefined)[]): InTransaction {
  return async (db, tx, ids, status, notified) => {
    for (const hook of hooks) if (hook) await hook(db, tx, ids, status, notified);
  };
}

/**
 * The bookkeeping of a final state as SQL (slots and credits given back), for an end that takes one
 * statement: a task nobody is notified of (see TaskTable.end). The CTEs read `changed` (the rows that
 * changed: id, owner, slots, credits, created_at) and the last is named `settled`; its rows go to
 * `record` once the statement committed. Must do what the table's InTransaction hooks do for such a task.
 */
export interface EndSql {
  ctes(s: Statement, to: string): string[];
  record(rows: Record<string, unknown>[], to: string): void;
}

/** Rows of another table written with a task's final state, only when the state changed (its result's media). */
export interface EndChildRows {
  table: string;
  /** snake_case columns; each row has the same. */
  rows: Record<string, unknown>[];
  /** An ON CONFLICT clause, when a row may already be there. */
  onConflict?: string;
}

/** A lease marker: the sweeper took the task from a worker that stopped renewing its lease. */
const ABANDONED = '~abandoned';

/**
 * The guarded state changes shared by the three task tables, in SQL on the database's clock.
 * Each changes one row only from the state it expects (`WHERE id = $1 AND status = …`), so a late or
 * duplicate worker can never move a finished task. Table and column names come from TaskTableSpec,
 * never from a request.
 */
export class TaskTable {
  /**
   * The usual claim in one statement: when nothing else has to happen in the start's transaction (no cap
   * to count under a lock, nobody to notify of the start), the row is started; otherwise it is only read,
   * and the transaction of claimInTransaction decides. Answers the started row with it (the runner needs
   * it), so a claim is one round trip. $1 id, $2 worker, $3 lease in seconds.
   */
  private readonly quietClaimSql: string;
  /** Set by the module: the final states' bookkeeping as SQL, so an end nobody is notified of takes one statement. */
  endSql?: EndSql;

  constructor(
    private readonly prisma: PrismaService,
    private readonly spec: TaskTableSpec,
  ) {
    const { processing, maxRunning, notifyColumn } = spec;
    const quiet = ['old.claimable', `(old.previous = '${processing}'${notifyColumn ? ' OR NOT old.notifies' : ''})`];
    if (maxRunning !== undefined) quiet.push('NOT old.fresh');
    this.quietClaimSql = `WITH old AS (${this.claimStateSql(true)}),
         started AS (${this.startSql(`FROM old WHERE t.id = old.id AND ${quiet.join(' AND ')}`)} RETURNING t.*)
       SELECT old.previous, old.fresh, old.claimable, old.waited_s, started.* FROM old LEFT JOIN started ON true`;
  }

  /**
   * waiting → processing, or processing → processing when nobody holds a live lease. `attempts` counts
   * the first start and take-overs (dead worker, unexpected error), not resumptions after a planned wait.
   * The first start records started_at and moves the deadline to start now: time spent waiting in the
   * queue (behind other owners' work, or the upstream cap) does not count against it. Under maxRunning,
   * a first start takes a table-wide lock and counts the running tasks, so instances cannot both take
   * the last place; its start is the time of the update (statement_timestamp), after the count.
   */
  async claim(id: string, worker: string, leaseS: number, inTx?: InTransaction): Promise<ClaimOutcome> {
    const [fast] = await this.prisma.$queryRawUnsafe<(Omit<ClaimState, 'notifies'> & { id: string | null })[]>(this.quietClaimSql, id, worker, leaseS);
    if (!fast?.claimable) return null;
    if (fast.id !== null) {
      const { previous: _p, fresh, claimable: _c, waited_s: waitedS, ...row } = fast;
      return { kind: 'claimed', firstStart: fresh, waitedS, row: camelRow(row) };
    }
    return this.claimInTransaction(id, worker, leaseS, inTx);
  }

  /** What a state change returns of each row it changed: its id, and whether it names where to notify. */
  private get returning(): string {
    return this.spec.notifyColumn ? `id, "${this.spec.notifyColumn}" IS NOT NULL AS notifies` : 'id';
  }

  /** Of these changed rows, those to notify; undefined when the table has no notify column. */
  private notified(rows: { id: string; notifies?: boolean }[]): string[] | undefined {
    return this.spec.notifyColumn ? rows.filter((r) => r.notifies).map((r) => r.id) : undefined;
  }

  /** The row's state as a claim sees it, locked (`FOR UPDATE`) for the rest of the claim. */
  private claimStateSql(withNotify = false): string {
    const { table, status, waiting, processing, notifyColumn } = this.spec;
    return `SELECT id, "${status}"::text AS previous, started_at IS NULL AS fresh, extract(epoch FROM now() - created_at)::float8 AS waited_s,
           ("${status}" IN ('${waiting}', '${processing}') AND (lease_owner IS NULL OR lease_owner = '${ABANDONED}' OR lease_until < now())) AS claimable
           ${withNotify && notifyColumn ? `, "${notifyColumn}" IS NOT NULL AS notifies` : ''}
         FROM "${table}" WHERE id = $1::uuid FOR UPDATE`;
  }

  /** The start (or take-over) of a claim: `where` picks the row; $2 is the worker, $3 the lease in seconds. */
  private startSql(where: string): string {
    const { table, status, processing } = this.spec;
    return `UPDATE "${table}" t SET "${status}" = '${processing}',
           attempts = t.attempts + CASE WHEN t.attempts = 0 OR t.lease_owner IS NOT NULL THEN 1 ELSE 0 END,
           updated_at = CASE WHEN t."${status}" <> '${processing}' THEN now() ELSE t.updated_at END,
           started_at = COALESCE(t.started_at, statement_timestamp()),
           deadline_at = CASE WHEN t.started_at IS NULL THEN statement_timestamp() + (t.deadline_at - t.created_at) ELSE t.deadline_at END,
           lease_owner = $2, lease_until = now() + make_interval(secs => $3)
         ${where}`;
  }

  /** A claim that counts the running tasks under the cap, or notifies the start, in one transaction. */
  private claimInTransaction(id: string, worker: string, leaseS: number, inTx?: InTransaction): Promise<ClaimOutcome> {
    const { table, status, processing, maxRunning } = this.spec;
    return this.prisma.$transaction(async (tx) => {
      const [old] = await tx.$queryRawUnsafe<ClaimState[]>(this.claimStateSql(true), id);
      if (!old?.claimable) return null;
      if (maxRunning !== undefined && old.fresh) {
        await tx.$queryRawUnsafe('SELECT 1 FROM pg_advisory_xact_lock(hashtext($1))', `mgw-running:${table}`);
        const [{ running }] = await tx.$queryRawUnsafe<{ running: number }[]>(
          `SELECT count(*)::int AS running FROM "${table}" WHERE "${status}" = '${processing}' AND started_at IS NOT NULL`,
        );
        if (running >= maxRunning) return { kind: 'deferred' } as const;
      }
      await tx.$executeRawUnsafe(
        this.startSql('WHERE t.id = $1::uuid'),
        id,
        worker,
        leaseS,
      );
      if (inTx && old.previous !== processing) await inTx(sqlExecutorOf(tx), tx, [id], processing, this.notified([{ id, notifies: old.notifies }]));
      return { kind: 'claimed', firstStart: old.fresh, waitedS: old.waited_s } as const;
    });
  }

  /**
   * The lease operations the task runner needs. The task is the started row when the claim read it and
   * `model` is given (the table's Prisma model is its columns alone); otherwise `find` reads it. Starting
   * and failing run `onChange()` in the same transaction (notifications).
   */
  lease<T>(find: (id: string) => Promise<T | null>, onChange: () => InTransaction | undefined, model?: (row: Record<string, unknown>) => T): TaskLease<T> {
    return {
      claim: async (id, worker, leaseS) => {
        const outcome = await this.claim(id, worker, leaseS, onChange());
        if (outcome?.kind !== 'claimed') return outcome;
        const { row, ...claimed } = outcome;
        const task = row && model ? model(row) : await find(id);
        return task ? { ...claimed, task } : null;
      },
      heartbeat: (id, worker, leaseS) => this.heartbeat(id, worker, leaseS),
      release: (id, worker, untilS, failed) => this.release(id, worker, untilS, failed),
      postpone: (id, worker, seconds, leaseS) => this.postpone(id, worker, seconds, leaseS),
      fail: (id, worker, reason) => this.fail(id, worker, reason, onChange()),
    };
  }

  async heartbeat(id: string, worker: string, leaseS: number): Promise<boolean> {
    const { table, status, processing } = this.spec;
    const count = await this.prisma.$executeRawUnsafe(
      `UPDATE "${table}" SET lease_until = now() + make_interval(secs => $3) WHERE id = $1::uuid AND "${status}" = '${processing}' AND lease_owner = $2`,
      id,
      worker,
      leaseS,
    );
    return count === 1;
  }

  /**
   * Lets go of the task: another step may take it at once, or the sweeper after `untilS`. After an
   * unexpected error (`failed`) the next take counts as a new attempt.
   */
  async release(id: string, worker: string, untilS: number, failed = false): Promise<void> {
    const { table, status, processing } = this.spec;
    await this.prisma.$executeRawUnsafe(
      `UPDATE "${table}" SET lease_owner = ${failed ? `'${ABANDONED}'` : 'NULL'}, lease_until = now() + make_interval(secs => $3) WHERE id = $1::uuid AND "${status}" = '${processing}' AND lease_owner = $2`,
      id,
      worker,
      untilS,
    );
  }

  /** processing → failed, while this worker holds the lease. */
  async fail(id: string, worker: string, reason: string, inTx?: InTransaction): Promise<boolean> {
    return this.end(id, worker, 'failed', { [this.spec.message]: reason }, inTx);
  }

  /**
   * processing → done, while this worker holds the lease and the deadline has not passed (a result that
   * comes too late does not count); `columns` are set in the same update. The finishing worker stays
   * recorded in lease_owner (with no lease_until), to tell which instance ran the task. `children` (the
   * result's media rows) are written in the same statement, only when the task did change.
   */
  async finish(id: string, worker: string, columns: Record<string, unknown> = {}, inTx?: InTransaction, children: EndChildRows[] = []): Promise<boolean> {
    return this.end(id, worker, this.spec.done, { [this.spec.message]: null, lease_owner: worker, ...columns }, inTx, 'AND deadline_at > now()', children);
  }

  /**
   * The guarded change to a final state `to`. A task nobody is notified of (its notifyColumn is NULL)
   * ends in one statement, its bookkeeping included (endSql); otherwise, or when that changed nothing,
   * in a transaction that runs `inTx` after the change (which changes nothing when the lease is gone).
   */
  private async end(id: string, worker: string, to: string, columns: Record<string, unknown>, inTx?: InTransaction, guard = '', children: EndChildRows[] = []): Promise<boolean> {
    if (this.endSql && (await this.endQuietly(this.endSql, id, worker, to, columns, guard, children))) return true;
    return this.prisma.$transaction(async (tx) => {
      const s = new Statement();
      const text = this.endStatement(s, id, worker, to, columns, guard, children, []);
      const rows = await tx.$queryRawUnsafe<{ id: string; notifies?: boolean }[]>(`${text} SELECT id${this.spec.notifyColumn ? ', notifies' : ''} FROM changed`, ...s.values);
      if (rows.length === 1 && inTx) await inTx(sqlExecutorOf(tx), tx, [id], to, this.notified(rows));
      return rows.length === 1;
    });
  }

  /** The end of a task nobody is notified of, with its bookkeeping, in one statement; false when nothing changed. */
  private async endQuietly(endSql: EndSql, id: string, worker: string, to: string, columns: Record<string, unknown>, guard: string, children: EndChildRows[]): Promise<boolean> {
    const s = new Statement();
    const quiet = this.spec.notifyColumn ? `${guard} AND "${this.spec.notifyColumn}" IS NULL` : guard;
    const text = this.endStatement(s, id, worker, to, columns, quiet, children, endSql.ctes(s, to));
    const { rows } = await this.prisma.pool.query<{ changed: number; settled: Record<string, unknown>[] }>(
      prepared(`${text} SELECT (SELECT count(*) FROM changed)::int AS changed, (SELECT COALESCE(json_agg(settled), '[]') FROM settled) AS settled`, s.values),
    );
    if (rows[0].changed !== 1) return false;
    endSql.record(rows[0].settled, to);
    return true;
  }

  /**
   * `WITH changed AS (the guarded UPDATE), the children's INSERTs, then \`more\` CTEs` (without the final
   * SELECT). The children are inserted only when the task changed.
   */
  private endStatement(s: Statement, id: string, worker: string, to: string, columns: Record<string, unknown>, guard: string, children: EndChildRows[], more: string[]): string {
    const { table, status, processing, notifyColumn } = this.spec;
    const assignments: Record<string, unknown> = { lease_owner: null, ...columns };
    const sets = Object.entries(assignments).map(([name, value]) => `"${name}" = ${s.param(value)}`).join(', ');
    const notifies = notifyColumn ? `, "${notifyColumn}" IS NOT NULL AS notifies` : '';
    const parts = [
      `changed AS (UPDATE "${table}" SET "${status}" = '${to}', ${sets}, finished_at = now(), updated_at = now(), lease_until = NULL
         WHERE id = ${s.param(id)}::uuid AND "${status}" = '${processing}' AND lease_owner = ${s.param(worker)} ${guard}
         RETURNING id, owner, slots, credits, created_at${notifies})`,
      ...children
        .filter((c) => c.rows.length > 0)
        .map((c, i) => {
          const names = Object.keys(c.rows[0]).map((n) => `"${n}"`).join(', ');
          // typed by the table's own row type, so no value needs a cast
          return `child${i} AS (INSERT INTO "${c.table}" (${names}) SELECT ${names} FROM jsonb_populate_recordset(NULL::"${c.table}", ${s.param(JSON.stringify(c.rows))}::jsonb) WHERE EXISTS (SELECT 1 FROM changed) ${c.onConflict ?? ''})`;
        }),
      ...more,
    ];
    return `WITH ${parts.join(',\n')}`;
  }

  /**
   * Started tasks past their deadline end failed, whoever holds them. A task that has not started yet
   * waits in the queue without a deadline: it was accepted, and runs when its turn comes.
   */
  async failOverdue(reason: string, inTx?: InTransaction): Promise<string[]> {
    const { table, status, waiting, processing, message } = this.spec;
    return this.prisma.$transaction(async (tx) => {
      const rows = await tx.$queryRawUnsafe<{ id: string; notifies?: boolean }[]>(
        `UPDATE "${table}" SET "${status}" = 'failed', "${message}" = $1, finished_at = now(), updated_at = now(), lease_owner = NULL, lease_until = NULL
         WHERE id IN (SELECT id FROM "${table}" WHERE "${status}" IN ('${waiting}', '${processing}') AND started_at IS NOT NULL AND deadline_at < now() LIMIT 500 FOR UPDATE SKIP LOCKED)
         RETURNING ${this.returning}`,
        reason,
      );
      const ids = rows.map((r) => r.id);
      if (ids.length > 0 && inTx) await inTx(sqlExecutorOf(tx), tx, ids, 'failed', this.notified(rows));
      return ids;
    });
  }

  /**
   * Processing tasks whose lease ran out (their worker died) get a new job, in the same transaction.
   * The lease is pushed out so that one sweeper, once, re-queues each.
   */
  async requeueAbandoned(leaseS: number, enqueue: EnqueueTask): Promise<string[]> {
    const { table, status, processing } = this.spec;
    return this.prisma.$transaction(async (tx) => {
      const rows = await tx.$queryRawUnsafe<{ id: string }[]>(
        `UPDATE "${table}" SET lease_owner = '${ABANDONED}', lease_until = now() + make_interval(secs => $1)
         WHERE id IN (SELECT id FROM "${table}" WHERE "${status}" = '${processing}' AND lease_until < now() LIMIT 500 FOR UPDATE SKIP LOCKED)
         RETURNING id`,
        leaseS,
      );
      await this.enqueueEach(tx, rows.map((r) => r.id), enqueue, RESUME_PRIORITY);
      return rows.map((r) => r.id);
    });
  }

  /**
   * Waiting tasks nobody has claimed whose last job can no longer run them: a worker took the job and
   * died before claiming the task (the job stays "active" until pg-boss's expiry, an hour away), or the
   * job ended without the task starting (it failed while the database was down). Each gets a new job,
   * in the same transaction; a task whose job is merely queued is left alone.
   */
  async requeueOrphaned(queue: JobName, graceS: number, enqueue: EnqueueTask): Promise<string[]> {
    const { table, status, waiting } = this.spec;
    return this.prisma.$transaction(async (tx) => {
      const rows = await tx.$queryRawUnsafe<{ id: string }[]>(
        `SELECT t.id FROM "${table}" t
         WHERE t."${status}" = '${waiting}' AND t.lease_until IS NULL AND t.created_at < now() - make_interval(secs => $1)
           AND ${QueueService.deadJobCondition('t.job_id', queue, graceS)}
         ORDER BY t.created_at LIMIT 200 FOR UPDATE OF t SKIP LOCKED`,
        graceS,
      );
      await this.enqueueEach(tx, rows.map((r) => r.id), enqueue);
      return rows.map((r) => r.id);
    });
  }

  /**
   * A task that could not start (see claim: deferred) gets a new job with the same priority, recorded on
   * the task in the same transaction, so it keeps its place among the waiting work.
   */
  async defer(id: string, enqueue: EnqueueTask, priority: number): Promise<void> {
    await this.prisma.$transaction((tx) => this.enqueueEach(tx, [id], enqueue, priority));
  }

  /** Sends a job for each task and records its id on the task, in the transaction `tx`. */
  private async enqueueEach(tx: Prisma.TransactionClient, ids: string[], enqueue: EnqueueTask, priority?: number): Promise<void> {
    const db = sqlExecutorOf(tx);
    for (const id of ids) {
      const jobId = randomUUID();
      await tx.$executeRawUnsafe(`UPDATE "${this.spec.table}" SET job_id = $2::uuid WHERE id = $1::uuid`, id, jobId);
      await enqueue(db, id, jobId, priority);
    }
  }

  /**
   * The tasks `worker` still holds (its instance is shutting down) go back to the queue at once, each
   * with a new job in the same transaction, so another instance takes them without waiting for the
   * lease to run out. A late write of the old worker changes nothing: every write is guarded by the lease.
   */
  async handBack(worker: string, leaseS: number, enqueue: EnqueueTask): Promise<string[]> {
    const { table, status, processing } = this.spec;
    return this.prisma.$transaction(async (tx) => {
      const rows = await tx.$queryRawUnsafe<{ id: string }[]>(
        `UPDATE "${table}" SET lease_owner = '${ABANDONED}', lease_until = now() + make_interval(secs => $2)
         WHERE "${status}" = '${processing}' AND lease_owner = $1 AND lease_until IS NOT NULL RETURNING id`,
        worker,
        leaseS,
      );
      await this.enqueueEach(tx, rows.map((r) => r.id), enqueue, RESUME_PRIORITY);
      return rows.map((r) => r.id);
    });
  }

  /** Voids every live lease (the previous run of a sole instance died holding them), so the sweeper re-queues at once. */
  async expireLeases(): Promise<number> {
    const { table, status, processing } = this.spec;
    return this.prisma.$executeRawUnsafe(
      `UPDATE "${table}" SET lease_owner = '${ABANDONED}', lease_until = now() - interval '1 second' WHERE "${status}" = '${processing}' AND lease_owner IS NOT NULL`,
    );
  }

  /** How task `id`, held by `worker`, records its create request upstream (see submitOnce). */
  submitMarks(id: string, worker: string): SubmitMarks {
    const { table } = this.spec;
    return {
      markSubmitting: async () => void (await this.prisma.$executeRawUnsafe(`UPDATE "${table}" SET submit_started_at = now() WHERE id = $1::uuid AND lease_owner = $2`, id, worker)),
      clearSubmitting: async () => void (await this.prisma.$executeRawUnsafe(`UPDATE "${table}" SET submit_started_at = NULL WHERE id = $1::uuid AND lease_owner = $2`, id, worker)),
      saveUpstreamId: async (upstreamId) => void (await this.prisma.$executeRawUnsafe(`UPDATE "${table}" SET upstream_id = $3 WHERE id = $1::uuid AND lease_owner = $2`, id, worker, upstreamId)),
    };
  }

  /**
   * Lets go of a task the upstream did not take (it is busy) until `seconds` from now, and moves its
   * start there too: the time spent waiting for the upstream does not count against the deadline.
   */
  async postpone(id: string, worker: string, seconds: number, leaseS: number): Promise<void> {
    const { table, status, processing } = this.spec;
    await this.prisma.$executeRawUnsafe(
      `UPDATE "${table}" SET lease_owner = NULL, lease_until = now() + make_interval(secs => $3::float8 + $4::float8),
         deadline_at = now() + make_interval(secs => $3::float8) + (deadline_at - started_at), started_at = now() + make_interval(secs => $3::float8)
       WHERE id = $1::uuid AND "${status}" = '${processing}' AND lease_owner = $2`,
      id,
      worker,
      seconds,
      leaseS,
    );
  }

  /** Finished tasks older than the cutoff are marked as having lost their media; returns their ids. */
  async markMediaExpired(cutoff: Date): Promise<string[]> {
    const rows = await this.prisma.$queryRawUnsafe<{ id: string }[]>(
      `UPDATE "${this.spec.table}" SET media_expired_at = now() WHERE finished_at < $1 AND media_expired_at IS NULL RETURNING id`,
      cutoff,
    );
    return rows.map((r) => r.id);
  }
}
