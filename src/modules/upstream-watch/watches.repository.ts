import { Injectable } from '@nestjs/common';
import { nextPollSql, type PollSchedule } from '../../common/tasks/poll-schedule.js';
import type { WatchedTask } from '../../common/tasks/task-kind.js';
import { storableJson } from '../../infra/database/storable-text.js';
import { PrismaService } from '../../infra/prisma/prisma.service.js';
import { prepared } from '../../infra/prisma/statement.js';
import { RESUME_PRIORITY, taskJobNameSql } from '../../infra/queue/jobs.js';
import { QueueService } from '../../infra/queue/queue.service.js';
import type { PolledStatus } from '../../infra/relay/upstream-client.js';

/** A watched task a poller took: the task, when its poll was due (for the lag), and until when the poller holds it. */
export interface DueWatch extends WatchedTask {
  dueAt: Date;
  leaseUntil: Date;
}

interface DueRow {
  task_id: string;
  kind: string;
  owner: string;
  channel_id: string | null;
  upstream_id: string;
  upstream_since: Date | null;
  created_at: Date;
  trace_parent: string | null;
  due_at: Date;
  lease_until: Date;
}

/** The lease's end of tasks polled without news ($7, held by $2), where it must not wait (see takeDue). */
const LET_GO = `UPDATE task_watches SET lease_owner = NULL, lease_until = NULL
  WHERE task_id = ANY ($7::uuid[]) AND lease_owner = $2 AND lease_until > now() AND (poll_at < lease_until OR callback_pending)`;

/**
 * The watched tasks (task_watches: created upstream, not final), as the pollers of every instance share
 * them: one statement takes a batch of due ones, sets each one's next poll time and holds it for the poll
 * (a short lease, ending at the next poll time unless that is very near), in the same write, so a poll
 * that finds nothing new writes nothing more: its lease has run out by its next poll time. A poll still in
 * flight near its lease's end has the lease extended (extend); one whose next poll came before its lease's
 * end (a short interval, an extended lease, a callback that made it due during the poll) or that waits
 * for callbacks is let go of by the poller's next take (takeDue). The lease means "a poll
 * is in flight", never "not before the next poll" (poll_at says that): a lease held until a
 * callback-pending task's safety poll, 300 s away, made every later callback of that task count as
 * already due, and the task waited for the safety poll.
 */
@Injectable()
export class WatchesRepository {
  constructor(private readonly prisma: PrismaService) {}

  /**
   * Takes up to `limit` due tasks for `owner` (skipping those of a channel whose polls are paused), each
   * given its next poll time and held for the poll: until that time when it is at least
   * `untilNextPollFromS` away (and at most `leaseS`), else for `leaseS` (see extend); watches whose task is
   * no longer running (its deadline, a delete) are dropped in the same statement. In the same statement
   * too, the tasks `letGo` (polled since the last look, without news) are let go of where their lease must
   * be: those whose next poll comes before their lease ends (a short interval, a lease extended for a slow
   * poll, a callback that made them due during the poll), and those waiting for callbacks, so that the next
   * callback finds no lease and is polled at once (they are polled rarely, on the safety net); the others'
   * leases run out by themselves, unwritten. What is let go of is due from the next look on.
   */
  async takeDue(owner: string, limit: number, lease: { leaseS: number; untilNextPollFromS: number; letGo: string[] }, schedule: PollSchedule): Promise<DueWatch[]> {
    const next = nextPollSql({ startedAt: 't.started_at', callbackPending: 'due.callback_pending', minPollS: 'due.min_poll_s' }, { pollS: '$4', callbackPollS: '$5' });
    const { rows } = await this.prisma.pool.query<DueRow>(
      prepared(
        // every step reads by key (the poll_at index, then primary keys through ANY(ARRAY(…))), never a scan: its
        // cost follows the batch, not the tasks in flight
        `WITH let_go AS (${LET_GO}),
         due AS (
           SELECT w.task_id, w.poll_at, w.callback_pending, w.min_poll_s FROM task_watches w
           WHERE w.poll_at <= now() AND (w.lease_until IS NULL OR w.lease_until < now())
             AND NOT EXISTS (SELECT 1 FROM channels c WHERE c.id = w.channel_id AND c.polls_paused_until > now())
           ORDER BY w.poll_at LIMIT $1 FOR UPDATE OF w SKIP LOCKED),
         t AS (SELECT t.id, t.state, t.owner, t.created_at, t.upstream_id, t.upstream_since, t.trace_parent, due.poll_at, ${next} AS next_s
               FROM tasks t JOIN due ON due.task_id = t.id WHERE t.id = ANY (ARRAY(SELECT task_id FROM due))),
         gone AS (DELETE FROM task_watches w WHERE w.task_id = ANY (ARRAY(SELECT id FROM t WHERE state <> 'running' OR upstream_id IS NULL))),
         taken AS (
           UPDATE task_watches w SET lease_owner = $2, poll_at = now() + make_interval(secs => t.next_s),
             lease_until = now() + make_interval(secs => CASE WHEN t.next_s >= $6 THEN LEAST(t.next_s, $3::float8) ELSE $3::float8 END)
           FROM t WHERE w.task_id = ANY (ARRAY(SELECT id FROM t WHERE state = 'running' AND upstream_id IS NOT NULL)) AND t.id = w.task_id
           RETURNING w.task_id, w.kind, w.channel_id, t.owner, t.upstream_id, t.upstream_since, t.created_at, t.trace_parent, t.poll_at AS due_at, w.lease_until)
         SELECT * FROM taken`,
        [limit, owner, lease.leaseS, schedule.pollS, schedule.callbackPollS, lease.untilNextPollFromS, lease.letGo],
      ),
    );
    return rows.map((r) => ({ id: r.task_id, kind: r.kind, owner: r.owner, channelId: r.channel_id, upstreamId: r.upstream_id, upstreamSince: r.upstream_since, createdAt: r.created_at, traceParent: r.trace_parent, dueAt: r.due_at, leaseUntil: r.lease_until }));
  }

  /**
   * Polls still in flight near the end of their lease: held `leaseS` more, while `owner` still holds them.
   * Answers the ids it holds (a task whose lease had already run out may have been taken by another poller).
   */
  async extend(owner: string, ids: string[], leaseS: number): Promise<string[]> {
    if (ids.length === 0) return [];
    const { rows } = await this.prisma.pool.query<{ task_id: string }>(
      prepared(
        `UPDATE task_watches SET lease_until = GREATEST(lease_until, now() + make_interval(secs => $3::float8)) WHERE task_id = ANY ($1::uuid[]) AND lease_owner = $2 AND lease_until > now() RETURNING task_id`,
        [ids, owner, leaseS],
      ),
    );
    return rows.map((r) => r.task_id);
  }

  /** Not polled after all (shutdown, a paused channel): due again at `at` (now, when not given), for any poller. */
  async giveBack(owner: string, ids: string[], at?: Date): Promise<void> {
    if (ids.length === 0) return;
    await this.prisma.pool.query(
      prepared(`UPDATE task_watches SET lease_owner = NULL, lease_until = NULL, poll_at = GREATEST(COALESCE($3::timestamptz, now()), LEAST(poll_at, now())) WHERE task_id = ANY ($1::uuid[]) AND lease_owner = $2`, [
        ids,
        owner,
        at ?? null,
      ]),
    );
  }

  /** Everything `owner` holds goes back at once (its instance is shutting down). */
  async giveBackAll(owner: string): Promise<void> {
    await this.prisma.pool.query(`UPDATE task_watches SET lease_owner = NULL, lease_until = NULL, poll_at = LEAST(poll_at, now()) WHERE lease_owner = $1 AND lease_until > now()`, [owner]);
  }

  /**
   * The upstream has news of these tasks: they are no longer watched, and each gets a job for its next step
   * (which acts on it: downloads the result, or ends the task), in one statement; a task whose status the poll
   * read carries it in its job (`polled`, by task id: SubmitMarks.polled), so its step need not ask again.
   * The task's lease is set `leaseS` ahead, so the sweeper gives it a new job should that one never run.
   */
  async resume(owner: string, ids: string[], leaseS: number, polled: Readonly<Record<string, PolledStatus>> = {}): Promise<string[]> {
    if (ids.length === 0) return [];
    const data = `jsonb_build_object('taskId', id) || CASE WHEN $4::jsonb ? id::text THEN jsonb_build_object('polled', $4::jsonb -> id::text) ELSE '{}'::jsonb END`;
    const jobs = `(SELECT job_id AS id, ${taskJobNameSql('kind')} AS name, ${data} AS data, ${RESUME_PRIORITY} AS priority FROM resumed)`;
    const { rows } = await this.prisma.pool.query<{ id: string }>(
      prepared(
        `WITH unwatched AS (DELETE FROM task_watches WHERE task_id = ANY ($1::uuid[]) AND lease_owner = $2 RETURNING task_id),
         resumed AS (UPDATE tasks SET lease_until = now() + make_interval(secs => $3), job_id = gen_random_uuid()
                     WHERE id IN (SELECT task_id FROM unwatched) AND state = 'running' AND lease_owner IS NULL RETURNING id, kind, job_id),
         jobs AS (${QueueService.jobRowsSql(jobs)})
         SELECT id FROM resumed`,
        [ids, owner, leaseS, storableJson(polled)],
      ),
    );
    return rows.map((r) => r.id);
  }

  /**
   * The channel's upstream refused polls (429, Retry-After): no instance polls its tasks before `seconds`
   * from now (a pause already longer is kept). Answers when the pause ends.
   */
  async pauseChannelPolls(channelId: string, seconds: number): Promise<Date> {
    const { rows } = await this.prisma.pool.query<{ until: Date }>(
      `UPDATE channels SET polls_paused_until = GREATEST(COALESCE(polls_paused_until, now()), now() + make_interval(secs => $2::float8)) WHERE id = $1::uuid RETURNING polls_paused_until AS until`,
      [channelId, seconds],
    );
    return rows[0]?.until ?? new Date(Date.now() + seconds * 1000);
  }

  /**
   * An upstream called back about the task: its next poll is now. Answers 'due' when a poller should be
   * woken; 'already' when it was due already (a burst of callbacks makes one poll) or a poll is in flight
   * (the poller lets go of the task at its next look when the poll brought no news, and the poll this
   * callback asked for follows at the look after); 'early' when the task runs but does not wait yet (the create's answer not yet in, or a step under
   * way): the callback is kept on the task, and its next wait is polled at once (TaskStatesRepository.watch);
   * 'unwatched' when the task waits on no upstream (it ended, or never was).
   */
  async pollNow(taskId: string): Promise<'due' | 'already' | 'early' | 'unwatched'> {
    const watched = await this.bringForward(taskId);
    if (watched) return watched;
    const { rowCount } = await this.prisma.pool.query(`UPDATE tasks SET upstream_called_back = true WHERE id = $1::uuid AND state = 'running'`, [taskId]);
    if (!rowCount) return 'unwatched';
    // its watch may have been written between the two statements, without the mark: brought forward now
    return (await this.bringForward(taskId)) ?? 'early';
  }

  /** The task's watch due now: 'due' (a poller to wake) or 'already'; null when the task is not watched. */
  private async bringForward(taskId: string): Promise<'due' | 'already' | null> {
    const { rows } = await this.prisma.pool.query<{ wake: boolean }>(
      `WITH w AS (SELECT task_id, poll_at > now() AS later, COALESCE(lease_until > now(), false) AS in_flight FROM task_watches WHERE task_id = $1::uuid FOR UPDATE),
            moved AS (UPDATE task_watches t SET poll_at = now() FROM w WHERE t.task_id = w.task_id AND w.later RETURNING t.task_id)
       SELECT w.later AND NOT w.in_flight AND EXISTS (SELECT 1 FROM moved) AS wake FROM w`,
      [taskId],
    );
    if (rows.length === 0) return null;
    return rows[0].wake ? 'due' : 'already';
  }

  /** Tasks waiting on their upstream, by kind (the metrics' gauge). */
  async countWaiting(): Promise<{ kind: string; n: number }[]> {
    const { rows } = await this.prisma.pool.query<{ kind: string; n: number }>(`SELECT kind, count(*)::int AS n FROM task_watches GROUP BY kind`);
    return rows;
  }
}
