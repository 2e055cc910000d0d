import { Injectable } from '@nestjs/common';
import { Gauge } from 'prom-client';
import { MetricsService } from '../../infra/metrics/metrics.service.js';
import { ChannelsRepository } from './channels.repository.js';

const CIRCUIT_VALUE: Record<string, number> = { closed: 0, half_open: 1, open: 2 };

/**
 * The channels' state as gauges, read from the database at each scrape (so every instance reports the
 * same values: take max() over instances): circuit state (0 closed, 1 half_open, 2 open), unfinished
 * tasks held, and whether the channel takes new tasks. Requests and latency are counted where they are
 * sent (ChannelRouter). Labelled by channel name, never by anything secret.
 */
@Injectable()
export class ChannelMetrics {
  constructor(metrics: MetricsService, channels: ChannelsRepository) {
    let snapshot: Promise<Awaited<ReturnType<ChannelsRepository['listChannels']>>> | null = null;
    // One read serves the three gauges of a scrape.
    const read = () => (snapshot ??= channels.listChannels().finally(() => setImmediate(() => (snapshot = null))));
    const gauge = (name: string, help: string, value: (c: Awaited<ReturnType<typeof read>>[number]) => number) =>
      new Gauge({
        name,
        help,
        labelNames: ['channel'] as const,
        registers: [metrics.registry],
        async collect() {
          this.reset();
          const rows = await read().catch(() => []); // the database is down: no channel series rather than a failed scrape
          for (const c of rows) this.set({ channel: c.name }, value(c));
        },
      });
    gauge('mgw_channel_circuit_state', "Each channel's circuit: 0 closed, 1 half_open (a probe is out), 2 open", (c) => CIRCUIT_VALUE[c.circuitState] ?? 0);
    gauge('mgw_channel_running_tasks', 'Unfinished tasks each channel holds', (c) => c.runningTasks);
    gauge('mgw_channel_enabled', 'Whether each channel takes new tasks (1), or is disabled or auto-disabled (0)', (c) => (c.status === 'enabled' ? 1 : 0));
  }
}
