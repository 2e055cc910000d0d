import { Injectable } from '@nestjs/common';
import { Gauge } from 'prom-client';
import { MetricsService } from '../../infra/metrics/metrics.service.js';
import { WatchesRepository } from './watches.repository.js';

/** Tasks waiting on their upstream, by operation, read from the database at each scrape (the same on every instance: take max()). */
@Injectable()
export class WaitingMetrics {
  constructor(metrics: MetricsService, watches: WatchesRepository) {
    new Gauge({
      name: 'mgw_tasks_waiting_upstream',
      help: 'Tasks created upstream and not final, watched by the pollers, by operation',
      labelNames: ['operation'] as const,
      registers: [metrics.registry],
      async collect() {
        this.reset();
        const rows = await watches.countWaiting().catch(() => []); // the database is down: no series rather than a failed scrape
        for (const r of rows) this.set({ operation: r.kind }, r.n);
      },
    });
  }
}
