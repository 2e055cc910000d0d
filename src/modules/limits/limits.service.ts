import { Injectable, Logger, type BeforeApplicationShutdown, type OnModuleInit } from '@nestjs/common';
import type { Response } from 'express';
import { AppError } from '../../common/errors/app-error.js';
import type { Admission, EndedTasks, FinalState, Price, TaskTx } from '../../common/tasks/task-kind.js';
import { AppConfig, type OwnerLimitValues } from '../../infra/config/app-config.js';
import { NotificationsService } from '../../infra/database/notifications.service.js';
import { MetricsService } from '../../infra/metrics/metrics.service.js';
import type { AdmissionSql, Statement } from '../../infra/prisma/statement.js';
import { type DailyUsage, LIMITS_CHANNEL, LimitsRepository, type OperationUsage, type RefusalCount, type StoredLimits, type UpstreamCost } from './limits.repository.js';
import { RateLimiter } from './rate-limiter.js';

/** Requests are counted per owner in windows of this many seconds. */
export const RATE_WINDOW_S = 60;
/** The name of the rate-limit policy in the RateLimit-Policy and RateLimit headers. */
const POLICY = 'per-owner';
/** Seconds to wait after a refusal for concurrency: about as long as a short task takes. */
const CONCURRENCY_RETRY_AFTER_S = 5;
/** The codes of the refusals a limit makes: rate (1302), concurrency (1303), credits (1102). */
export const REFUSAL_CODES = [1302, 1303, 1102] as const;
export type RefusalCode = (typeof REFUSAL_CODES)[number];
/** How often an instance adds what it refused to the stored counts. */
const REFUSALS_FLUSH_MS = 1000;
/** Kept in memory while the database does not answer, at most: beyond, new refusals are only in metrics. */
const REFUSALS_MAX_PENDING = 10_000;
const LIMIT_KEYS = { requestsPerMinute: 'requests_per_minute', maxConcurrentTasks: 'max_concurrent_tasks', monthlyCredits: 'monthly_credits' } as const;

export interface OwnerLimitsReport {
  limits: OwnerLimitValues;
  /** Which of the limits are the defaults (no admin set them). */
  fromDefaults: (keyof OwnerLimitValues)[];
}

/** The calendar month (UTC) of `at`: its key (`YYYY-MM`) and its first instant. */
export function monthOf(at = new Date()): { key: string; start: Date; next: Date } {
  const start = new Date(Date.UTC(at.getUTCFullYear(), at.getUTCMonth(), 1));
  const next = new Date(Date.UTC(at.getUTCFullYear(), at.getUTCMonth() + 1, 1));
  return { key: start.toISOString().slice(0, 7), start, next };
}

let current: ReturnType<typeof monthOf> | undefined;

/** The current month, computed once a month rather than on every admission and every end of a task. */
function thisMonth(): ReturnType<typeof monthOf> {
  if (!current || Date.now() >= current.next.getTime()) current = monthOf();
  return current;
}

/**
 * Per-owner limits shared by every instance through PostgreSQL: requests per minute (1302), slots held
 * by unfinished tasks (1303, Kling's rule: an expand task holds n) and monthly credits (1102). Limits an
 * admin has not set are the DEFAULT_* settings; null is unlimited.
 */
@Injectable()
export class LimitsService implements OnModuleInit, BeforeApplicationShutdown {
  private readonly logger = new Logger('Limits');
  /** Refusals not yet stored, by owner, day and code (see flushRefusals). */
  private pendingRefusals = new Map<string, RefusalCount>();
  private refusalsTimer?: NodeJS.Timeout;

  private readonly rateLimiter: RateLimiter;

  constructor(
    private readonly repository: LimitsRepository,
    private readonly config: AppConfig,
    private readonly metrics: MetricsService,
    private readonly notifications: NotificationsService,
  ) {
    this.rateLimiter = new RateLimiter((owner, want, giveBack, giveBackWindow) =>
      this.repository.takeRequests(owner, this.config.defaultLimits.requestsPerMinute, want, giveBack, giveBackWindow, RATE_WINDOW_S),
    );
  }

  /** A change of an owner's limits on any instance drops what this one cached of them. */
  async onModuleInit(): Promise<void> {
    if (this.config.runsApi) await this.notifications.listen(LIMITS_CHANNEL, (owner) => this.rateLimiter.forget(owner));
    this.refusalsTimer = setInterval(() => void this.flushRefusals(), REFUSALS_FLUSH_MS);
    this.refusalsTimer.unref();
  }

  /** Before the database pool closes (PrismaService closes it in onApplicationShutdown). */
  async beforeApplicationShutdown(): Promise<void> {
    clearInterval(this.refusalsTimer);
    await this.flushRefusals();
  }

  /**
   * Adds the refusals counted since the last flush to `limit_refusals` (one statement per second at most,
   * whatever the refused traffic); when the database does not answer they wait for the next flush.
   */
  async flushRefusals(): Promise<void> {
    if (this.pendingRefusals.size === 0) return;
    const rows = [...this.pendingRefusals.values()];
    this.pendingRefusals = new Map();
    try {
      await this.repository.addRefusals(rows);
    } catch (err) {
      for (const row of rows) this.countRefusal(row.owner, row.day, row.code, row.count);
      this.logger.warn(`refusal counts kept for the next flush: ${String(err)}`);
    }
  }

  /** Refusals of every owner (or of one) by day and code, for days from..to (inclusive). */
  refusalsByDay(from: Date, to: Date, owner?: string): Promise<RefusalCount[]> {
    return this.repository.refusalsByDay(from, new Date(to.getTime() + 24 * 3600 * 1000), owner);
  }

  /** The owner's limits: what an admin stored, and the defaults for the rest. */
  effective(stored: StoredLimits | null): OwnerLimitsReport {
    const limits = { ...this.config.defaultLimits };
    const fromDefaults: (keyof OwnerLimitValues)[] = [];
    for (const [field, key] of Object.entries(LIMIT_KEYS) as [keyof OwnerLimitValues, string][]) {
      if (stored && key in stored) limits[field] = (stored as Record<string, number | null>)[key];
      else fromDefaults.push(field);
    }
    return { limits, fromDefaults };
  }

  /**
   * Counts a keyed request against its owner's rate limit (RateLimiter: shared by every instance, without
   * a database write per request). Sets the IETF draft's RateLimit-Policy and RateLimit headers when the
   * owner has a rate limit; over it, refuses with 1302 and Retry-After (the seconds until the window ends).
   */
  async countRequest(owner: string, res: Response): Promise<void> {
    const decision = await this.rateLimiter.count(owner);
    if (!decision.limited) return;
    res.setHeader('RateLimit-Policy', `"${POLICY}";q=${decision.rpm};w=${RATE_WINDOW_S}`);
    res.setHeader('RateLimit', `"${POLICY}";r=${decision.remaining};t=${decision.resetS}`);
    if (!decision.allowed) {
      this.refused(owner, 1302);
      throw new AppError('RATE_LIMITED', `Too many requests: your limit is ${decision.rpm} per minute; the window ends in ${decision.resetS} s`, decision.resetS);
    }
  }

  /**
   * The admission of owners' tasks in the one statement that creates them, atomically across instances:
   * each is refused with 1303 when its slots would pass its owner's max_concurrent_tasks, with 1102 when
   * its price would pass this month's credits (see admissionOutcome).
   */
  admissionSql(owners: { owner: string; tasks: { id: string; price: Price }[] }[]): AdmissionSql {
    const month = thisMonth();
    const defaults = this.config.defaultLimits;
    return LimitsRepository.admissionSql(
      owners.map((o) => ({ owner: o.owner, tasks: o.tasks.map((t) => ({ id: t.id, ...t.price })) })),
      defaults.maxConcurrentTasks,
      defaults.monthlyCredits,
      month.key,
      month.start,
    );
  }

  /** Counts an admitted task (accepted, credits charged), or a refused one, and answers the refusal's error. */
  admissionOutcome(owner: string, operation: string, price: Price, admission: Admission): AppError | null {
    if (admission.admitted) {
      this.metrics.tasksAccepted.inc({ owner, operation });
      this.metrics.creditsCharged.inc({ owner, operation }, price.credits);
      return null;
    }
    if (admission.refusal === 'concurrency') {
      this.refused(owner, 1303);
      if (price.slots > 1 && price.slots > admission.maxSlots!) {
        // more images than the owner's limit: no wait admits it, so not a 429 a client would retry after Retry-After
        return AppError.invalidParameter(`n: this task needs ${price.slots} slots (one per image) and your limit is ${admission.maxSlots} tasks at once, so it is never admitted: ask for at most ${admission.maxSlots}`, {
          param: 'n',
          rule: 'above_max',
          integer: true,
        });
      }
      return new AppError('CONCURRENCY_LIMITED', `Too many tasks at once: your limit is ${admission.maxSlots} slots, ${admission.slotsBefore} are held by unfinished tasks and this one needs ${price.slots}; retry when one ends`, CONCURRENCY_RETRY_AFTER_S);
    }
    const month = thisMonth();
    this.refused(owner, 1102);
    return new AppError(
      'CREDITS_EXHAUSTED',
      `Resource pack exhausted: this task costs ${price.credits} credits and ${Math.max(0, admission.maxCredits! - admission.creditsBefore)} of your ${admission.maxCredits} for ${month.key} are left`,
      Math.ceil((month.next.getTime() - Date.now()) / 1000),
    );
  }

  /**
   * In the transaction where these tasks reached a final state (each exactly once: the change is guarded):
   * their owners' counters give back the slots and, when they failed, the credits charged this month.
   */
  async settle(tx: TaskTx, ids: string[], to: FinalState): Promise<void> {
    this.recordSettled(await this.repository.release(tx, ids, to === 'failed', thisMonth().key), to);
  }

  /** The same as CTEs over `changed`, for the one-statement end of a task nobody is notified of. */
  settleCtes(s: Statement, to: FinalState): string[] {
    return LimitsRepository.releaseCtes(s, 'SELECT kind, owner, slots, credits, created_at FROM changed', to === 'failed', thisMonth().key);
  }

  /** Counts what ended, and the credits given back, per owner and kind. */
  recordSettled(settled: EndedTasks[], to: FinalState): void {
    const state = to === 'failed' ? 'failed' : 'succeeded';
    for (const r of settled) {
      this.metrics.tasksFinished.inc({ owner: r.owner, operation: r.kind, state }, r.tasks);
      if (r.refunded > 0) this.metrics.creditsRefunded.inc({ owner: r.owner, operation: r.kind }, r.refunded);
    }
  }

  async report(owner: string): Promise<OwnerLimitsReport> {
    return this.effective(await this.repository.findLimits(owner));
  }

  async setLimits(owner: string, stored: StoredLimits): Promise<OwnerLimitsReport> {
    await this.repository.saveLimits(owner, stored);
    this.logger.log({ msg: 'owner limits set', owner, limits: stored });
    return this.effective(stored);
  }

  /** Slots held, credits used and left this month, and the current request window. */
  async currentUsage(owner: string, limits: OwnerLimitValues): Promise<{ month: string; activeSlots: number; creditsUsed: number; creditsRemaining: number | null; requestsThisWindow: number; windowResetsInS: number | null }> {
    const month = monthOf();
    const counters = await this.repository.findCounters(owner, month.key, month.start);
    const window = await this.repository.findWindow(owner, RATE_WINDOW_S);
    return {
      month: month.key,
      activeSlots: counters.activeSlots,
      creditsUsed: counters.creditsUsed,
      creditsRemaining: limits.monthlyCredits === null ? null : Math.max(0, limits.monthlyCredits - counters.creditsUsed),
      requestsThisWindow: window?.count ?? 0,
      windowResetsInS: window?.resetS ?? null,
    };
  }

  /** The owner's usage of each of these kinds in the current month. */
  async monthUsage(owner: string, kinds: string[]): Promise<{ month: string; operations: OperationUsage[] }> {
    const month = monthOf();
    return { month: month.key, operations: await this.repository.usageByOperation(owner, kinds, month.start, month.next) };
  }

  /** Usage per owner and day, for days from..to (inclusive). */
  /** Upstream tasks, their cost and what their vendors billed, for tasks created on days [from, to] (UTC). */
  upstreamCosts(from: Date, to: Date, owner?: string): Promise<UpstreamCost[]> {
    return this.repository.upstreamCosts(from, new Date(to.getTime() + 24 * 3600 * 1000), this.config.relay.billedCostTolerance, owner);
  }

  dailyUsage(from: Date, to: Date, owner?: string): Promise<DailyUsage[]> {
    return this.repository.usageByDay(from, new Date(to.getTime() + 24 * 3600 * 1000), owner);
  }

  private refused(owner: string, code: RefusalCode): void {
    this.metrics.limitRefusals.inc({ owner, code: String(code) });
    this.countRefusal(owner, new Date().toISOString().slice(0, 10), code, 1);
  }

  private countRefusal(owner: string, day: string, code: number, count: number): void {
    const key = `${owner}\n${day}\n${code}`;
    const row = this.pendingRefusals.get(key);
    if (row) row.count += count;
    else if (this.pendingRefusals.size < REFUSALS_MAX_PENDING) this.pendingRefusals.set(key, { owner, day, code, count });
  }
}
