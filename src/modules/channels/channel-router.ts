import { performance } from 'node:perf_hooks';
import { randomInt } from 'node:crypto';
import { Injectable, Logger } from '@nestjs/common';
import type { StepOutcome } from '../../common/tasks/task-kind.js';
import { type Holder, LeaseLost } from '../../common/tasks/task-states.repository.js';
import { AppConfig } from '../../infra/config/app-config.js';
import { MetricsService } from '../../infra/metrics/metrics.service.js';
import { pollDelaySeconds, UpstreamBusy, UpstreamClient, UpstreamGenerationFailed, UpstreamRefused, UpstreamUnavailable } from '../../infra/relay/upstream-client.js';
import { ChannelsRepository, type UpstreamTaskFacts } from './channels.repository.js';
import { ChannelHandles } from './channel-handles.js';
import { refusesContent } from '../../vendors/registry.js';
import type { ChannelOperation } from './channel-protocols.js';
import { ACCOUNT_REFUSED, byWeight, topPool, type Abandonment, type CandidateChannel, type ChannelHandle, type DeadEnd, deadEndOf, deadEndWords, GATEWAY_FAILURE, refusedWords, STALLED, type Submission } from './channel-routing.js';

export { type Abandonment, type CandidateChannel, type ChannelHandle, type Created, GATEWAY_FAILURE, refusedWords, stalledOn, type Submission, stallReason } from './channel-routing.js';

/**
 * What came of a create sent to one channel: its outcome, or that the channel did not take the task: provably
 * (busy, or its account refused: `refused` says whether its credentials or its credit), or it refused the task
 * for its content and the task goes on to another channel (RELAY_FAILOVER_ON_CONTENT).
 */
type Sent<R> = { outcome: StepOutcome<R> } | { notTaken: 'busy' | 'account' | 'content' | 'failed'; message: string; refused?: 'auth' | 'account' };

/**
 * Chooses the channel a new task goes to, sends its create there and on to the next channel while one
 * provably did not take it, and gives a task the channel it already holds. A new task goes to an enabled
 * channel of its operation with a closed (or half-open) circuit and a free max_running slot, of the
 * highest priority that has one, chosen by weight; a task keeps its channel for every later call, even
 * once the channel is disabled or deleted.
 */
@Injectable()
export class ChannelRouter {
  private readonly logger = new Logger(ChannelRouter.name);

  constructor(
    private readonly channels: ChannelsRepository,
    private readonly client: UpstreamClient,
    private readonly handles: ChannelHandles,
    private readonly config: AppConfig,
    private readonly metrics: MetricsService,
  ) {}

  /**
   * A new task to the channels, one after the other, until one takes it: a channel that provably did not
   * create it (busy, unreachable before the request went out, its account refused) is left for the next, as is
   * one that refused it for its content where it fails over so; when none takes it, the task waits (busy) and
   * tries again later, off its deadline's clock but not longer than a deadline from acceptance, as long as
   * some enabled channel could make it: when none can (all disabled, their credentials or credit refused),
   * it ends at once, saying why. A refusal of the task itself, or an answer that may have created it, stays
   * with that channel (thrown to the caller).
   */
  async submitNew<R>(s: Submission<R>): Promise<StepOutcome<R>> {
    if (s.pinnedTo) return this.submitPinned(s, s.pinnedTo);
    const tried = new Set<string>();
    let refused: DeadEnd | undefined;
    for (;;) {
      const channel = await this.assign(s.operation, s.task.id, s.marks.holder, tried, s.fits, s.costOf);
      if (!channel) {
        const nowhere = await this.nowhereElse(s, refused);
        if (nowhere) return nowhere;
        const limitS = this.config.kinds[s.operation].timeoutS;
        if (Date.now() - s.task.createdAt.getTime() > limitS * 1000) {
          return this.gatewayFailure(s.task.id, s.operation, `no channel could take the task within ${limitS} s (${s.operation.toUpperCase()}_TIMEOUT_S): none enabled, or all busy or unreachable`);
        }
        // every channel that could take it is at its max_running: a slot that frees wakes the longest waiting task
        // (TaskRunner), so this one need not knock often
        if (tried.size === 0 && (await this.channels.allAtCapacity(s.operation))) return { kind: 'busy', seconds: (this.config.relay.pollMs * 15) / 1000 };
        return this.busy(s);
      }
      const sent = await this.sendTo(channel, s, true);
      if ('outcome' in sent) return sent.outcome;
      if (sent.refused) refused = sent.refused;
      tried.add(channel.id);
    }
  }

  /** A follow-up goes to the channel that holds what it follows, enabled or not, and waits for it when it is busy. */
  private async submitPinned<R>(s: Submission<R>, channelId: string): Promise<StepOutcome<R>> {
    const channel = await this.handles.held(channelId);
    if (!channel) return this.gatewayFailure(s.task.id, s.operation, `the channel that holds what this task continues (${channelId}) no longer exists`);
    if (s.fits && !s.fits(channel)) return this.gatewayFailure(s.task.id, s.operation, `the channel that holds what this task continues (${channel.name}) has no model that can make what it asks`, channel);
    await this.channels.pinTask(s.task.id, channelId);
    const sent = await this.sendTo(channel, s, false);
    if ('outcome' in sent) return sent.outcome;
    if (sent.refused) return this.deadEnd(s, sent.refused, `the channel that holds what this task continues (${channel.name}) refused its account: ${sent.message}`, channel);
    return this.busy(s);
  }

  /**
   * A task no enabled channel it has not had could make (whatever their circuits and loads) fails now: it would
   * otherwise wait for its deadline for a channel that is not there. After upstream tasks it gave up (or
   * refusals of its content), its reason is the last upstream's own words about the request (after a stall,
   * the gateway's failure); before any, why no channel can make it (`refused`: this step's refusal of an account).
   */
  private async nowhereElse<R>(s: Submission<R>, refused: DeadEnd | undefined): Promise<StepOutcome<R> | null> {
    const left = (await this.channels.untriedFor(s.operation, s.task.id)).filter((c) => !s.fits || s.fits(c));
    if (left.length > 0) return null;
    const history = await this.channels.upstreamTasksOf(s.task.id);
    if (history.count === 0 && !history.lastGivenUp) return this.deadEnd(s, refused);
    const reason = `${history.lastGivenUp ?? 'the upstream gave up the task'}; no other channel can take it`;
    if (!history.lastGivenUp || history.lastGivenUp.startsWith(STALLED)) return this.gatewayFailure(s.task.id, s.operation, reason);
    return { kind: 'failed', reason };
  }

  /**
   * No enabled channel can make the task: it ends now, its owner reading why in words it can act on (its vendor
   * refused the gateway's credentials or credit, its channels are disabled, or none makes it), its admins the
   * channels and their status reasons (its `gateway_error` attempt, and the log). `why` is what this step
   * learnt (an account refused); else the latest disabled channel that could make it says.
   */
  private async deadEnd<R>(s: Submission<R>, why: DeadEnd | undefined, detail?: string, channel?: Pick<ChannelHandle, 'id' | 'name'>): Promise<StepOutcome<R>> {
    const disabled = (await this.channels.disabledFor(s.operation)).filter((c) => !s.fits || s.fits(c));
    const cause = why ?? (disabled.length > 0 ? deadEndOf(disabled[0]) : 'none');
    const said =
      detail ??
      (disabled.length > 0
        ? `no enabled channel can take the task: ${disabled.map((c) => `${c.name} is ${c.status.replace('_', '-')} (${c.statusReason ?? 'no reason given'})`).join('; ')}`
        : `no channel of ${s.operation} can make the task: none exists, or none of them has a model that makes it`);
    const at = channel ?? disabled[0];
    await this.channels.recordAttempt(s.task.id, at?.id || null, 'gateway_error', said, null);
    this.logger.warn({ msg: 'a task failed at once: no enabled channel can make it', task_id: s.task.id, operation: s.operation, channel_id: at?.id || null, channel: at?.name ?? null, cause, reason: said });
    return { kind: 'failed', reason: deadEndWords(s.operation, s.noun, cause) };
  }

  /**
   * Ends a task for a reason of the gateway's own (routing, network: see GATEWAY_FAILURE): its owner reads the
   * generic reason; `detail` is kept as the task's `gateway_error` attempt, for admins, and logged. Not a request
   * to the channel: it counts in neither the channel's health nor its metrics.
   */
  async gatewayFailure<R>(taskId: string, operation: ChannelOperation, detail: string, channel?: Pick<ChannelHandle, 'id' | 'name'> | null): Promise<StepOutcome<R>> {
    await this.channels.recordAttempt(taskId, channel?.id || null, 'gateway_error', detail, null);
    this.logger.warn({ msg: "a task failed for a reason of the gateway's own; its owner reads a generic reason", task_id: taskId, operation, channel_id: channel?.id || null, channel: channel?.name ?? null, reason: detail });
    return { kind: 'failed', reason: GATEWAY_FAILURE };
  }

  /**
   * The end of a task an upstream refused: `words` and the upstream's own when they are about the request (a
   * content refusal, a bad parameter: `tenantWords` may scrub them); a gateway failure otherwise (credentials,
   * credit, an upstream URL or result it could not reach).
   */
  async refusal<R>(taskId: string, operation: ChannelOperation, noun: string, err: UpstreamRefused, words: string, tenantWords: (message: string) => string = (m) => m): Promise<StepOutcome<R>> {
    if (err.aboutRequest) return { kind: 'failed', reason: `${words}: ${tenantWords(err.message)}` };
    if (err.accountRefused) {
      // its channel refused the account while holding the task (onHeld disabled it): its owner reads why, as a dead end's
      await this.channels.recordAttempt(taskId, null, 'gateway_error', `${words}: ${err.message}`, null);
      this.logger.warn({ msg: "a task failed: its channel's account was refused while it held the task", task_id: taskId, operation, reason: err.message });
      return { kind: 'failed', reason: deadEndWords(operation, noun, err.kind === 'account' ? 'account' : 'auth', true) };
    }
    return this.gatewayFailure(taskId, operation, `${words}: ${err.message}`);
  }

  /**
   * Whether a task whose upstream task failed or stalled (or whose create was refused for its content) may go on
   * to another channel: it has had fewer than RELAY_UPSTREAM_ATTEMPTS upstream tasks (and content refusals), and an enabled channel it has not had (nor `besides`, the one
   * that holds it, where that one's attempt may not be written: a create whose answer was lost) can make it. When not, its
   * upstream task is left as it is (a failure ends the task with the vendor's words; a stall waits on).
   */
  async mayFailOver(operation: ChannelOperation, taskId: string, fits?: Submission<unknown>['fits'], besides?: ChannelHandle): Promise<boolean> {
    const { count } = await this.channels.upstreamTasksOf(taskId);
    if (count >= this.config.relay.upstreamAttempts) return false;
    return (await this.channels.untriedFor(operation, taskId)).some((c) => (!besides?.id || c.id !== besides.id) && (!fits || fits(c)));
  }

  /**
   * Gives up the upstream task a task holds (after mayFailOver): it is cancelled where the vendor can, kept
   * as an `abandoned` attempt (its cost stays on the accepted one), and the task holds no upstream task or
   * channel any more, so its next create goes to a channel it has not had. Only while the step's claim has the
   * task: a step whose claim another took over (LeaseLost) neither cancels the upstream task the new claim may be
   * watching, nor records the attempt, nor counts a failure of the channel.
   */
  async abandon(a: Abandonment): Promise<void> {
    await a.marks.stillHeld();
    let cancelled = '';
    if (a.cancel) {
      cancelled = await a.cancel().then(
        () => '; cancelled upstream',
        (err: unknown) => `; the upstream did not cancel it: ${err instanceof Error ? err.message : String(err)}`,
      );
    }
    await this.attempt(a.taskId, a.channel, a.operation, 'abandoned', `${a.reason}${cancelled}`, null);
    await a.marks.abandonUpstream();
    await this.failed(a.channel); // a channel whose tasks fail or stall counts toward its circuit, as one that refuses them
    this.logger.warn({ msg: 'an upstream task was given up; the task goes on to another channel', channel_id: a.channel.id, channel: a.channel.name, task_id: a.taskId, upstream_id: a.upstreamId, reason: a.reason, cancelled: cancelled.startsWith('; cancelled') });
  }

  private busy<R>(s: Submission<R>): StepOutcome<R> {
    return { kind: 'busy', seconds: pollDelaySeconds(s.task.createdAt, this.config.relay.pollMs) };
  }

  /** One create to one channel, its attempt kept and counted; `marked`: its submit mark was written with the assignment. */
  private async sendTo<R>(channel: ChannelHandle, s: Submission<R>, marked: boolean): Promise<Sent<R>> {
    const started = performance.now();
    const took = () => Math.round(performance.now() - started);
    try {
      const outcome = await s.send(channel, marked);
      await this.answeredAttempt(s.task.id, channel, s.operation, outcome.kind === 'failed' ? 'failed' : 'accepted', outcome.kind === 'failed' ? outcome.reason : null, took(), outcome.taken);
      return { outcome };
    } catch (err) {
      const ms = took();
      if (err instanceof UpstreamRefused && err.accountRefused) {
        // Its credentials or its credit were refused: nothing was created there; the channel stops taking tasks.
        await s.marks.clearSubmitting();
        await this.autoDisable(channel, s.task.id, err, s.operation, ms);
        return { notTaken: 'account', message: err.message, refused: err.kind === 'account' ? 'account' : 'auth' };
      }
      if (err instanceof UpstreamRefused && err.aboutRequest && (await this.contentFailsOver(s, channel, err))) {
        // its moderation refused the task, and another channel's may differ: nothing was made there (the refusal
        // is the channel's answer, its circuit healthy), and this channel is not given the task again
        await s.marks.clearSubmitting();
        await this.answeredAttempt(s.task.id, channel, s.operation, 'failed', `${refusedWords(s.noun)}: ${err.message}`, ms);
        this.logger.log({ msg: 'a channel refused a task for its content; it goes on to another channel', channel_id: channel.id, channel: channel.name, task_id: s.task.id, status: err.status, reason: err.message });
        return { notTaken: 'content', message: err.message };
      }
      if (err instanceof UpstreamGenerationFailed) return this.generationFailed(channel, s, err, ms);
      if (err instanceof UpstreamBusy) {
        await this.refused(channel, s.task.id, err, s.operation, ms);
        return { notTaken: 'busy', message: err.message };
      }
      if (err instanceof UpstreamRefused && err.internal) {
        // the gateway's own refusal (the outbound rules refuse the channel's host, …): no request went out, so
        // it is no attempt of the channel's (its health and metrics); the task fails with the generic reason,
        // the detail kept for admins as its gateway error on this channel
        await s.marks.clearSubmitting();
        return { outcome: await this.gatewayFailure(s.task.id, s.operation, err.message, channel) };
      }
      if (err instanceof UpstreamRefused) {
        await this.attempt(s.task.id, channel, s.operation, 'failed', err.message, ms);
        this.logger.log({ msg: 'a channel refused a task', channel_id: channel.id, channel: channel.name, task_id: s.task.id, status: err.status, reason: err.message });
      } else if (err instanceof UpstreamUnavailable) {
        await this.attempt(s.task.id, channel, s.operation, 'ambiguous', err.message, ms);
        this.logger.warn({ msg: 'a channel gave no usable answer to a create; the task stays with it', channel_id: channel.id, channel: channel.name, task_id: s.task.id, status: err.answer.status ?? null, upstream_code: err.answer.code ?? null, reason: err.message });
        await this.failed(channel);
      }
      throw err;
    }
  }

  /**
   * A synchronous vendor failed the generation (its 5xx: nothing made, nothing charged; or a 200 it could not
   * use). The channel had the task: the attempt is kept as `failed` (so it is not given the task again); a 5xx is
   * noted as the channel's error and counted toward its circuit, an unusable 200 not (it may be the prompt's). The task goes on to another channel that can make it while it may fail over (mayFailOver: fewer
   * than RELAY_UPSTREAM_ATTEMPTS tries, one it has not had); else it ends now with the vendor's words, rather
   * than waiting as a busy task would for the same channel until its deadline.
   */
  private async generationFailed<R>(channel: ChannelHandle, s: Submission<R>, err: UpstreamGenerationFailed, ms: number): Promise<Sent<R>> {
    await s.marks.clearSubmitting();
    // a 200 it could not use (words instead of an image, no song) may be the prompt's doing, not the channel's:
    // it is not counted toward the channel's circuit (one tenant's prompts would open a healthy channel's)
    const channelsFault = err.answer.status !== 200;
    if (channel.id && channelsFault) await this.channels.noteError(channel.id, err.message);
    await this.attempt(s.task.id, channel, s.operation, 'failed', err.message, ms);
    if (channelsFault) await this.failed(channel);
    const onward = !s.pinnedTo && (await this.mayFailOver(s.operation, s.task.id, s.fits, channel));
    this.logger.warn({ msg: `a channel failed a generation${onward ? '; it goes on to another channel' : ''}`, channel_id: channel.id, channel: channel.name, task_id: s.task.id, status: err.answer.status ?? null, upstream_code: err.answer.code ?? null, reason: err.message });
    if (onward) return { notTaken: 'failed', message: err.message };
    return { outcome: { kind: 'failed', reason: err.message } };
  }

  /**
   * Whether a create's refusal is the vendor's moderation refusing the task's content (its descriptor's
   * `contentRefusal`) and the task may go on to another channel: RELAY_FAILOVER_ON_CONTENT, an operation that
   * fails over, and another enabled channel it has not had that can make it (mayFailOver).
   */
  private async contentFailsOver<R>(s: Submission<R>, channel: ChannelHandle, err: UpstreamRefused): Promise<boolean> {
    if (!s.failsOver || !this.config.relay.failoverOnContent || !refusesContent(channel.protocol, err.message)) return false;
    return this.mayFailOver(s.operation, s.task.id, s.fits, channel);
  }

  /**
   * Gives task `taskId` of `operation` a channel and records it on the task (the channel's slot is taken
   * atomically), with its submit mark: its create goes to that channel next (a create that provably did not
   * reach it clears the mark, and the next channel is assigned). Only while `holder`'s claim has the task;
   * null when none can take it now (the task waits, busy). Throws LeaseLost when the claim is gone: a late
   * step never moves the channel of the claim that has it.
   */
  async assign(operation: ChannelOperation, taskId: string, holder: Holder, tried: ReadonlySet<string> = new Set(), fits?: Submission<unknown>['fits'], costOf?: Submission<unknown>['costOf']): Promise<ChannelHandle | null> {
    let candidates = await this.channels.candidatesFor(operation, taskId, [...tried]);
    if (fits) candidates = candidates.filter((c) => fits(c));
    const byCost = costOf && this.config.kinds[operation].routing === 'cost';
    while (candidates.length > 0) {
      const chosen = byWeight(topPool(candidates, byCost ? costOf : undefined), randomInt);
      const handle = this.handles.handleOf(chosen); // its credentials open before the task is given to it
      const assigned = await this.channels.assignTask(taskId, chosen.id, holder);
      if (assigned === 'assigned') return handle;
      if (assigned === 'not held') throw new LeaseLost(taskId);
      candidates = candidates.filter((c) => c.id !== chosen.id);
    }
    await this.channels.releaseUnsent(taskId, holder);
    return null;
  }

  /**
   * The channel did not take the task, provably (busy, or unreachable before the request was sent): the
   * refusal is logged once, with the channel and the task (never a credential). An upstream that said
   * when to come back (Retry-After) has its circuit opened for that long (capped at 10 min), so no task
   * knocks before then and one probes after; otherwise the refusal counts toward the circuit's threshold.
   */
  private async refused(channel: ChannelHandle, taskId: string, err: UpstreamBusy, operation: string, ms: number): Promise<void> {
    const retryAfterS = err.retryAfterS ? Math.min(err.retryAfterS, 600) : null;
    const outcome = /did not answer/.test(err.message) ? 'unreachable' : 'busy';
    if (channel.id) await this.channels.noteError(channel.id, err.message);
    await this.attempt(taskId, channel, operation, outcome, err.message, ms);
    this.logger.warn({ msg: 'a channel did not take a task; trying another', channel_id: channel.id, channel: channel.name, task_id: taskId, outcome, status: err.answer.status ?? null, upstream_code: err.answer.code ?? null, reason: err.message, retry_after_s: retryAfterS });
    if (retryAfterS === null) return this.failed(channel);
    if (channel.id && (await this.channels.openCircuitFor(channel.id, retryAfterS))) {
      this.logger.warn({ msg: 'channel circuit opened', channel_id: channel.id, channel: channel.name, open_s: retryAfterS, reason: 'Retry-After' });
    }
  }

  /**
   * The channel's upstream refused polls (429, 503, Retry-After): it counts toward the channel's circuit as a
   * refused create does (its Retry-After opens it for that long), so new tasks go elsewhere meanwhile.
   */
  async pollsRefused(channelId: string, name: string, operation: string, err: UpstreamBusy): Promise<void> {
    const retryAfterS = err.retryAfterS ? Math.min(err.retryAfterS, 600) : null;
    await this.channels.noteError(channelId, err.message);
    this.logger.warn({ msg: 'a channel refused polls; its polls pause', channel_id: channelId, channel: name, operation, status: err.answer.status ?? null, upstream_code: err.answer.code ?? null, reason: err.message, retry_after_s: retryAfterS });
    const channel = { id: channelId, name };
    if (retryAfterS === null) return this.failed(channel);
    if (await this.channels.openCircuitFor(channelId, retryAfterS)) this.logger.warn({ msg: 'channel circuit opened', channel_id: channelId, channel: name, open_s: retryAfterS, reason: 'Retry-After' });
  }

  /** A failure of the channel itself counts toward opening its circuit. */
  private async failed(channel: Pick<ChannelHandle, 'id' | 'name'>): Promise<void> {
    if (!channel.id) return;
    const { failureThreshold, openS } = this.config.relay.circuit;
    const circuit = await this.channels.recordFailure(channel.id, failureThreshold, openS);
    if (circuit.opened) this.logger.warn({ msg: 'channel circuit opened', channel_id: channel.id, channel: channel.name, open_s: circuit.openForS });
  }

  /** Keeps a request sent to a channel and what came of it (`taskId` null: a test), and counts it. */
  async attempt(taskId: string | null, channel: ChannelHandle, operation: string, outcome: string, message: string | null, latencyMs: number | null, taken?: UpstreamTaskFacts): Promise<void> {
    await this.channels.recordAttempt(taskId, channel.id || null, outcome, message, latencyMs, taken);
    this.count(channel, operation, outcome, latencyMs, taken);
  }

  private count(channel: ChannelHandle, operation: string, outcome: string, latencyMs: number | null, taken?: UpstreamTaskFacts): void {
    this.metrics.channelRequests.inc({ channel: channel.name, operation, outcome });
    if (latencyMs !== null) this.metrics.channelLatency.observe({ channel: channel.name, operation }, latencyMs / 1000);
    if (taken?.cost != null) this.metrics.upstreamCost.inc({ channel: channel.name, model: taken.model }, taken.cost);
  }

  /** A task's request the channel answered (it took the task, or refused the task itself): kept and counted, and its circuit is healthy. */
  private async answeredAttempt(taskId: string, channel: ChannelHandle, operation: string, outcome: string, message: string | null, latencyMs: number, taken?: UpstreamTaskFacts): Promise<void> {
    if (!channel.id) return this.attempt(taskId, channel, operation, outcome, message, latencyMs, taken);
    if (await this.channels.recordAnswered(taskId, channel.id, outcome, message, latencyMs, taken)) this.logger.warn({ msg: 'channel circuit closed', channel_id: channel.id, channel: channel.name });
    this.count(channel, operation, outcome, latencyMs, taken);
  }

  /**
   * A create whose answer was lost, found upstream by the task's own id: recorded as the accepted attempt
   * its answer would have made (the channel then counts as having had the task, and its cost is kept).
   */
  async adopted(taskId: string, operation: ChannelOperation, channel: ChannelHandle, taken: UpstreamTaskFacts): Promise<void> {
    await this.answeredAttempt(taskId, channel, operation, 'accepted', null, 0, taken);
  }

  /** The channel answered (it took the task, or refused the task itself): its circuit is healthy. */
  async answered(channel: ChannelHandle): Promise<void> {
    if (channel.id && (await this.channels.recordSuccess(channel.id))) this.logger.warn({ msg: 'channel circuit closed', channel_id: channel.id, channel: channel.name });
  }

  /** The upstream refused the channel's credentials or credit: it is auto-disabled with the upstream's words, logged once. */
  async autoDisable(channel: ChannelHandle, taskId: string | null, err: UpstreamRefused, operation: string, ms: number | null = null): Promise<void> {
    const reason = `${err.kind === 'account' ? ACCOUNT_REFUSED.account : ACCOUNT_REFUSED.auth}: ${err.message}`;
    await this.attempt(taskId, channel, operation, 'refused_account', reason, ms);
    if (channel.id && (await this.channels.autoDisable(channel.id, reason))) {
      this.logger.warn({ msg: 'channel auto-disabled', channel_id: channel.id, channel: channel.name, task_id: taskId, status: err.status, reason });
    }
  }

  /**
   * Runs a later call of a task on the channel that holds it: when the upstream refuses that account's
   * credentials or credit now, the task cannot go on, and the channel stops taking new tasks.
   */
  async onHeld<T>(channel: ChannelHandle, taskId: string, operation: string, work: () => Promise<T>): Promise<T> {
    try {
      return await work();
    } catch (err) {
      if (err instanceof UpstreamRefused && err.accountRefused && channel.id) await this.autoDisable(channel, taskId, err, operation);
      throw err;
    }
  }

  /** The channels of an operation that exist, enabled or not, with their protocol and the models they list. */
  /** How many channel writes this process made: a change here makes the offered models be read again at once (OfferCache). */
  get writes(): number {
    return this.channels.writes;
  }

  configuredFor(operation: ChannelOperation): Promise<({ name: string } & CandidateChannel)[]> {
    return this.channels.servingOperation(operation);
  }
}
