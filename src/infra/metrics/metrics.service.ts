import { Injectable } from '@nestjs/common';
import { collectDefaultMetrics, Counter, Registry } from 'prom-client';

/** Prometheus metrics of this process, served at /metrics. */
@Injectable()
export class MetricsService {
  readonly registry = new Registry();

  /** Every delivery attempt's outcome: delivered, retry, gone (410), refused (target), failed (gave up). */
  readonly callbackAttempts = new Counter({
    name: 'mgw_callback_attempts_total',
    help: 'Callback delivery attempts by outcome',
    labelNames: ['outcome'] as const,
    registers: [this.registry],
  });

  /** Notifications that were never delivered (after the last attempt, a 410, or a refused target). */
  readonly callbacksFailed = new Counter({
    name: 'mgw_callback_deliveries_failed_total',
    help: 'Callback notifications given up on',
    labelNames: ['reason'] as const,
    registers: [this.registry],
  });

  constructor() {
    collectDefaultMetrics({ register: this.registry, prefix: 'mgw_' });
  }
}
