import { Injectable, Logger } from '@nestjs/common';
import { AppConfig } from '../../infra/config/app-config.js';
import { MetricsService } from '../../infra/metrics/metrics.service.js';
import { type BilledFigure, ChannelsRepository } from './channels.repository.js';
import type { ChannelHandle } from './channel-routing.js';

/** A difference this small is float rounding (costs are kept to 1e-6), never a mismatch. */
const ROUNDING = 1e-9;

/**
 * Whether a vendor's billed cost differs from the gateway's price of the same upstream task by more than
 * `tolerance` × that price (both known; an unpriced task or an unpriced unit is never a mismatch). The usage
 * report's SQL (`LimitsRepository.upstreamCosts`) counts by the same rule.
 */
export function billingMismatch(cost: number | null, billedCost: number | null, tolerance: number): boolean {
  if (cost === null || billedCost === null) return false;
  return Math.abs(billedCost - cost) > tolerance * cost + ROUNDING;
}

/** The rule of `billingMismatch` in SQL, over columns `cost` and `billed` and the tolerance's parameter. */
export function billingMismatchSql(cost: string, billed: string, tolerance: string): string {
  return `(${billed} IS NOT NULL AND ${cost} IS NOT NULL AND abs(${billed} - ${cost}) > ${tolerance}::float8 * ${cost} + ${ROUNDING})`;
}

/**
 * Keeps what vendors report they billed for upstream tasks beside what the gateway priced them, on the attempt
 * that accepted each (so the usage report and the attempt list can set the two side by side), and counts a
 * task whose billed cost differs from its price by more than BILLED_COST_TOLERANCE
 * (`mgw_upstream_billing_mismatches_total`), once: a step that re-runs records nothing new.
 */
@Injectable()
export class UpstreamBilling {
  private readonly logger = new Logger(UpstreamBilling.name);

  constructor(
    private readonly channels: ChannelsRepository,
    private readonly metrics: MetricsService,
    private readonly config: AppConfig,
  ) {}

  /** The billed figure of upstream task `upstreamId`, which channel `channel` took for task `taskId`. */
  async record(taskId: string, operation: string, channel: Pick<ChannelHandle, 'id' | 'name'>, upstreamId: string, billed: BilledFigure): Promise<void> {
    const tolerance = this.config.relay.billedCostTolerance;
    for (const attempt of await this.channels.recordBilled(taskId, upstreamId, billed)) {
      if (!billingMismatch(attempt.cost, billed.cost, tolerance) || billingMismatch(attempt.cost, attempt.previousBilledCost, tolerance)) continue;
      this.metrics.billingMismatches.inc({ operation, channel: channel.name, model: attempt.model ?? '' });
      this.logger.warn({
        msg: 'a vendor billed an upstream task differently from its price (BILLED_COST_TOLERANCE)',
        task_id: taskId,
        operation,
        channel_id: channel.id || null,
        channel: channel.name,
        model: attempt.model,
        upstream_id: upstreamId,
        cost: attempt.cost,
        billed_amount: billed.amount,
        billed_unit: billed.unit,
        billed_cost: billed.cost,
      });
    }
  }
}
