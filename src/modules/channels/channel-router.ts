import { randomInt } from 'node:crypto';
import { Injectable, Logger } from '@nestjs/common';
import { AppConfig } from '../../infra/config/app-config.js';
import { type UpstreamAuth, type UpstreamBusy, UpstreamClient, UpstreamRefused, UpstreamUnavailable } from '../../infra/relay/upstream-client.js';
import type { Channel } from '../../generated/prisma/client.js';
import { ChannelsRepository, type ChannelRow } from './channels.repository.js';
import { ChannelSecrets } from './channel-secrets.js';

/** A channel as a task's step uses it: where to send, and how to authenticate (never logged). */
export interface ChannelHandle {
  id: string;
  name: string;
  protocol: string;
  baseUrl: string;
  auth: UpstreamAuth;
}

/**
 * Chooses the channel a new task goes to, and gives a task the channel it already holds. A new task goes
 * to an enabled channel of its operation with a free max_running slot, of the highest priority that has
 * one, chosen by weight; a task keeps its channel for every later call, even once the channel is
 * disabled or deleted.
 */
@Injectable()
export class ChannelRouter {
  private readonly logger = new Logger(ChannelRouter.name);

  constructor(
    private readonly channels: ChannelsRepository,
    private readonly client: UpstreamClient,
    private readonly secrets: ChannelSecrets,
    private readonly config: AppConfig,
  ) {}

  /**
   * Gives task `taskId` of `operation` a channel and records it on the task (the channel's slot is taken
   * atomically); null when none can take it now (the task waits, busy).
   */
  async assign(operation: string, taskId: string, tried: ReadonlySet<string> = new Set()): Promise<ChannelHandle | null> {
    let candidates = await this.channels.candidatesFor(operation, taskId, [...tried]);
    while (candidates.length > 0) {
      const top = Math.max(...candidates.map((c) => c.priority));
      const chosen = byWeight(candidates.filter((c) => c.priority === top));
      const handle = this.handleOf(chosen); // its credentials open before the task is given to it
      if (await this.channels.assignTask(taskId, chosen.id)) return handle;
      candidates = candidates.filter((c) => c.id !== chosen.id);
    }
    await this.channels.releaseUnsent(taskId);
    return null;
  }

  /**
   * The channel did not take the task, provably (busy, or unreachable before the request was sent): it
   * rests for the wait it asked for (Retry-After, else CHANNEL_BUSY_S), so the tasks waiting for it do not
   * each knock, and the refusal is logged once, with the channel and the task (never a credential).
   */
  async refused(channel: ChannelHandle, taskId: string, err: UpstreamBusy): Promise<void> {
    const restS = Math.min(Math.max(err.retryAfterS ?? CHANNEL_BUSY_S, 0.5), 600);
    await this.channels.markBusy(channel.id, restS, err.message);
    await this.attempt(taskId, channel, /did not answer/.test(err.message) ? 'unreachable' : 'busy', err.message);
    this.logger.warn({ msg: 'a channel did not take a task; trying another', channel_id: channel.id, channel: channel.name, task_id: taskId, reason: err.message, rest_s: restS });
    if (!channel.id) return;
    const { failureThreshold, openS } = this.config.relay.circuit;
    const circuit = await this.channels.recordFailure(channel.id, failureThreshold, openS);
    if (circuit.opened) this.logger.warn({ msg: 'channel circuit opened', channel_id: channel.id, channel: channel.name, open_s: circuit.openForS });
  }

  /** Keeps a create request of the task and what came of it. */
  async attempt(taskId: string, channel: ChannelHandle, outcome: string, message: string | null): Promise<void> {
    await this.channels.recordAttempt(taskId, channel.id || null, outcome, message);
  }

  /** The channel answered a create (it took the task, or refused the task itself): its circuit is healthy. */
  async answered(channel: ChannelHandle): Promise<void> {
    if (channel.id && (await this.channels.recordSuccess(channel.id))) this.logger.warn({ msg: 'channel circuit closed', channel_id: channel.id, channel: channel.name });
  }

  /** The upstream refused the channel's credentials or credit: it is auto-disabled with the upstream's words, logged once. */
  async autoDisable(channel: ChannelHandle, taskId: string, err: UpstreamRefused): Promise<void> {
    const reason = `the upstream refused the account${err.kind === 'account' ? "'s credit" : "'s credentials"}: ${err.message}`;
    if (taskId) await this.attempt(taskId, channel, 'refused_account', reason);
    if (await this.channels.autoDisable(channel.id, reason)) {
      this.logger.warn({ msg: 'channel auto-disabled', channel_id: channel.id, channel: channel.name, task_id: taskId, status: err.status, reason });
    }
  }

  /**
   * A cheap real call with the channel's credentials (the list of its tasks, one per page): whether the
   * upstream accepts them now. A pass brings an auto-disabled channel back; a refusal of the credentials
   * or credit auto-disables an enabled one; a channel an admin disabled stays disabled.
   */
  async test(channelId: string): Promise<{ ok: boolean; statusCode: number | null; latencyMs: number; message: string }> {
    const channel = await this.held(channelId);
    if (!channel) throw new Error(`no channel ${channelId}`);
    const started = Date.now();
    try {
      const answer = await this.client.call('GET', `${channel.baseUrl}/v1/images/editing/expand?pageNum=1&pageSize=1`, { auth: channel.auth, failFast: true });
      const code = typeof answer.json.code === 'number' ? answer.json.code : 0;
      if (code >= 1000 && code <= 1004) throw new UpstreamRefused(String(answer.json.message ?? `code ${code}`), answer.status, 'auth');
      if (code >= 1100 && code <= 1102) throw new UpstreamRefused(String(answer.json.message ?? `code ${code}`), answer.status, 'account');
      await this.channels.reenableAuto(channel.id);
      return { ok: true, statusCode: answer.status, latencyMs: Date.now() - started, message: 'the upstream accepted the credentials' };
    } catch (err) {
      if (err instanceof UpstreamRefused) {
        if (err.accountRefused) await this.autoDisable(channel, '', err);
        return { ok: false, statusCode: err.status || null, latencyMs: Date.now() - started, message: err.message };
      }
      if (err instanceof UpstreamUnavailable) return { ok: false, statusCode: null, latencyMs: Date.now() - started, message: err.message };
      throw err;
    }
  }

  /** The channel a task holds (even disabled or deleted); null when it is gone altogether. */
  async held(channelId: string): Promise<ChannelHandle | null> {
    const channel = await this.channels.findChannel(channelId, true);
    return channel ? this.handleOf(channel) : null;
  }

  private handleOf(channel: Channel): ChannelHandle {
    return { id: channel.id, name: channel.name, protocol: channel.protocol, baseUrl: channel.baseUrl, auth: this.authOf(channel) };
  }

  /** A configuration channel authenticates with RELAY_*; one from the admin API with its sealed credentials. */
  private authOf(channel: Channel): UpstreamAuth {
    if (channel.source === 'config') return this.client.configAuth(channel.protocol === 'kling');
    if (!channel.credentials) return { kind: 'none' };
    const credentials = this.secrets.open(channel.credentials);
    if (channel.protocol === 'kling' && credentials.access_key && credentials.secret_key) return { kind: 'kling', accessKey: credentials.access_key, secretKey: credentials.secret_key };
    return credentials.api_key ? { kind: 'bearer', apiKey: credentials.api_key } : { kind: 'none' };
  }
}

/** How long a channel rests after refusing for capacity without saying for how long (or being unreachable). */
const CHANNEL_BUSY_S = 1;

/** One of the channels, each as likely as its weight (all equally when none has weight). */
function byWeight(channels: ChannelRow[]): ChannelRow {
  const total = channels.reduce((sum, c) => sum + c.weight, 0);
  if (total === 0) return channels[randomInt(channels.length)];
  let point = randomInt(total);
  for (const channel of channels) {
    if (point < channel.weight) return channel;
    point -= channel.weight;
  }
  return channels[channels.length - 1];
}
