import { randomUUID } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import { isUUID } from 'class-validator';
import type { Channel } from '../../generated/prisma/client.js';
import { storableText } from '../../infra/database/storable-text.js';
import type { ChannelModel } from './channel-models.js';
import { PrismaService } from '../../infra/prisma/prisma.service.js';
import { camelRow, prepared, UNFLUSHED_COMMIT } from '../../infra/prisma/statement.js';
import type { Holder } from '../../common/tasks/task-states.repository.js';

/** A channel, with the unfinished tasks it holds (`runningTasks`, a counter the task table's trigger keeps). */
export type ChannelRow = Channel;

/** What a channel's accepted create made: the model asked for, the upstream's id, what it costs the company (null: no price set). */
export interface UpstreamTaskFacts {
  model: string;
  /** Null for a synchronous vendor (the answer was the result). */
  upstreamId: string | null;
  cost: number | null;
}

/** One request of a task to a channel, as the admin reads it. */
export interface AttemptRow {
  at: Date;
  outcome: string;
  message: string | null;
  latency_ms: number | null;
  channel_id: string | null;
  channel: string | null;
  model: string | null;
  upstream_id: string | null;
  cost: number | null;
  billed_amount: number | null;
  billed_unit: string | null;
  billed_cost: number | null;
}

/** A vendor's billed figure for an upstream task as kept: the amount and unit it reported, and that amount at the channel's prices (null: unpriced). */
export interface BilledFigure {
  amount: number;
  unit: string;
  cost: number | null;
}

/** An accepted attempt whose billed figure was just written (or changed): what it was priced, and its billed cost before. */
export interface BilledAttempt {
  model: string | null;
  cost: number | null;
  previousBilledCost: number | null;
}

/** What a new channel is made of (credentials already sealed). */
export interface NewChannel {
  id: string;
  name: string;
  operations: string[];
  protocol: string;
  baseUrl: string;
  credentials: Uint8Array<ArrayBuffer> | null;
  credentialsHint: string | null;
  weight: number;
  priority: number;
  maxRunning: number | null;
  /** Seconds after which an upstream task of it still working is given up (null: none). */
  stallAfterS?: number | null;
  /** How a video's first frame is fitted for it by default (null: the gateway's default). */
  frameFit?: string | null;
  source: 'admin' | 'config';
  /** The models it serves (`ChannelModel`s); absent: none listed (its vendor's catalog). */
  models?: ChannelModel[];
}

export type ChannelChanges = Partial<Omit<NewChannel, 'id' | 'source'>> & { status?: string; statusReason?: string | null };

/** A channel's requests over the last 5 minutes. */
export interface ChannelRecent {
  total: number;
  ok: number;
  p50Ms: number | null;
}

/**
 * A task's attempts on a channel after which it is never given the task again: it took it (an upstream task,
 * later failed or stalled), refused it (a refusal of its content that failed over: any other refusal ended the
 * task), or its create was given up unanswered.
 */
const HAD_THE_TASK = `('accepted', 'failed', 'abandoned')`;

/** Outcomes where the channel answered (took the task, refused the task itself, or passed a test). */
const ANSWERED = `'accepted', 'failed', 'test_ok'`;

@Injectable()
export class ChannelsRepository {
  /** Channel writes this process made (create, update, delete): what the model offers read again after a change here. */
  writes = 0;

  constructor(private readonly prisma: PrismaService) {}

  async createChannel(channel: NewChannel): Promise<Channel> {
    try {
      return await this.prisma.channel.create({ data: channel });
    } finally {
      this.writes++;
    }
  }

  /** The channels that exist (not deleted), by priority then name, each with its running tasks. */
  async listChannels(): Promise<ChannelRow[]> {
    return this.prisma.channel.findMany({ where: { deletedAt: null }, orderBy: [{ priority: 'desc' }, { name: 'asc' }] });
  }

  /** A channel that exists; `evenDeleted`: also one deleted (a task it holds still reads its credentials). */
  async findChannel(id: string, evenDeleted = false): Promise<ChannelRow | null> {
    if (!isUUID(id)) return null;
    return this.prisma.channel.findFirst({ where: { id, ...(evenDeleted ? {} : { deletedAt: null }) } });
  }

  async updateChannel(id: string, changes: ChannelChanges): Promise<Channel | null> {
    const { count } = await this.prisma.channel.updateMany({ where: { id, deletedAt: null }, data: { ...changes, updatedAt: new Date() } });
    this.writes++;
    return count === 1 ? this.prisma.channel.findUnique({ where: { id } }) : null;
  }

  /**
   * Deletes the channel (softly: tasks keep naming it) unless it holds unfinished tasks, in one statement.
   * 'deleted', 'busy' (it holds some) or 'missing'.
   */
  async deleteChannel(id: string): Promise<'deleted' | 'busy' | 'missing'> {
    if (!isUUID(id)) return 'missing';
    this.writes++;
    // The channel's row is locked first (as assignTask does), so no task is given to it while its tasks are counted.
    return this.prisma.$transaction(async (tx) => {
      const [channel] = await tx.$queryRawUnsafe<{ running_tasks: number }[]>(`SELECT running_tasks FROM channels WHERE id = $1::uuid AND deleted_at IS NULL FOR UPDATE`, id);
      if (!channel) return 'missing';
      if (channel.running_tasks > 0) return 'busy';
      await tx.$executeRawUnsafe(`UPDATE channels SET deleted_at = now(), updated_at = now(), credentials = NULL WHERE id = $1::uuid`, id);
      return 'deleted';
    });
  }

  /**
   * The enabled channels of an operation with a closed circuit (or one due for its probe) and a free
   * max_running slot, read from its counter (`exclude`: already tried). A channel the task already names
   * (an earlier try) counts it among its tasks, so it is a candidate at its cap too.
   */
  async candidatesFor(operation: string, taskId: string, exclude: string[] = []): Promise<ChannelRow[]> {
    // one named statement for the whole rows (Prisma's findMany by the ids found was a second round trip per create);
    // a channel that already took the task (and failed it, or stalled), refused it (for its content: a refusal that
    // failed over), or whose create of it was given up unanswered (an abandoned attempt: the one record a worker
    // killed before the accepted attempt was written still leaves), is not given it again
    const { rows } = await this.prisma.pool.query<Record<string, unknown>>(
      prepared(
        `SELECT c.* FROM channels c
         WHERE c.deleted_at IS NULL AND c.status = 'enabled' AND $1 = ANY (c.operations) AND NOT (c.id = ANY ($2::uuid[]))
           AND (c.circuit_state = 'closed' OR c.circuit_open_until <= now())
           AND (c.max_running IS NULL OR c.running_tasks < c.max_running OR c.id = (SELECT channel_id FROM tasks WHERE id = $3::uuid))
           AND NOT EXISTS (SELECT 1 FROM task_attempts a WHERE a.task_id = $3::uuid AND a.channel_id = c.id AND a.outcome IN ${HAD_THE_TASK})`,
        [operation, exclude, taskId],
      ),
    );
    return rows.map((r) => camelRow(r) as unknown as ChannelRow);
  }

  /** The enabled channels of an operation that have not had the task yet, whatever their circuit and load: where it could still go. */
  async untriedFor(operation: string, taskId: string): Promise<ChannelRow[]> {
    const rows = await this.prisma.$queryRawUnsafe<Record<string, unknown>[]>(
      `SELECT c.* FROM channels c WHERE c.deleted_at IS NULL AND c.status = 'enabled' AND $1 = ANY (c.operations)
         AND NOT EXISTS (SELECT 1 FROM task_attempts a WHERE a.task_id = $2::uuid AND a.channel_id = c.id AND a.outcome IN ${HAD_THE_TASK})`,
      operation,
      taskId,
    );
    return rows.map((r) => camelRow(r) as unknown as ChannelRow);
  }

  /** The channels of an operation that exist and take no task (disabled by an admin, or auto-disabled), the latest changed first. */
  async disabledFor(operation: string): Promise<ChannelRow[]> {
    return this.prisma.channel.findMany({ where: { deletedAt: null, status: { not: 'enabled' }, operations: { has: operation } }, orderBy: [{ updatedAt: 'desc' }, { name: 'asc' }] });
  }

  /**
   * How many tries at vendors the task has had (creates a channel accepted, or refused: a refusal of its content
   * that failed over), and the words of the last one given up (an abandoned upstream task, or that refusal).
   */
  async upstreamTasksOf(taskId: string): Promise<{ count: number; lastGivenUp: string | null }> {
    const [row] = await this.prisma.$queryRawUnsafe<{ count: number; last_given_up: string | null }[]>(
      `SELECT count(*) FILTER (WHERE outcome IN ('accepted', 'failed'))::int AS count,
              (array_agg(message ORDER BY at DESC, id DESC) FILTER (WHERE outcome IN ('abandoned', 'failed')))[1] AS last_given_up
       FROM task_attempts WHERE task_id = $1::uuid`,
      taskId,
    );
    return { count: row?.count ?? 0, lastGivenUp: row?.last_given_up ?? null };
  }

  /** The channels of an operation that exist (any status: a disabled one may come back), with what they serve. */
  async servingOperation(operation: string): Promise<{ name: string; protocol: string; models: unknown; frameFit: string | null }[]> {
    return this.prisma.channel.findMany({ where: { deletedAt: null, operations: { has: operation } }, select: { name: true, protocol: true, models: true, frameFit: true }, orderBy: [{ priority: 'desc' }, { name: 'asc' }] });
  }

  /** Whether the operation has channels that would take a task now but for their max_running, and none other. */
  async allAtCapacity(operation: string): Promise<boolean> {
    const [row] = await this.prisma.$queryRawUnsafe<{ capped: boolean }[]>(
      `SELECT bool_and(c.max_running IS NOT NULL AND c.running_tasks >= c.max_running) AS capped FROM channels c
       WHERE c.deleted_at IS NULL AND c.status = 'enabled' AND $1 = ANY (c.operations) AND (c.circuit_state = 'closed' OR c.circuit_open_until <= now())`,
      operation,
    );
    return row?.capped === true;
  }

  /**
   * Gives the task to the channel if it is still enabled, its circuit closed (or due for its one probe,
   * which this task becomes: half-open) and it has a free max_running slot, in one statement: the
   * channel's row is locked while its counter is read, and the task's new channel_id moves the counters
   * (the trigger) before the statement commits, so two workers never both take its last slot. The lock
   * is held for that one statement only (it was a transaction of four round trips, and every create of
   * the channel queued behind it). It writes the task's submit mark too (SubmitMarks.markSubmitting), since
   * the create goes out next: its commit is flushed before it does (it was a statement of its own after
   * this one, a round trip more per create). Only while `holder`'s claim has the task, unsent ('not held'
   * otherwise: then neither the task nor the channel, its probe included, changes).
   */
  async assignTask(taskId: string, channelId: string, holder: Holder, probeS = 60): Promise<'assigned' | 'refused' | 'not held'> {
    const { rows } = await this.prisma.pool.query<{ assigned: boolean; held: boolean }>(
      prepared(
        `WITH held AS (SELECT 1 FROM tasks WHERE id = $2::uuid AND state = 'running' AND upstream_id IS NULL AND submit_started_at IS NULL AND lease_owner = $4 AND attempts = $5),
         ch AS (
           SELECT id, circuit_state <> 'closed' AS probing FROM channels
           WHERE id = $1::uuid AND EXISTS (SELECT 1 FROM held) AND status = 'enabled' AND deleted_at IS NULL AND (circuit_state = 'closed' OR circuit_open_until <= now())
             AND (max_running IS NULL OR running_tasks < max_running
                  OR EXISTS (SELECT 1 FROM tasks WHERE id = $2::uuid AND channel_id = $1::uuid AND state IN ('queued', 'running')))
           FOR UPDATE),
         probe AS (UPDATE channels c SET circuit_state = 'half_open', circuit_open_until = now() + make_interval(secs => $3::float8) FROM ch WHERE c.id = ch.id AND ch.probing RETURNING c.id),
         -- never once its create is in flight or done: a late worker cannot move a task that another sent
         assigned AS (UPDATE tasks SET channel_id = $1::uuid, submit_started_at = now() WHERE id = $2::uuid AND state = 'running' AND upstream_id IS NULL AND submit_started_at IS NULL
                        AND lease_owner = $4 AND attempts = $5 AND EXISTS (SELECT 1 FROM ch) RETURNING id)
         SELECT EXISTS (SELECT 1 FROM assigned) AS assigned, EXISTS (SELECT 1 FROM held) AS held`,
        [channelId, taskId, probeS, holder.worker, holder.attempt],
      ),
    );
    return rows[0]?.assigned ? 'assigned' : rows[0]?.held ? 'refused' : 'not held';
  }

  /** The channel's last refusal or failure, in the upstream's words (never a credential). */
  async noteError(channelId: string, error: string): Promise<void> {
    await this.prisma.$executeRawUnsafe(`UPDATE channels SET last_error = $2, last_error_at = now() WHERE id = $1::uuid`, channelId, upstreamWords(error));
  }

  /**
   * The upstream said when to come back: the circuit is open until then (never shortened), with no
   * failure counted toward the next opening's length. Answers whether it was closed (or half-open) before.
   */
  async openCircuitFor(channelId: string, seconds: number): Promise<boolean> {
    const [row] = await this.prisma.$queryRawUnsafe<{ opened: boolean }[]>(
      `WITH old AS (SELECT id, circuit_state FROM channels WHERE id = $1::uuid FOR UPDATE)
       UPDATE channels c SET circuit_state = 'open', consecutive_failures = 0,
              circuit_open_until = GREATEST(CASE WHEN old.circuit_state = 'open' THEN c.circuit_open_until END, now() + make_interval(secs => $2::float8))
       FROM old WHERE c.id = old.id RETURNING old.circuit_state <> 'open' AS opened`,
      channelId,
      seconds,
    );
    return row?.opened ?? false;
  }

  /**
   * An enabled channel stops taking tasks with the upstream's reason (one an admin disabled stays so). The refusal
   * counts as its last test (`tested_at`): its periodic test comes CHANNEL_TEST_INTERVAL_S later, not at the next
   * tick, where a test call that passes without credit (GET /models) would give it tasks again at once.
   */
  async autoDisable(channelId: string, reason: string): Promise<boolean> {
    const changed = await this.prisma.$executeRawUnsafe(
      `UPDATE channels SET status = 'auto_disabled', status_reason = $2, last_error = $2, last_error_at = now(), updated_at = now(), tested_at = now() WHERE id = $1::uuid AND status = 'enabled'`,
      channelId,
      upstreamWords(reason),
    );
    return changed === 1;
  }

  /**
   * An admin enables or disables the channel: answers whether its status changed (enabling an enabled channel,
   * or disabling one an admin already disabled, changes nothing and is not worth a warning). Disabling an
   * auto-disabled channel is a change: an admin's disabling is never undone by its periodic test.
   */
  async setStatusByAdmin(channelId: string, enabled: boolean): Promise<boolean> {
    const [status, reason] = enabled ? ['enabled', null] : ['disabled', 'disabled by an admin'];
    const changed = await this.prisma.$executeRawUnsafe(
      `UPDATE channels SET status = $2, status_reason = $3, updated_at = now() WHERE id = $1::uuid AND deleted_at IS NULL AND status <> $2`,
      channelId,
      status,
      reason,
    );
    this.writes++;
    return changed === 1;
  }

  /** An auto-disabled channel takes tasks again (after a passing test); one an admin disabled is left alone. */
  async reenableAuto(channelId: string): Promise<boolean> {
    return (await this.prisma.$executeRawUnsafe(`UPDATE channels SET status = 'enabled', status_reason = NULL, updated_at = now() WHERE id = $1::uuid AND status = 'auto_disabled'`, channelId)) === 1;
  }

  /**
   * A failure of the channel (a refusal for capacity, unreachable): counted; at the threshold, or on a
   * failed probe, the circuit opens for `openS` × its openings (at most 10 min). Answers whether it just opened.
   */
  async recordFailure(channelId: string, threshold: number, openS: number): Promise<{ opened: boolean; openForS: number }> {
    const [row] = await this.prisma.$queryRawUnsafe<{ opened: boolean; open_for_s: number }[]>(
      `WITH old AS (SELECT id, circuit_state, consecutive_failures, openings FROM channels WHERE id = $1::uuid FOR UPDATE),
            decided AS (SELECT id, (circuit_state = 'half_open' OR (circuit_state = 'closed' AND consecutive_failures + 1 >= $2)) AS opens,
                               LEAST($3::float8 * (openings + 1), 600) AS open_for_s FROM old)
       UPDATE channels c SET consecutive_failures = CASE WHEN d.opens THEN 0 ELSE c.consecutive_failures + 1 END,
              circuit_state = CASE WHEN d.opens THEN 'open' ELSE c.circuit_state END,
              openings = CASE WHEN d.opens THEN c.openings + 1 ELSE c.openings END,
              circuit_open_until = CASE WHEN d.opens THEN now() + make_interval(secs => d.open_for_s) ELSE c.circuit_open_until END
       FROM decided d WHERE c.id = d.id RETURNING d.opens AS opened, d.open_for_s`,
      channelId,
      threshold,
      openS,
    );
    return { opened: row?.opened ?? false, openForS: row?.open_for_s ?? 0 };
  }

  /** The channel answered (it took the task, or refused the task itself): failures forgotten; a probe that passed closes the circuit. Answers whether it closed. */
  async recordSuccess(channelId: string): Promise<boolean> {
    const [row] = await this.prisma.$queryRawUnsafe<{ closed: boolean }[]>(
      `WITH ${healSql('$1')} SELECT closed FROM healed`,
      channelId,
    );
    return row?.closed ?? false;
  }

  /**
   * The channel answered a request of a task (it took the task, or refused the task itself): the attempt
   * is kept and, when the channel had failures counted or its circuit was not closed, they are forgotten
   * (recordSuccess), in one statement. Answers whether the circuit closed. Its commit is not flushed
   * (UNFLUSHED_COMMIT): the task's next change (its end, its upstream task's watch), flushed, takes it to disk.
   */
  async recordAnswered(taskId: string, channelId: string, outcome: string, message: string | null, latencyMs: number | null, taken?: UpstreamTaskFacts): Promise<boolean> {
    const { rows } = await this.prisma.pool.query<{ closed: boolean }>(
      prepared(
        `WITH attempt AS (INSERT INTO task_attempts (id, task_id, channel_id, at, outcome, message, latency_ms, model, upstream_id, cost)
                          VALUES ($1::uuid, $2::uuid, $3::uuid, now(), $4, $5, $6, $7, $8, $9::float8)),
              ${healSql('$3')}
         SELECT (SELECT closed FROM healed) AS closed, ${UNFLUSHED_COMMIT}`,
        [randomUUID(), taskId, channelId, outcome, message == null ? null : upstreamWords(message), latencyMs, taken?.model ?? null, taken?.upstreamId ? storableText(taken.upstreamId) : null, taken?.cost ?? null],
      ),
    );
    return rows[0]?.closed ?? false;
  }

  /** A request sent to a channel and what came of it; `taskId` null for a test. */
  async recordAttempt(taskId: string | null, channelId: string | null, outcome: string, message: string | null, latencyMs: number | null, taken?: UpstreamTaskFacts): Promise<void> {
    await this.prisma.taskAttempt.create({
      data: { id: randomUUID(), taskId, channelId, outcome, message: message == null ? null : upstreamWords(message), latencyMs, model: taken?.model ?? null, upstreamId: taken?.upstreamId ? storableText(taken.upstreamId) : null, cost: taken?.cost ?? null },
    });
  }

  /** Each channel's requests over the last 5 minutes: how many, how many answered, and their median latency (a `gateway_error` is no request). */
  async recentHealth(channelIds: string[]): Promise<Map<string, ChannelRecent>> {
    if (channelIds.length === 0) return new Map();
    const rows = await this.prisma.$queryRawUnsafe<{ channel_id: string; total: number; ok: number; p50: number | null }[]>(
      `SELECT channel_id, count(*)::int AS total, count(*) FILTER (WHERE outcome IN (${ANSWERED}))::int AS ok,
              percentile_cont(0.5) WITHIN GROUP (ORDER BY latency_ms) FILTER (WHERE latency_ms IS NOT NULL) AS p50
       FROM task_attempts WHERE channel_id = ANY ($1::uuid[]) AND at > now() - interval '5 minutes' AND outcome <> 'gateway_error' GROUP BY channel_id`,
      channelIds,
    );
    return new Map(rows.map((r) => [r.channel_id, { total: r.total, ok: r.ok, p50Ms: r.p50 === null ? null : Math.round(r.p50) }]));
  }

  /** The auto-disabled channels due a periodic test, each claimed (its tested_at set) so one instance tests it. */
  async claimDueTests(intervalS: number): Promise<string[]> {
    const rows = await this.prisma.$queryRawUnsafe<{ id: string }[]>(
      `UPDATE channels SET tested_at = now() WHERE id IN (
         SELECT id FROM channels WHERE status = 'auto_disabled' AND deleted_at IS NULL AND (tested_at IS NULL OR tested_at <= now() - make_interval(secs => $1::float8))
         FOR UPDATE SKIP LOCKED) RETURNING id`,
      intervalS,
    );
    return rows.map((r) => r.id);
  }

  /** A follow-up task goes to the channel that holds what it follows (whatever its status). */
  async pinTask(taskId: string, channelId: string): Promise<void> {
    await this.prisma.$executeRawUnsafe(`UPDATE tasks SET channel_id = $2::uuid WHERE id = $1::uuid AND upstream_id IS NULL AND submit_started_at IS NULL`, taskId, channelId);
  }

  /** A task's attempts, oldest first, with the names of their channels; null when there is no such task. */
  async attemptsOf(taskId: string): Promise<AttemptRow[] | null> {
    if (!isUUID(taskId)) return null;
    if (!(await this.prisma.task.findUnique({ where: { id: taskId }, select: { id: true } }))) return null;
    return this.prisma.$queryRawUnsafe(
      `SELECT a.at, a.outcome, a.message, a.latency_ms, a.channel_id, c.name AS channel, a.model, a.upstream_id, a.cost, a.billed_amount, a.billed_unit, a.billed_cost
       FROM task_attempts a LEFT JOIN channels c ON c.id = a.channel_id WHERE a.task_id = $1::uuid ORDER BY a.at, a.id`,
      taskId,
    );
  }

  /**
   * Keeps what the vendor reported it billed for the upstream task `upstreamId` of a task on the attempt that
   * accepted it, in one statement. Safe to run again (a step that re-runs asks the vendor again): a figure
   * already kept changes nothing and answers no row; a changed one (a vendor that refunded part) is written and
   * answered with the billed cost it replaced.
   */
  async recordBilled(taskId: string, upstreamId: string, billed: BilledFigure): Promise<BilledAttempt[]> {
    const { rows } = await this.prisma.pool.query<{ model: string | null; cost: number | null; previous_billed_cost: number | null }>(
      prepared(
        `UPDATE task_attempts a SET billed_amount = $3::float8, billed_unit = $4, billed_cost = $5::float8
         FROM (SELECT id, billed_cost FROM task_attempts WHERE task_id = $1::uuid AND upstream_id = $2 AND outcome = 'accepted' FOR UPDATE) old
         WHERE a.id = old.id AND (a.billed_amount IS DISTINCT FROM $3::float8 OR a.billed_unit IS DISTINCT FROM $4 OR a.billed_cost IS DISTINCT FROM $5::float8)
         RETURNING a.model, a.cost, old.billed_cost AS previous_billed_cost`,
        [taskId, storableText(upstreamId), billed.amount, billed.unit, billed.cost],
      ),
    );
    return rows.map((r) => ({ model: r.model, cost: r.cost, previousBilledCost: r.previous_billed_cost }));
  }

  /** A task that found no channel gives back the one it last tried (it holds none until it is sent again), while `holder`'s claim has it. */
  async releaseUnsent(taskId: string, holder: Holder): Promise<void> {
    await this.prisma.$executeRawUnsafe(
      `UPDATE tasks SET channel_id = NULL WHERE id = $1::uuid AND upstream_id IS NULL AND submit_started_at IS NULL AND lease_owner = $2 AND attempts = $3`,
      taskId,
      holder.worker,
      holder.attempt,
    );
  }

  /** A channel defined by the configuration (RELAY_<OP>_URL): made once by name, its address and protocol kept current. */
  async upsertConfigChannel(channel: NewChannel): Promise<void> {
    await this.prisma.$executeRawUnsafe(
      `INSERT INTO channels (id, name, operations, protocol, base_url, credentials_hint, weight, priority, source, status, status_reason)
       VALUES ($1::uuid, $2, $3::text[], $4, $5, $6, 100, 0, 'config', 'enabled', NULL)
       ON CONFLICT (name) WHERE deleted_at IS NULL DO UPDATE SET operations = EXCLUDED.operations, protocol = EXCLUDED.protocol, base_url = EXCLUDED.base_url,
         credentials_hint = EXCLUDED.credentials_hint, updated_at = now(),
         status = CASE WHEN channels.status_reason LIKE 'no longer configured%' THEN 'enabled' ELSE channels.status END,
         status_reason = CASE WHEN channels.status_reason LIKE 'no longer configured%' THEN NULL ELSE channels.status_reason END
       WHERE channels.source = 'config'`,
      channel.id,
      channel.name,
      channel.operations,
      channel.protocol,
      channel.baseUrl,
      channel.credentialsHint,
    );
  }

  /** Disables the configuration's channels that the configuration no longer defines (their tasks keep them). */
  async disableConfigChannelsOtherThan(names: string[], reason: string): Promise<void> {
    await this.prisma.channel.updateMany({
      where: { source: 'config', deletedAt: null, name: { notIn: names }, status: 'enabled' },
      data: { status: 'disabled', statusReason: reason, updatedAt: new Date() },
    });
  }
}

/**
 * An upstream's words as kept: at most 500 characters, and storable (a lone surrogate or NUL from the
 * upstream, or a surrogate pair the cut split, becomes U+FFFD instead of failing the write).
 */
function upstreamWords(text: string): string {
  return storableText(text.slice(0, 500));
}

/**
 * CTEs `old` and `healed` (RETURNING closed): the channel whose id is the SQL parameter `id` forgets its
 * failures and closes its circuit, when it had failures counted or was not closed; `closed` says whether
 * its circuit was open or half-open. A probe that passed resets the openings.
 */
function healSql(id: string): string {
  return `old AS (SELECT id, circuit_state FROM channels WHERE id = ${id}::uuid AND (consecutive_failures > 0 OR circuit_state <> 'closed') FOR UPDATE),
          healed AS (UPDATE channels c SET consecutive_failures = 0, circuit_state = 'closed', circuit_open_until = NULL, openings = CASE WHEN old.circuit_state = 'half_open' THEN 0 ELSE c.openings END
                     FROM old WHERE c.id = old.id RETURNING old.circuit_state <> 'closed' AS closed)`;
}
