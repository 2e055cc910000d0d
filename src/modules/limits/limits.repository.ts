import { Injectable } from '@nestjs/common';
import { Prisma } from '../../generated/prisma/client.js';
import { PrismaService } from '../../infra/prisma/prisma.service.js';
import type { EndedTasks } from '../../common/tasks/task-kind.js';
import { type AdmissionSql, prepared, Statement } from '../../infra/prisma/statement.js';
import { BILLED_UNITS, type BilledUnit } from '../../vendors/contracts/vendor-billing.js';
import { billingMismatchSql } from '../channels/upstream-billing.js';
import type { RateGrant } from './rate-limiter.js';

/** The limits an admin set: the keys given, each an integer or null (unlimited); an absent key is the default. */
export type StoredLimits = Partial<Record<'requests_per_minute' | 'max_concurrent_tasks' | 'monthly_credits', number | null>>;

export interface Admission {
  admitted: boolean;
  refusal: 'concurrency' | 'credits' | null;
  slotsBefore: number;
  creditsBefore: number;
}

export interface OperationUsage {
  /** The task kind. */
  operation: string;
  accepted: number;
  succeeded: number;
  failed: number;
  creditsCharged: number;
  creditsRefunded: number;
}

export interface DailyUsage extends OperationUsage {
  day: string;
  owner: string;
}

/** Refusals by a limit, counted per owner, UTC day (YYYY-MM-DD) and code. */
export interface RefusalCount {
  owner: string;
  day: string;
  code: number;
  count: number;
}

/** The notification channel on which a change of an owner's limits is announced (payload: the owner). */
export const LIMITS_CHANNEL = 'mgw_limits';

/** Per-owner limits, request windows, admission counters, and usage read from the task tables. */
@Injectable()
export class LimitsRepository {
  constructor(private readonly prisma: PrismaService) {}

  /** A grant of requests from the owner's window (see mgw_rate_take and RateLimiter). One round trip. */
  async takeRequests(owner: string, defaultRpm: number | null, want: number, giveBack: number, giveBackWindow: Date | null, windowS: number): Promise<RateGrant> {
    const {
      rows: [row],
    } = await this.prisma.pool.query<{ rpm: number | null; granted: number; counted: number; window_start: Date | null; reset_ms: number | null }>(
      prepared('SELECT * FROM mgw_rate_take($1, $2::int, $3::int, $4::int, $5::timestamptz, $6::int)', [owner, defaultRpm, want, giveBack, giveBackWindow, windowS]),
    );
    return { rpm: row.rpm, granted: row.granted, counted: row.counted, windowStart: row.window_start, resetMs: row.reset_ms };
  }

  /** The owner's request window as it stands (without counting). */
  async findWindow(owner: string, windowS: number): Promise<{ count: number; resetS: number } | null> {
    const [row] = await this.prisma.$queryRawUnsafe<{ count: number; reset_s: number }[]>(
      `SELECT count, ceil(extract(epoch FROM window_start + make_interval(secs => $2) - now()))::int AS reset_s
       FROM rate_windows WHERE owner = $1 AND window_start > now() - make_interval(secs => $2)`,
      owner,
      windowS,
    );
    return row ? { count: row.count, resetS: Math.max(1, row.reset_s) } : null;
  }

  /**
   * The admission of owners' tasks, each owner's in order (see mgw_admit_tasks), the owners one after the
   * other in the order given, as part of the statement that inserts them: one row per task, ord counting
   * from 1 across all of them. Each owner's counter row stays locked until that statement commits. The
   * text is the same for any number of owners and tasks (the tasks' arrays sliced per owner), so one
   * prepared statement serves every batch.
   */
  static admissionSql(owners: { owner: string; tasks: { id: string; slots: number; credits: number }[] }[], defaultMaxSlots: number | null, defaultMaxCredits: number | null, month: string, monthStart: Date): AdmissionSql {
    const before: number[] = [];
    let n = 0;
    for (const o of owners) {
      before.push(n);
      n += o.tasks.length;
    }
    const tasks = owners.flatMap((o) => o.tasks);
    return (s) => {
      const [ids, slots, credits] = [s.param(tasks.map((t) => t.id), 'uuid[]'), s.param(tasks.map((t) => t.slots), 'int[]'), s.param(tasks.map((t) => t.credits), 'int[]')];
      const span = '[g.before + 1 : g.before + g.n]';
      // a lateral call per owner, in the order of the owners' array (a nested loop over it): their locks in that order
      return `SELECT (g.before + a.ord)::int AS ord, a.admitted, a.refusal, a.slots_before, a.credits_before, a.max_slots, a.max_credits
        FROM unnest(${s.param(owners.map((o) => o.owner), 'varchar[]')}, ${s.param(before, 'int[]')}, ${s.param(owners.map((o) => o.tasks.length), 'int[]')}) WITH ORDINALITY AS g (owner, before, n, pos)
        CROSS JOIN LATERAL mgw_admit_tasks(g.owner, (${ids})${span}, (${slots})${span}, (${credits})${span}, ${s.param(defaultMaxSlots)}::int, ${s.param(defaultMaxCredits)}::int, ${s.param(month)}, ${s.param(monthStart.toISOString())}::timestamptz) a`;
    };
  }

  /** Reads (and, when missing, rebuilds) the owner's counters under the rules of an admission of nothing. */
  private async admit(tx: Prisma.TransactionClient, owner: string, slots: number, credits: number, maxSlots: number | null, maxCredits: number | null, month: string, monthStart: Date): Promise<Admission> {
    const [row] = await tx.$queryRawUnsafe<{ admitted: boolean; refusal: 'concurrency' | 'credits' | null; slots_before: number; credits_before: number }[]>(
      'SELECT * FROM mgw_admit($1, $2, $3, $4, $5, $6, $7)',
      owner,
      slots,
      credits,
      maxSlots,
      maxCredits,
      month,
      monthStart,
    );
    return { admitted: row.admitted, refusal: row.refusal, slotsBefore: row.slots_before, creditsBefore: row.credits_before };
  }

  /**
   * In the transaction where these tasks reached a final state (each exactly once: the change is guarded):
   * their owners' counters give back the slots and, when they failed (`refund`), the credits charged in
   * the current `month`. Answers per owner and kind what was released.
   */
  async release(tx: Prisma.TransactionClient, ids: string[], refund: boolean, month: string): Promise<EndedTasks[]> {
    const s = new Statement();
    const ended = `SELECT kind, owner, slots, credits, created_at FROM tasks WHERE id = ANY(${s.param(ids)}::uuid[])`;
    return tx.$queryRawUnsafe<EndedTasks[]>(`WITH ${LimitsRepository.releaseCtes(s, ended, refund, month).join(',\n')} SELECT * FROM settled`, ...s.values);
  }

  /**
   * The release as CTEs (see release), the last named `settled` (owner, kind, tasks, refunded): `ended` is
   * a query of the tasks that ended (kind, owner, slots, credits, created_at), a CTE's name or a SELECT.
   */
  static releaseCtes(s: Statement, ended: string, refund: boolean, month: string): string[] {
    const [refunds, inMonth] = [s.param(refund, 'boolean'), s.param(month, 'text')];
    return [
      `ended_kinds AS (
         SELECT owner, kind, count(*)::int AS tasks, SUM(slots)::int AS slots,
                COALESCE(SUM(credits) FILTER (WHERE ${refunds} AND to_char(created_at AT TIME ZONE 'UTC', 'YYYY-MM') = ${inMonth}), 0)::int AS credits
         FROM (${ended}) e GROUP BY owner, kind)`,
      // the owners' counter rows locked in the order of their names' bytes (the "C" collation, whatever the
      // database's), as an admission locks them (TaskIntake): an end of several owners' tasks and an admission
      // of several owners never wait on each other in a cycle
      `locked_owners AS (SELECT owner FROM owner_counters WHERE owner IN (SELECT owner FROM ended_kinds) ORDER BY owner COLLATE "C" FOR UPDATE)`,
      `counters AS (
         UPDATE owner_counters c SET active_slots = GREATEST(0, c.active_slots - e.slots),
           credits_used = CASE WHEN c.credits_month = ${inMonth} THEN GREATEST(0, c.credits_used - e.credits) ELSE c.credits_used END
         FROM (SELECT owner, SUM(slots)::int AS slots, SUM(credits)::int AS credits FROM ended_kinds GROUP BY owner) e
         WHERE c.owner = e.owner AND c.owner IN (SELECT owner FROM locked_owners)
         RETURNING c.owner, c.credits_month)`,
      `settled AS (
         SELECT e.owner, e.kind, e.tasks, CASE WHEN c.credits_month IS NULL OR c.credits_month = ${inMonth} THEN e.credits ELSE 0 END AS refunded
         FROM ended_kinds e LEFT JOIN counters c ON c.owner = e.owner)`,
    ];
  }

  async findLimits(owner: string): Promise<StoredLimits | null> {
    const row = await this.prisma.ownerLimit.findUnique({ where: { owner } });
    return row ? (row.limits as StoredLimits) : null;
  }

  /** Stores the owner's limits and, in the same statement, tells every instance (LIMITS_CHANNEL) to drop what it cached. */
  async saveLimits(owner: string, limits: StoredLimits): Promise<void> {
    await this.prisma.pool.query(
      `WITH saved AS (
         INSERT INTO owner_limits (owner, limits, updated_at) VALUES ($1, $2::jsonb, now())
         ON CONFLICT (owner) DO UPDATE SET limits = EXCLUDED.limits, updated_at = now() RETURNING owner)
       SELECT pg_notify('${LIMITS_CHANNEL}', owner) FROM saved`,
      [owner, JSON.stringify(limits)],
    );
  }

  /** Slots the owner's unfinished tasks hold and credits used in `month`, from the counters (rebuilt from the tasks when missing). */
  async findCounters(owner: string, month: string, monthStart: Date): Promise<{ activeSlots: number; creditsUsed: number }> {
    // Admitting nothing creates a missing row, and reads it, under the same rules as a real admission.
    return this.prisma.$transaction(async (tx) => {
      const admission = await this.admit(tx, owner, 0, 0, null, null, month, monthStart);
      return { activeSlots: admission.slotsBefore, creditsUsed: admission.creditsBefore };
    });
  }

  /** The owner's tasks of these kinds created in [from, to), per kind, with their outcome and credits (a kind without any: zeros). */
  async usageByOperation(owner: string, kinds: string[], from: Date, to: Date): Promise<OperationUsage[]> {
    const rows = await this.prisma.$queryRawUnsafe<UsageRow[]>(
      `SELECT kind AS operation, ${USAGE_FIGURES} FROM tasks WHERE owner = $1 AND kind = ANY($2::varchar[]) AND created_at >= $3 AND created_at < $4 GROUP BY kind`,
      owner,
      kinds,
      from,
      to,
    );
    return kinds.map((kind) => toUsage(rows.find((r) => r.operation === kind) ?? { operation: kind, accepted: 0, succeeded: 0, failed: 0, charged: 0, refunded: 0 }));
  }

  /** The same figures per owner (or for one), UTC day and kind, for days in [from, to). */
  async usageByDay(from: Date, to: Date, owner?: string): Promise<DailyUsage[]> {
    const rows = await this.prisma.$queryRawUnsafe<(UsageRow & { day: string; owner: string })[]>(
      `SELECT to_char(created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD') AS day, owner, kind AS operation, ${USAGE_FIGURES}
       FROM tasks WHERE created_at >= $1 AND created_at < $2 AND ($3::varchar IS NULL OR owner = $3) GROUP BY 1, 2, 3 ORDER BY 1, 2, 3`,
      from,
      to,
      owner ?? null,
    );
    return rows.map((r) => ({ day: r.day, owner: r.owner, ...toUsage(r) }));
  }

  /**
   * What upstreams cost for the tasks created in [from, to) (of one owner, or all): per owner, operation,
   * channel and model, the upstream tasks channels accepted (those later abandoned included) and the sum of
   * their priced costs; beside them, what the vendors reported they billed (the sum of each unit, and of its
   * cost at the channels' prices where priced), how many reported nothing, and how many differ from their
   * price by more than `tolerance` × it (UpstreamBilling's rule).
   */
  async upstreamCosts(from: Date, to: Date, tolerance: number, owner?: string): Promise<UpstreamCost[]> {
    const rows = await this.prisma.$queryRawUnsafe<(Omit<UpstreamCost, 'billed'> & Record<`billed_${BilledUnit}`, number | null>)[]>(
      `SELECT t.owner, t.kind AS operation, COALESCE(c.name, 'RELAY_' || upper(t.kind) || '_URL') AS channel, COALESCE(a.model, '') AS model,
              count(*)::int AS upstream_tasks, count(*) FILTER (WHERE a.cost IS NULL)::int AS unpriced, COALESCE(sum(a.cost), 0)::float8 AS cost,
              sum(a.billed_cost)::float8 AS billed_cost, count(*) FILTER (WHERE a.billed_amount IS NULL)::int AS unbilled,
              count(*) FILTER (WHERE ${billingMismatchSql('a.cost', 'a.billed_cost', '$4')})::int AS billing_mismatches,
              ${BILLED_UNITS.map((unit) => `sum(a.billed_amount) FILTER (WHERE a.billed_unit = '${unit}')::float8 AS billed_${unit}`).join(', ')}
       FROM tasks t JOIN task_attempts a ON a.task_id = t.id AND a.outcome = 'accepted' LEFT JOIN channels c ON c.id = a.channel_id
       WHERE t.created_at >= $1 AND t.created_at < $2 AND ($3::varchar IS NULL OR t.owner = $3)
       GROUP BY 1, 2, 3, 4 ORDER BY 1, 2, 3, 4`,
      from,
      to,
      owner ?? null,
      tolerance,
    );
    return rows.map((r) => ({
      owner: r.owner,
      operation: r.operation,
      channel: r.channel,
      model: r.model,
      upstream_tasks: r.upstream_tasks,
      unpriced: r.unpriced,
      cost: r.cost,
      billed_cost: r.billed_cost,
      billed: Object.fromEntries(BILLED_UNITS.filter((unit) => r[`billed_${unit}`] !== null).map((unit) => [unit, r[`billed_${unit}`]])),
      unbilled: r.unbilled,
      billing_mismatches: r.billing_mismatches,
    }));
  }

  /** Adds refusals to the per-day counts, in one statement. */
  async addRefusals(rows: RefusalCount[]): Promise<void> {
    if (rows.length === 0) return;
    await this.prisma.pool.query(
      `INSERT INTO limit_refusals (owner, day, code, count)
       SELECT * FROM unnest($1::varchar[], $2::date[], $3::int[], $4::int[])
       ON CONFLICT (owner, day, code) DO UPDATE SET count = limit_refusals.count + EXCLUDED.count`,
      [rows.map((r) => r.owner), rows.map((r) => r.day), rows.map((r) => r.code), rows.map((r) => r.count)],
    );
  }

  /** Refusals per UTC day, owner (or of one) and code, for days in [from, to). */
  async refusalsByDay(from: Date, to: Date, owner?: string): Promise<RefusalCount[]> {
    return this.prisma.$queryRawUnsafe<RefusalCount[]>(
      `SELECT to_char(day, 'YYYY-MM-DD') AS day, owner, code, count FROM limit_refusals
       WHERE day >= $1::date AND day < $2::date AND ($3::varchar IS NULL OR owner = $3) ORDER BY 1, 2, 3`,
      from.toISOString().slice(0, 10),
      to.toISOString().slice(0, 10),
      owner ?? null,
    );
  }
}

/** Upstream tasks and what they cost, for one owner, operation, channel and model. */
export interface UpstreamCost {
  owner: string;
  operation: string;
  channel: string;
  model: string;
  upstream_tasks: number;
  unpriced: number;
  cost: number;
  /** The sum of the billed costs known (null: none known). */
  billed_cost: number | null;
  /** What the vendors reported they billed, summed by unit (the units reported only). */
  billed: Partial<Record<BilledUnit, number>>;
  /** Upstream tasks whose vendor reported no billed figure (none reported, or not yet). */
  unbilled: number;
  billing_mismatches: number;
}

interface UsageRow {
  operation: string;
  accepted: number;
  succeeded: number;
  failed: number;
  charged: number;
  refunded: number;
}

const USAGE_FIGURES = `count(*)::int AS accepted, count(*) FILTER (WHERE state = 'succeeded')::int AS succeeded, count(*) FILTER (WHERE state = 'failed')::int AS failed,
  COALESCE(SUM(credits), 0)::int AS charged, COALESCE(SUM(credits) FILTER (WHERE state = 'failed'), 0)::int AS refunded`;

function toUsage(r: UsageRow): OperationUsage {
  return { operation: r.operation, accepted: r.accepted, succeeded: r.succeeded, failed: r.failed, creditsCharged: r.charged, creditsRefunded: r.refunded };
}
