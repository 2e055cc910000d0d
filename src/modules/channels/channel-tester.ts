import { performance } from 'node:perf_hooks';
import { Injectable, Logger, type OnApplicationBootstrap, type OnModuleDestroy } from '@nestjs/common';
import { AppConfig } from '../../infra/config/app-config.js';
import { SweepLoop } from '../../common/tasks/sweep-loop.js';
import { DatabaseStatus } from '../../infra/database/database-status.service.js';
import { UpstreamClient, UpstreamRefused, UpstreamUnavailable } from '../../infra/relay/upstream-client.js';
import { probeOf } from './channel-protocols.js';
import { ChannelRouter } from './channel-router.js';
import { ChannelHandles } from './channel-handles.js';
import { ChannelsRepository } from './channels.repository.js';

export interface ChannelTestResult {
  ok: boolean;
  statusCode: number | null;
  latencyMs: number;
  message: string;
}

/** Due periodic tests are looked for every CHANNEL_TEST_INTERVAL_S, at most this many seconds apart (a test is that late at most). */
const DUE_LOOK_MAX_S = 30;

/**
 * Tests channels with a cheap real call using their credentials: on an admin's request, and every
 * CHANNEL_TEST_INTERVAL_S for the channels the upstream's refusals auto-disabled (one instance claims
 * each test). A pass brings an auto-disabled channel back and closes an open circuit; a refusal of the
 * credentials or credit auto-disables an enabled one; a channel an admin disabled stays disabled.
 */
@Injectable()
export class ChannelTester implements OnApplicationBootstrap, OnModuleDestroy {
  private readonly logger = new Logger(ChannelTester.name);
  private readonly loop: SweepLoop | null;

  constructor(
    private readonly channels: ChannelsRepository,
    private readonly router: ChannelRouter,
    private readonly handles: ChannelHandles,
    private readonly client: UpstreamClient,
    config: AppConfig,
    database: DatabaseStatus,
  ) {
    const intervalS = config.relay.testIntervalS;
    this.loop = intervalS > 0 ? new SweepLoop('channel tests', config, database, this.logger, () => this.testDue(intervalS), Math.min(intervalS, DUE_LOOK_MAX_S) * 1000) : null;
  }

  async test(channelId: string): Promise<ChannelTestResult> {
    const row = await this.channels.findChannel(channelId, true);
    if (!row) throw new Error(`no channel ${channelId}`);
    const channel = this.handles.handleOf(row);
    const operation = row.operations[0] ?? 'expand';
    const probe = probeOf(channel.protocol, row.operations);
    const started = performance.now();
    const took = () => Math.round(performance.now() - started);
    let result: ChannelTestResult;
    try {
      let answer: { status: number; json: Record<string, unknown> };
      try {
        answer = await this.client.call('GET', `${channel.baseUrl}${probe.path}`, { auth: channel.auth, failFast: true, headers: probe.headers, refusal: probe.refusal });
      } catch (err) {
        if (!(probe.notFoundPasses && err instanceof UpstreamRefused && err.status === 404)) throw err;
        answer = { status: 404, json: {} };
      }
      // a vendor whose refusals come under HTTP 200 in a shape of its own (Kling's envelope, an aggregator's code)
      probe.check?.(answer.json);
      result = { ok: true, statusCode: answer.status, latencyMs: took(), message: 'the upstream accepted the credentials' };
      await this.router.attempt(null, channel, operation, 'test_ok', null, result.latencyMs);
      await this.router.answered(channel);
      if (await this.channels.reenableAuto(channel.id)) this.logger.warn({ msg: 'channel re-enabled: its test passed', channel_id: channel.id, channel: channel.name });
    } catch (err) {
      if (err instanceof UpstreamRefused) {
        result = { ok: false, statusCode: err.status || null, latencyMs: took(), message: err.message };
        if (err.accountRefused) await this.router.autoDisable(channel, null, err, operation, result.latencyMs);
        else await this.router.attempt(null, channel, operation, 'test_failed', err.message, result.latencyMs);
      } else if (err instanceof UpstreamUnavailable) {
        result = { ok: false, statusCode: null, latencyMs: took(), message: err.message };
        await this.router.attempt(null, channel, operation, 'test_failed', err.message, result.latencyMs);
      } else {
        throw err;
      }
    }
    return result;
  }

  onApplicationBootstrap(): void {
    this.loop?.start();
  }

  async onModuleDestroy(): Promise<void> {
    await this.loop?.stop();
  }

  /** Tests the auto-disabled channels whose last test is older than the interval (claimed, so one instance tests each). */
  private async testDue(intervalS: number): Promise<void> {
    for (const id of await this.channels.claimDueTests(intervalS)) {
      const result = await this.test(id);
      this.logger.log({ msg: 'periodic channel test', channel_id: id, ok: result.ok, status: result.statusCode, reason: result.ok ? undefined : result.message });
    }
  }
}
