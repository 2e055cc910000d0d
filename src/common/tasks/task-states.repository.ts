import { Injectable } from '@nestjs/common';
import { retryOnDeadlock } from '../../infra/database/database-errors.js';
import { storableJson, storableText } from '../../infra/database/storable-text.js';
import { PrismaService } from '../../infra/prisma/prisma.service.js';
import { type SqlExecutor, sqlExecutorOf } from '../../infra/prisma/sql-executor.js';
import { camelRow, type DetailRows, prepared, Statement, UNFLUSHED_COMMIT } from '../../infra/prisma/statement.js';
import { NEW_TASK_PRIORITY, RESUME_PRIORITY, taskJobNameSql } from '../../infra/queue/jobs.js';
import { QueueService } from '../../infra/queue/queue.service.js';
import type { SubmitMarks } from '../../infra/relay/upstream-client.js';
import { nextPollSql, type PollSchedule } from './poll-schedule.js';
import type { EndedTasks, FinalState, Task, TaskState, TaskTx } from './task-kind.js';

/** A row a state change changed: whether it names where to notify (callback_url). */
export interface ChangedRow {
  id: string;
  kind: string;
  notifies: boolean;
}

/** Runs in the transaction of a state change to `to` (notifications, the owner's slots): see TaskEngine.onChange. */
export type OnChange = (db: SqlExecutor, tx: TaskTx, rows: ChangedRow[], to: TaskState) => Promise<void>;

/** The one-statement bookkeeping of an end nobody is notified of (TaskHooks.settleCtes and recordSettled). */
export interface SettleSql {
  ctes(s: Statement, to: FinalState): string[];
  record(rows: EndedTasks[], to: FinalState): void;
}

/** How a kind's tasks are claimed: its upstream cap, and whether starting changes the state its API shows. */
export interface ClaimRules {
  maxRunning?: number;
  notifiesStart: boolean;
}

/** What a claim got: the started task (and, the first time, how long it waited since acceptance), or nothing. */
export type ClaimOutcome =
  | { kind: 'claimed'; task: Task; firstStart: boolean; waitedS: number }
  /** The task has not started and its kind's maxRunning tasks are running: try again later. */
  | { kind: 'deferred' }
  /** Finished, deleted, or held by a live worker. */
  | null;

interface ClaimState {
  previous: TaskState;
  fresh: boolean;
  claimable: boolean;
  waited_s: number;
  notifies: boolean;
}

/**
 * Who holds a running task: the worker that claimed it and the attempt its claim counted. The attempt fences
 * one claim from the next: every take-over (of a lease that ran out, was abandoned or handed back) counts a
 * new attempt, so a step that lost its lease writes nothing even when the new claim is its own worker's (the
 * sweeper gave its task a new job, and the same process took it).
 */
export interface Holder {
  worker: string;
  attempt: number;
  /** The queue's job the claim runs under, if any: completed by the statement that ends the task or has it watched (endStatement, watch). */
  jobId?: string;
}

/**
 * Whether `task`, read after a finish changed nothing, had been ended succeeded by this very claim: an
 * earlier try of the same finish landed and its answer was lost (the connection dropped at the commit). The
 * finishing worker stays in lease_owner, and no later claim can have counted an attempt on an ended task.
 */
export function succeededBy(task: Pick<Task, 'state' | 'leaseOwner' | 'attempts'> | null, holder: Holder): boolean {
  return task?.state === 'succeeded' && task.leaseOwner === holder.worker && task.attempts === holder.attempt;
}

/** A lease marker: the sweeper took the task from a worker that stopped renewing its lease. */
const ABANDONED = '~abandoned';
const UNFINISHED = `state IN ('queued', 'running')`;
const RETURNING = 'id, kind, callback_url IS NOT NULL AS notifies';

/** The row's state as a claim sees it, locked for the rest of the claim. $1 id. */
const CLAIM_STATE = `SELECT id, kind, state AS previous, started_at IS NULL AS fresh, extract(epoch FROM now() - created_at)::float8 AS waited_s,
    (${UNFINISHED} AND (lease_owner IS NULL OR lease_owner = '${ABANDONED}' OR lease_until < now())) AS claimable,
    callback_url IS NOT NULL AS notifies
  FROM tasks WHERE id = $1::uuid FOR UPDATE`;

/**
 * The start (or take-over) of a claim; `where` picks the row, $2 is the worker, $3 the lease in seconds.
 * `attempts` counts the first start and take-overs, not resumptions after a planned wait. The first start
 * records started_at and moves the deadline to start now: time spent in the queue does not count against it.
 */
const startSql = (where: string) => `UPDATE tasks t SET state = 'running',
    attempts = t.attempts + CASE WHEN t.attempts = 0 OR t.lease_owner IS NOT NULL THEN 1 ELSE 0 END,
    updated_at = CASE WHEN t.state <> 'running' THEN now() ELSE t.updated_at END,
    started_at = COALESCE(t.started_at, statement_timestamp()),
    deadline_at = CASE WHEN t.started_at IS NULL THEN statement_timestamp() + (t.deadline_at - t.created_at) ELSE t.deadline_at END,
    lease_owner = $2, lease_until = now() + make_interval(secs => $3)
  ${where}`;

/**
 * The claim in one statement when nothing else has to happen in its transaction: no cap to count ($4:
 * the kind has none, or the task started before) and nobody to notify ($5: starting does not change the
 * state the kind shows, or the row has no callback_url, or it was running already). Otherwise the row is
 * only read, and claimInTransaction decides. Answers the started row itself. Its commit is not flushed
 * (UNFLUSHED_COMMIT): a step acts outside the database only after a flushed commit of its own (the submit
 * mark before a create, the task's end before its answer or callback), which takes the claim to disk too.
 */
const QUIET_CLAIM = `WITH old AS (${CLAIM_STATE}),
    started AS (${startSql(`FROM old WHERE t.id = old.id AND old.claimable AND (old.previous = 'running' OR NOT $5::boolean OR NOT old.notifies) AND ($4::boolean OR NOT old.fresh)`)} RETURNING t.*)
  SELECT old.previous, old.fresh, old.claimable, old.waited_s, ${UNFLUSHED_COMMIT}, started.* FROM old LEFT JOIN started ON true`;

/**
 * Whether a counter the caps read differs from what the task table holds (TaskStatesRepository.rebuildCounters):
 * a kind's running tasks (a kind with running tasks and no counter row too), a channel's unfinished ones.
 */
const COUNTERS_DRIFTED_SQL = `SELECT EXISTS (
    SELECT 1 FROM kind_counters k FULL JOIN (SELECT kind, count(*)::int AS count FROM tasks WHERE state = 'running' GROUP BY kind) n ON n.kind = k.kind
    WHERE COALESCE(k.running, 0) <> COALESCE(n.count, 0)
  ) OR EXISTS (
    SELECT 1 FROM channels c LEFT JOIN (SELECT channel_id, count(*)::int AS count FROM tasks WHERE state IN ('queued', 'running') AND channel_id IS NOT NULL GROUP BY channel_id) n ON n.channel_id = c.id
    WHERE c.running_tasks <> COALESCE(n.count, 0)
  ) AS drifted`;

/**
 * The guarded state changes of the task table, in SQL on the database's clock. Each changes a row only
 * from the state it expects, and a step's only while its claim holds the lease (Holder: the worker and the
 * attempt), so a late or duplicate step never moves a task another claim holds, nor a finished one. The statements are the same for every kind.
 */
@Injectable()
export class TaskStatesRepository {
  constructor(private readonly prisma: PrismaService) {}

  /** queued → running, or running → running when nobody holds a live lease (see startSql). */
  async claim(id: string, worker: string, leaseS: number, rules: ClaimRules, onChange: OnChange): Promise<ClaimOutcome> {
    const { rows } = await this.prisma.pool.query<Omit<ClaimState, 'notifies'> & Record<string, unknown>>(
      prepared(QUIET_CLAIM, [id, worker, leaseS, rules.maxRunning === undefined, rules.notifiesStart]),
    );
    const fast = rows[0];
    if (!fast?.claimable) return null;
    if (fast.id !== null) {
      const { previous: _p, fresh, claimable: _c, waited_s: waitedS, unflushed_commit: _u, ...row } = fast;
      return { kind: 'claimed', task: camelRow(row) as unknown as Task, firstStart: fresh, waitedS };
    }
    return this.claimInTransaction(id, worker, leaseS, rules, onChange);
  }

  /**
   * A claim that holds the kind's cap (its counter of running tasks, read under its row lock), or notifies
   * the start, in one transaction.
   */
  private claimInTransaction(id: string, worker: string, leaseS: number, rules: ClaimRules, onChange: OnChange): Promise<ClaimOutcome> {
    return this.prisma.$transaction(async (tx) => {
      const [old] = await tx.$queryRawUnsafe<(ClaimState & { id: string; kind: string })[]>(CLAIM_STATE, id);
      if (!old?.claimable) return null;
      const { kind } = old;
      if (rules.maxRunning !== undefined && old.fresh) {
        // the kind's counter row, locked until the start (whose trigger moves it) commits: two instances cannot both take the last place
        await tx.$executeRawUnsafe(`INSERT INTO kind_counters (kind, running) VALUES ($1, 0) ON CONFLICT (kind) DO NOTHING`, kind);
        const [{ running }] = await tx.$queryRawUnsafe<{ running: number }[]>(`SELECT running FROM kind_counters WHERE kind = $1 FOR UPDATE`, kind);
        if (running >= rules.maxRunning) return { kind: 'deferred' } as const;
      }
      const [row] = await tx.$queryRawUnsafe<Record<string, unknown>[]>(`${startSql('WHERE t.id = $1::uuid')} RETURNING t.*`, id, worker, leaseS);
      if (old.previous !== 'running') await onChange(sqlExecutorOf(tx), tx, [{ id, kind, notifies: old.notifies }], 'running');
      return { kind: 'claimed', task: camelRow(row) as unknown as Task, firstStart: old.fresh, waitedS: old.waited_s } as const;
    });
  }

  async heartbeat(id: string, holder: Holder, leaseS: number): Promise<boolean> {
    const { rowCount } = await this.prisma.pool.query(
      prepared(`UPDATE tasks SET lease_until = now() + make_interval(secs => $3) WHERE id = $1::uuid AND state = 'running' AND lease_owner = $2 AND attempts = $4`, [id, holder.worker, leaseS, holder.attempt]),
    );
    return rowCount === 1;
  }

  /**
   * Lets go of the task after an unexpected error: the sweeper takes it after `untilS`, and that take
   * counts as a new attempt.
   */
  async abandon(id: string, holder: Holder, untilS: number): Promise<void> {
    await this.prisma.pool.query(
      prepared(`UPDATE tasks SET lease_owner = '${ABANDONED}', lease_until = now() + make_interval(secs => $3) WHERE id = $1::uuid AND state = 'running' AND lease_owner = $2 AND attempts = $4`, [
        id,
        holder.worker,
        untilS,
        holder.attempt,
      ]),
    );
  }

  /**
   * Lets go of the task and, in the same statement, queues its next step `afterS` from now (a planned
   * wait, or 0: at once), so no moment exists where the task is let go without a job to take it. The
   * lease stays `untilS` long: the sweeper takes the task back only if that job never runs it.
   */
  async releaseToNextStep(id: string, holder: Holder, untilS: number, afterS: number): Promise<void> {
    await this.withNewJobs(
      `UPDATE tasks SET lease_owner = NULL, lease_until = now() + make_interval(secs => $3), job_id = gen_random_uuid() WHERE id = $1::uuid AND state = 'running' AND lease_owner = $2 AND attempts = $5`,
      [id, holder.worker, untilS, afterS, holder.attempt],
      RESUME_PRIORITY,
      'now() + make_interval(secs => $4::float8)',
    );
  }

  /**
   * Lets go of a task the upstream did not take (it is busy) until `seconds` from now, and moves its
   * start there too: the time spent waiting for the upstream does not count against the deadline. Its
   * next step is queued for then, in the same statement.
   */
  async postpone(id: string, holder: Holder, seconds: number, leaseS: number): Promise<void> {
    await this.withNewJobs(
      `UPDATE tasks SET lease_owner = NULL, lease_until = now() + make_interval(secs => $3::float8 + $4::float8), job_id = gen_random_uuid(),
         deadline_at = now() + make_interval(secs => $3::float8) + (deadline_at - started_at), started_at = now() + make_interval(secs => $3::float8)
       WHERE id = $1::uuid AND state = 'running' AND lease_owner = $2 AND attempts = $5`,
      [id, holder.worker, seconds, leaseS, holder.attempt],
      RESUME_PRIORITY,
      'now() + make_interval(secs => $3::float8)',
    );
  }

  /**
   * The task was created upstream and is not final: the worker lets go of it and, in the same statement,
   * it is watched (task_watches), to be polled at the schedule's time; no job waits for it. The poller queues
   * its next step when the upstream has news. A watched task holds no lease (the sweeper leaves it alone);
   * its deadline still ends it. A callback that came while it did not wait (upstream_called_back: its create's
   * answer not yet in, a step under way) makes its first poll now, and is consumed. The job the claim ran
   * under (Holder.jobId) is completed in the same statement; true when it was.
   */
  async watch(id: string, holder: Holder, schedule: PollSchedule, minPollS: number): Promise<boolean> {
    const next = nextPollSql({ startedAt: 'r.started_at', callbackPending: 'r.upstream_callback', minPollS: '$5::float8' }, { pollS: '$3', callbackPollS: '$4' });
    const { rows } = await this.prisma.pool.query<{ job_done: number }>(
      prepared(
        // `was` reads the mark under the row's lock: a callback's mark waits for this statement, then finds the watch
        `WITH was AS (SELECT id, upstream_called_back FROM tasks WHERE id = $1::uuid FOR UPDATE),
              r AS (UPDATE tasks t SET lease_owner = NULL, lease_until = NULL, upstream_called_back = false FROM was
                    WHERE t.id = was.id AND t.state = 'running' AND t.lease_owner = $2 AND t.attempts = $6
                    RETURNING t.id, t.kind, t.channel_id, t.started_at, t.upstream_callback, was.upstream_called_back AS called_back),
              job_done AS (${QueueService.completeJobSql(taskJobNameSql('r.kind'), '$7::uuid', 'r')})
         INSERT INTO task_watches (task_id, kind, channel_id, poll_at, callback_pending, min_poll_s)
         SELECT r.id, r.kind, r.channel_id, now() + make_interval(secs => CASE WHEN r.called_back THEN 0 ELSE ${next} END), r.upstream_callback, $5::float8 FROM r
         ON CONFLICT (task_id) DO UPDATE SET poll_at = EXCLUDED.poll_at, channel_id = EXCLUDED.channel_id, callback_pending = EXCLUDED.callback_pending,
           min_poll_s = EXCLUDED.min_poll_s, lease_owner = NULL, lease_until = NULL
         RETURNING (SELECT count(*) FROM job_done)::int AS job_done`,
        [id, holder.worker, schedule.pollS, schedule.callbackPollS, minPollS, holder.attempt, holder.jobId ?? null],
      ),
    );
    return (rows[0]?.job_done ?? 0) > 0;
  }

  /**
   * A job this instance took but will not run (it is shutting down) is given to the others: the task, if
   * nobody holds it, gets a new job at once with the same priority.
   */
  async giveBack(id: string, priority: number): Promise<void> {
    await this.withNewJobs(
      `UPDATE tasks SET job_id = gen_random_uuid()
       WHERE id = $1::uuid AND state IN ('queued', 'running') AND (lease_owner IS NULL OR lease_owner = '${ABANDONED}' OR lease_until < now())`,
      [id],
      priority,
    );
  }

  /**
   * running → failed, while this worker holds the lease. The reason often quotes an upstream, whose words
   * are not the caller's to fix: a lone surrogate or NUL in them becomes U+FFFD (storableText).
   */
  fail(id: string, holder: Holder, reason: string, onChange: OnChange, settle: SettleSql): Promise<Ended | null> {
    return this.end(id, holder, 'failed', { message: storableText(reason) }, onChange, settle);
  }

  /**
   * running → succeeded, while this worker holds the lease and the deadline has not passed (a result that
   * comes too late does not count), with the result document and the detail rows (its media), written
   * only when the task did change. The finishing worker stays recorded in lease_owner (with no lease_until).
   * Both may hold an upstream's strings (ids, names): they are written storable (storableJson).
   */
  finish(id: string, holder: Holder, result: unknown, details: DetailRows[], onChange: OnChange, settle: SettleSql): Promise<Ended | null> {
    const columns = { message: null, lease_owner: holder.worker, ...(result !== undefined ? { result: storableJson(result) } : {}) };
    return this.end(id, holder, 'succeeded', columns, onChange, settle, 'AND deadline_at > now()', details);
  }

  /**
   * The guarded change to a final state. A task nobody is notified of (no callback_url) ends in one
   * statement, its bookkeeping included (settle); otherwise, or when that changed nothing, in a transaction
   * that runs `onChange` after the change. Null when the task did not change (not this worker's, or ended).
   */
  private end(id: string, holder: Holder, to: FinalState, columns: Record<string, unknown>, onChange: OnChange, settle: SettleSql, guard = '', details: DetailRows[] = []): Promise<Ended | null> {
    // a deadlock's victim runs again (see TaskIntake: an insert of the same external id waiting on this end)
    return retryOnDeadlock(() => this.endOnce(id, holder, to, columns, onChange, settle, guard, details));
  }

  private async endOnce(id: string, holder: Holder, to: FinalState, columns: Record<string, unknown>, onChange: OnChange, settle: SettleSql, guard: string, details: DetailRows[]): Promise<Ended | null> {
    const quietly = await this.endQuietly(id, holder, to, columns, settle, guard, details);
    if (quietly) return quietly;
    return this.prisma.$transaction(async (tx) => {
      const s = new Statement();
      const rows = await tx.$queryRawUnsafe<(ChangedRow & { woke: number; job_done: number })[]>(
        `${endStatement(s, id, holder, to, columns, guard, details, [])} SELECT id, kind, notifies, (SELECT count(*) FROM woke)::int AS woke, (SELECT count(*) FROM job_done)::int AS job_done FROM changed`,
        ...s.values,
      );
      if (rows.length !== 1) return null;
      await onChange(sqlExecutorOf(tx), tx, rows, to);
      return { wokeWaiter: rows[0].woke > 0, jobCompleted: rows[0].job_done > 0 };
    });
  }

  /** The end of a task nobody is notified of, with its bookkeeping, in one statement; null when nothing changed. */
  private async endQuietly(id: string, holder: Holder, to: FinalState, columns: Record<string, unknown>, settle: SettleSql, guard: string, details: DetailRows[]): Promise<Ended | null> {
    const s = new Statement();
    const text = endStatement(s, id, holder, to, columns, `${guard} AND callback_url IS NULL`, details, settle.ctes(s, to));
    const { rows } = await this.prisma.pool.query<{ changed: number; settled: EndedTasks[]; woke: number; job_done: number }>(
      prepared(
        `${text} SELECT (SELECT count(*) FROM changed)::int AS changed, (SELECT COALESCE(json_agg(settled), '[]') FROM settled) AS settled, (SELECT count(*) FROM woke)::int AS woke, (SELECT count(*) FROM job_done)::int AS job_done`,
        s.values,
      ),
    );
    if (rows[0].changed !== 1) return null;
    settle.record(rows[0].settled, to);
    return { wokeWaiter: rows[0].woke > 0, jobCompleted: rows[0].job_done > 0 };
  }

  /** How task `id`, held by `holder`, records its create request upstream (see submitOnce). Each mark's own values are $4 on. */
  submitMarks(id: string, holder: Holder): SubmitMarks {
    const mark = async (set: string, ...values: unknown[]) => {
      const { rowCount } = await this.prisma.pool.query(prepared(`UPDATE tasks SET ${set} WHERE id = $1::uuid AND lease_owner = $2 AND attempts = $3`, [id, holder.worker, holder.attempt, ...values]));
      // the lease is gone (the step ran out of time and the task failed, or the sweeper gave it to another
      // worker): this step must stop here, before it sends a create nobody would record
      if (rowCount === 0) throw new LeaseLost(id);
    };
    return {
      holder,
      markSubmitting: () => mark('submit_started_at = now()'),
      clearSubmitting: () => mark('submit_started_at = NULL'),
      // the upstream's own id: a lone surrogate or NUL in it would fail the write (a later query by it then fails the task)
      saveUpstreamId: (upstreamId, options) => mark('upstream_id = $4, upstream_callback = $5, upstream_since = now()', storableText(upstreamId), options?.callback ?? false),
      abandonUpstream: () => mark('upstream_id = NULL, upstream_since = NULL, upstream_callback = false, submit_started_at = NULL, channel_id = NULL'),
      stillHeld: async () => {
        const { rowCount } = await this.prisma.pool.query(prepared(`SELECT 1 FROM tasks WHERE id = $1::uuid AND lease_owner = $2 AND attempts = $3`, [id, holder.worker, holder.attempt]));
        if (rowCount === 0) throw new LeaseLost(id);
      },
    };
  }

  /**
   * Deletes the owner's task of `kind`: it leaves the API, and stays for usage and credits. One that has
   * not finished ends failed with `reason`, and `settle` gives back its slots and credits in the same
   * transaction. False when there is no such task.
   */
  async deleteForOwner(kind: string, owner: string, id: string, reason: string, settle: (tx: TaskTx, ids: string[], to: FinalState) => Promise<void>): Promise<boolean> {
    return this.prisma.$transaction(async (tx) => {
      const rows = await tx.$queryRawUnsafe<{ unfinished: boolean }[]>(
        `UPDATE tasks t SET deleted_at = now(), updated_at = now(),
           state = CASE WHEN old.unfinished THEN 'failed' ELSE t.state END,
           message = CASE WHEN old.unfinished THEN $4 ELSE t.message END,
           finished_at = COALESCE(t.finished_at, now()),
           lease_owner = CASE WHEN old.unfinished THEN NULL ELSE t.lease_owner END,
           lease_until = CASE WHEN old.unfinished THEN NULL ELSE t.lease_until END
         FROM (SELECT id, ${UNFINISHED} AS unfinished FROM tasks WHERE id = $1::uuid AND kind = $2 AND owner = $3 AND deleted_at IS NULL FOR UPDATE) old
         WHERE t.id = old.id RETURNING old.unfinished`,
        id,
        kind,
        owner,
        reason,
      );
      if (rows.length === 0) return false;
      if (rows[0].unfinished) await settle(tx, [id], 'failed');
      return true;
    });
  }

  /**
   * Started tasks past their deadline end failed, whoever holds them, with their kind's reason
   * (`reasons`: by kind). A task that has not started waits in the queue without a deadline.
   */
  async failOverdue(reasons: Record<string, string>, onChange: OnChange): Promise<ChangedRow[]> {
    return this.prisma.$transaction(async (tx) => {
      const rows = await tx.$queryRawUnsafe<ChangedRow[]>(
        `UPDATE tasks SET state = 'failed', message = COALESCE($1::jsonb ->> kind, 'timed out'), finished_at = now(), updated_at = now(), lease_owner = NULL, lease_until = NULL
         WHERE id IN (SELECT id FROM tasks WHERE ${UNFINISHED} AND started_at IS NOT NULL AND deadline_at < now() LIMIT 500 FOR UPDATE SKIP LOCKED)
         RETURNING ${RETURNING}`,
        JSON.stringify(reasons),
      );
      if (rows.length > 0) await onChange(sqlExecutorOf(tx), tx, rows, 'failed');
      return rows;
    });
  }

  /**
   * Running tasks whose lease ran out (their worker died) get a new job, in the same statement. The lease
   * is pushed out so that one sweeper, once, re-queues each.
   */
  requeueAbandoned(leaseS: number): Promise<ChangedRow[]> {
    return this.withNewJobs(
      `UPDATE tasks SET lease_owner = '${ABANDONED}', lease_until = now() + make_interval(secs => $1), job_id = gen_random_uuid()
       WHERE id IN (SELECT id FROM tasks WHERE state = 'running' AND lease_until < now() LIMIT 500 FOR UPDATE SKIP LOCKED)`,
      [leaseS],
      RESUME_PRIORITY,
    );
  }

  /**
   * Queued tasks nobody has claimed whose last job can no longer run them: a worker took the job and died
   * before claiming the task (the job stays "active" until pg-boss's expiry, an hour away), or the job
   * ended without the task starting (it failed while the database was down). Each gets a new job, in the
   * same statement; a task whose job is merely queued is left alone.
   */
  requeueOrphaned(graceS: number): Promise<ChangedRow[]> {
    return this.withNewJobs(
      `UPDATE tasks SET job_id = gen_random_uuid()
       WHERE id IN (SELECT o.id FROM tasks o
         WHERE o.state = 'queued' AND o.lease_until IS NULL AND o.created_at < now() - make_interval(secs => $1)
           AND ${QueueService.deadJobCondition('o.job_id', taskJobNameSql('o.kind'), graceS)}
         ORDER BY o.created_at LIMIT 200 FOR UPDATE OF o SKIP LOCKED)`,
      [graceS],
      NEW_TASK_PRIORITY,
    );
  }

  /**
   * A task that could not start (see claim: deferred) gets a new job with the same priority, recorded on
   * the task in the same statement, so it keeps its place among the waiting work.
   */
  async defer(id: string, priority: number): Promise<void> {
    await this.withNewJobs(`UPDATE tasks SET job_id = gen_random_uuid() WHERE id = $1::uuid AND state = 'queued'`, [id], priority);
  }

  /**
   * The tasks `worker` still holds (its instance is shutting down) go back to the queue at once, each with
   * a new job, so another instance takes them without waiting for the lease to run out. The worker is
   * recorded as stopped first (requeueFenced): a claim of its own that lands later is taken back at the
   * next sweep. A late write of the old worker changes nothing: every write is guarded by the lease.
   */
  async handBack(worker: string, leaseS: number): Promise<ChangedRow[]> {
    await this.prisma.pool.query(`INSERT INTO stopped_workers (worker) VALUES ($1) ON CONFLICT (worker) DO UPDATE SET stopped_at = now()`, [worker]);
    return this.withNewJobs(
      `UPDATE tasks SET lease_owner = '${ABANDONED}', lease_until = now() + make_interval(secs => $2), job_id = gen_random_uuid()
       WHERE state = 'running' AND lease_owner = $1 AND lease_until IS NOT NULL`,
      [worker, leaseS],
      RESUME_PRIORITY,
    );
  }

  /**
   * Running tasks held by a worker that has stopped (a claim it sent before its hand-back, which landed
   * after) go back to the queue at once, with new jobs; the record of stopped workers is kept for an hour.
   */
  requeueFenced(leaseS: number): Promise<ChangedRow[]> {
    return this.withNewJobs(
      `UPDATE tasks SET lease_owner = '${ABANDONED}', lease_until = now() + make_interval(secs => $1), job_id = gen_random_uuid()
       WHERE id IN (SELECT t.id FROM stopped_workers w JOIN tasks t ON t.state = 'running' AND t.lease_owner = w.worker LIMIT 500 FOR UPDATE OF t SKIP LOCKED)`,
      [leaseS],
      RESUME_PRIORITY,
      undefined,
      `forgotten AS (DELETE FROM stopped_workers WHERE stopped_at < now() - interval '1 hour')`,
    );
  }

  /**
   * Voids the live leases of every worker but `self` (the previous run of a sole instance died holding
   * them; this process may already hold tasks of its own), so the sweeper re-queues them at once.
   */
  async expireLeasesOfOthers(self: string): Promise<number> {
    const { rowCount } = await this.prisma.pool.query(
      `UPDATE tasks SET lease_owner = '${ABANDONED}', lease_until = now() - interval '1 second' WHERE state = 'running' AND lease_owner IS NOT NULL AND lease_owner <> $1`,
      [self],
    );
    return rowCount ?? 0;
  }

  /**
   * Sets the counters the caps read (each kind's running tasks, each channel's unfinished ones) to what the
   * task table holds, should they ever have drifted; answers what was corrected. They are compared first in
   * one read-only statement, which locks nothing: a counter changes in the transaction that changes its
   * tasks, so within one statement's snapshot a difference is a drift, never a start or an end in flight.
   * Only then is every counter row locked (kinds, then channels, in key order, as the trigger does), so no
   * task can start or end between the count and the correction. (The check used to take those locks every
   * time, once a minute on each instance that runs workers: every claim, assignment and end of every kind, on
   * every instance, waited for its counts, which grow with the tasks in flight.)
   */
  async rebuildCounters(): Promise<string[]> {
    const { rows } = await this.prisma.pool.query<{ drifted: boolean }>(COUNTERS_DRIFTED_SQL);
    if (!rows[0].drifted) return [];
    return this.prisma.$transaction(async (tx) => {
      await tx.$executeRawUnsafe(`INSERT INTO kind_counters (kind, running) SELECT DISTINCT kind, 0 FROM tasks WHERE state = 'running' ON CONFLICT (kind) DO NOTHING`);
      await tx.$queryRawUnsafe(`SELECT kind FROM kind_counters ORDER BY kind FOR UPDATE`);
      await tx.$queryRawUnsafe(`SELECT id FROM channels ORDER BY id FOR UPDATE`);
      const kinds = await tx.$queryRawUnsafe<{ name: string }[]>(
        `UPDATE kind_counters k SET running = COALESCE(n.count, 0)
         FROM kind_counters k0 LEFT JOIN (SELECT kind, count(*)::int AS count FROM tasks WHERE state = 'running' GROUP BY kind) n ON n.kind = k0.kind
         WHERE k.kind = k0.kind AND k.running <> COALESCE(n.count, 0) RETURNING 'kind ' || k.kind AS name`,
      );
      const channels = await tx.$queryRawUnsafe<{ name: string }[]>(
        `UPDATE channels c SET running_tasks = COALESCE(n.count, 0)
         FROM channels c0 LEFT JOIN (SELECT channel_id, count(*)::int AS count FROM tasks WHERE state IN ('queued', 'running') AND channel_id IS NOT NULL GROUP BY channel_id) n ON n.channel_id = c0.id
         WHERE c.id = c0.id AND c.running_tasks <> COALESCE(n.count, 0) RETURNING 'channel ' || c.name AS name`,
      );
      return [...kinds, ...channels].map((r) => r.name);
    });
  }

  /** Finished tasks older than the cutoff are marked as having lost their media; returns their ids. */
  async markMediaExpired(cutoff: Date): Promise<string[]> {
    const { rows } = await this.prisma.pool.query<{ id: string }>(
      'UPDATE tasks SET media_expired_at = now() WHERE finished_at < $1 AND finished_at IS NOT NULL AND media_expired_at IS NULL RETURNING id',
      [cutoff],
    );
    return rows.map((r) => r.id);
  }

  /**
   * `update` (which sets job_id) and, in the same statement, a job of its kind's queue for each row it
   * changed, to run now or at `startAfter` (an SQL expression); `more`: other CTEs of the statement.
   */
  private async withNewJobs(update: string, values: unknown[], priority: number, startAfter?: string, more?: string): Promise<ChangedRow[]> {
    const jobs = `(SELECT job_id AS id, ${taskJobNameSql('kind')} AS name, jsonb_build_object('taskId', id) AS data, ${Math.trunc(priority)} AS priority FROM picked)`;
    // named: a handful of texts, planned once per connection (planning the job insert was most of their cost)
    const { rows } = await this.prisma.pool.query<ChangedRow>(
      prepared(
        `WITH ${more ? `${more}, ` : ''}picked AS (${update} RETURNING id, kind, job_id, callback_url IS NOT NULL AS notifies), jobs AS (${QueueService.jobRowsSql(jobs, startAfter)}) SELECT id, kind, notifies FROM picked`,
        values,
      ),
    );
    return rows;
  }
}

/**
 * `WITH changed AS (the guarded UPDATE), the details' INSERTs, then \`more\` CTEs` (without the final
 * SELECT). The details are inserted only when the task changed.
 */
function endStatement(s: Statement, id: string, holder: Holder, to: FinalState, columns: Record<string, unknown>, guard: string, details: DetailRows[], more: string[]): string {
  const assignments: Record<string, unknown> = { lease_owner: null, ...columns };
  const sets = Object.entries(assignments)
    .map(([name, value]) => `"${name}" = ${s.param(value)}${name === 'result' ? '::jsonb' : ''}`)
    .join(', ');
  const parts = [
    `changed AS (UPDATE tasks SET state = '${to}', ${sets}, finished_at = now(), updated_at = now(), lease_until = NULL
       WHERE id = ${s.param(id)}::uuid AND state = 'running' AND lease_owner = ${s.param(holder.worker)} AND attempts = ${s.param(holder.attempt)} ${guard}
       RETURNING id, kind, owner, slots, credits, created_at, channel_id, callback_url IS NOT NULL AS notifies)`,
    ...details
      .filter((d) => d.rows.length > 0)
      .map((d, i) => {
        const names = Object.keys(d.rows[0]).map((n) => `"${n}"`).join(', ');
        // typed by the table's own row type, so no value needs a cast
        return `detail${i} AS (INSERT INTO "${d.table}" (${names}) SELECT ${names} FROM jsonb_populate_recordset(NULL::"${d.table}", ${s.param(storableJson(d.rows))}::jsonb) WHERE EXISTS (SELECT 1 FROM changed) ${d.onConflict ?? ''})`;
      }),
    // the task held a slot of a capped channel: the task of its kind that has waited longest for one (busy:
    // postponed, nothing sent upstream) gets its job now rather than at its postponed time, so the freed slot
    // is taken at once and waiting tasks need not knock often; its job is due when this change commits
    `waiter AS (SELECT w.job_id, w.kind FROM tasks w JOIN changed ON w.kind = changed.kind
       WHERE EXISTS (SELECT 1 FROM channels c WHERE c.id = changed.channel_id AND c.max_running IS NOT NULL)
         AND w.state = 'running' AND w.lease_owner IS NULL AND w.upstream_id IS NULL AND w.submit_started_at IS NULL AND w.started_at > now()
       ORDER BY w.created_at LIMIT 1 FOR UPDATE OF w SKIP LOCKED)`,
    `woke AS (UPDATE pgboss.job j SET start_after = now() FROM waiter
       WHERE j.name = ${taskJobNameSql('waiter.kind')} AND j.id = waiter.job_id AND j.state = 'created' AND j.start_after > now() RETURNING j.id)`,
    // the job the step ran under is completed with the task (pg-boss's complete() would be one more statement
    // after it, and a crash between the two left the job active until its expiry, then ran the step again)
    `job_done AS (${QueueService.completeJobSql(taskJobNameSql('changed.kind'), `${s.param(holder.jobId ?? null)}::uuid`, 'changed')})`,
    ...more,
  ];
  return `WITH ${parts.join(',\n')}`;
}

/** A task this worker ended: whether a task waiting for the slot it freed was given its job now, and whether the claim's own job was completed with it (see endStatement). */
export interface Ended {
  wokeWaiter: boolean;
  /** The holder's job (Holder.jobId) was completed in the same statement. */
  jobCompleted: boolean;
}

/** A step's write found its task no longer held by its worker: the step stops (the task is another's, or ended). */
export class LeaseLost extends Error {
  constructor(taskId: string) {
    super(`task ${taskId} is no longer held by this worker (its time ran out, or its lease passed to another worker)`);
    this.name = 'LeaseLost';
  }
}
