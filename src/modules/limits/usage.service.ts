import { Injectable } from '@nestjs/common';
import { TaskLifecycle } from '../../common/tasks/task-lifecycle.js';
import { AppError } from '../../common/errors/app-error.js';
import type { OwnerLimitValues } from '../../infra/config/app-config.js';
import type { SetLimitsDto, OwnerLimitsDto } from './dto/limits.dto.js';
import type { AdminUsageDto, AdminUsageQueryDto, CreditBalanceDto, OperationUsageDto, RefusalCountDto, UsageDto } from './dto/usage.dto.js';
import type { OperationUsage, StoredLimits } from './limits.repository.js';
import { LimitsService, monthOf, REFUSAL_CODES } from './limits.service.js';

const DAY_MS = 24 * 3600 * 1000;
const LIMIT_FIELDS = ['requests_per_minute', 'max_concurrent_tasks', 'monthly_credits'] as const;
/** The string code of each refusal (the error envelope's name on /music-a routes). */
const REFUSAL_NAMES: Record<number, string> = { 1302: 'rate_limited', 1303: 'concurrency_limited', 1102: 'resource_pack_exhausted' };
const FIELD_OF: Record<keyof OwnerLimitValues, (typeof LIMIT_FIELDS)[number]> = { requestsPerMinute: 'requests_per_minute', maxConcurrentTasks: 'max_concurrent_tasks', monthlyCredits: 'monthly_credits' };

/** What owners and admins read of limits and usage; maps the figures to the API's shapes. */
@Injectable()
export class UsageService {
  constructor(
    private readonly limits: LimitsService,
    private readonly lifecycle: TaskLifecycle,
  ) {}

  async ownerLimits(owner: string): Promise<OwnerLimitsDto> {
    const report = await this.limits.report(owner);
    return this.toLimitsDto(owner, report.limits, report.fromDefaults);
  }

  /** Replaces the owner's limits: a field given as a number or null is stored, a field left out is the default. */
  async setOwnerLimits(owner: string, dto: SetLimitsDto): Promise<OwnerLimitsDto> {
    const stored: StoredLimits = {};
    for (const field of LIMIT_FIELDS) if (dto[field] !== undefined) stored[field] = dto[field];
    const report = await this.limits.setLimits(owner, stored);
    return this.toLimitsDto(owner, report.limits, report.fromDefaults);
  }

  async ownUsage(owner: string): Promise<UsageDto> {
    const { limits } = await this.limits.report(owner);
    const { start } = monthOf();
    const today = new Date(Date.UTC(new Date().getUTCFullYear(), new Date().getUTCMonth(), new Date().getUTCDate()));
    const [{ month, operations }, current, days, refused] = await Promise.all([
      this.limits.monthUsage(owner, this.lifecycle.kinds.map((k) => k.definition.name)),
      this.limits.currentUsage(owner, limits),
      this.limits.dailyUsage(start, today, owner),
      this.limits.refusalsByDay(start, today, owner),
    ]);
    const byOperation = Object.fromEntries(operations.map((o) => [o.operation, toOperationDto(o)]));
    const refusals: RefusalCountDto[] = REFUSAL_CODES.map((code) => ({ code, name: REFUSAL_NAMES[code], count: refused.filter((r) => r.code === code).reduce((n, r) => n + r.count, 0) }));
    return {
      owner,
      month,
      operations: byOperation,
      credits: { monthly_credits: limits.monthlyCredits, used: current.creditsUsed, remaining: current.creditsRemaining },
      days: days.map((r) => ({ day: r.day, operation: r.operation, ...toOperationDto(r) })),
      refusals,
    };
  }

  async creditBalance(owner: string): Promise<CreditBalanceDto> {
    const { limits } = await this.limits.report(owner);
    const current = await this.limits.currentUsage(owner, limits);
    return current.creditsRemaining === null ? { credit_balance: Number.MAX_SAFE_INTEGER, unlimited: true } : { credit_balance: current.creditsRemaining, unlimited: false };
  }

  async adminUsage(query: AdminUsageQueryDto): Promise<AdminUsageDto> {
    const today = new Date();
    const from = query.from ? day(query.from, 'from') : monthOf(today).start;
    const to = query.to ? day(query.to, 'to') : new Date(Date.UTC(today.getUTCFullYear(), today.getUTCMonth(), today.getUTCDate()));
    if (to < from) throw new AppError('INVALID_PARAMETER', `to (${iso(to)}) must not be before from (${iso(from)})`);
    if (to.getTime() - from.getTime() > 366 * DAY_MS) throw new AppError('INVALID_PARAMETER', 'from and to may be at most 366 days apart');
    const [rows, refusals, upstream] = await Promise.all([this.limits.dailyUsage(from, to, query.owner), this.limits.refusalsByDay(from, to, query.owner), this.limits.upstreamCosts(from, to, query.owner)]);
    return {
      from: iso(from),
      to: iso(to),
      owner: query.owner ?? null,
      days: rows.map((r) => ({ day: r.day, owner: r.owner, operation: r.operation, ...toOperationDto(r) })),
      refusals: refusals.map((r) => ({ day: r.day, owner: r.owner, code: r.code, count: r.count })),
      upstream_costs: upstream.map((u) => ({
        ...u,
        cost: rounded(u.cost),
        billed_cost: u.billed_cost === null ? null : rounded(u.billed_cost),
        billed: Object.fromEntries(Object.entries(u.billed).map(([unit, amount]) => [unit, rounded(amount)])),
      })),
    };
  }

  private async toLimitsDto(owner: string, limits: OwnerLimitValues, fromDefaults: (keyof OwnerLimitValues)[]): Promise<OwnerLimitsDto> {
    const usage = await this.limits.currentUsage(owner, limits);
    return {
      owner,
      requests_per_minute: limits.requestsPerMinute,
      max_concurrent_tasks: limits.maxConcurrentTasks,
      monthly_credits: limits.monthlyCredits,
      defaults: fromDefaults.map((f) => FIELD_OF[f]),
      usage: {
        month: usage.month,
        requests_this_minute: usage.requestsThisWindow,
        window_resets_in_s: usage.windowResetsInS,
        active_slots: usage.activeSlots,
        credits_used: usage.creditsUsed,
        credits_remaining: usage.creditsRemaining,
      },
    };
  }
}

function toOperationDto(u: OperationUsage): OperationUsageDto {
  return { accepted: u.accepted, succeeded: u.succeeded, failed: u.failed, credits_charged: u.creditsCharged, credits_refunded: u.creditsRefunded };
}

function day(value: string, field: string): Date {
  const date = new Date(`${value}T00:00:00.000Z`);
  if (Number.isNaN(date.getTime()) || iso(date) !== value) throw new AppError('INVALID_PARAMETER', `${field} is not a real day: ${value}`);
  return date;
}

/** A sum of costs or amounts as reported: to 1e-6, as each is kept (no float residue from adding them). */
function rounded(value: number): number {
  return Math.round(value * 1e6) / 1e6;
}

function iso(date: Date): string {
  return date.toISOString().slice(0, 10);
}
