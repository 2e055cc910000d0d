import { randomUUID } from 'node:crypto';
import { Injectable, Logger, type OnApplicationBootstrap, type OnModuleDestroy } from '@nestjs/common';
import type { PollSchedule } from '../../common/tasks/poll-schedule.js';
import type { ChannelPoll, TaskKind, WatchNews } from '../../common/tasks/task-kind.js';
import { TaskLifecycle } from '../../common/tasks/task-lifecycle.js';
import { AppConfig } from '../../infra/config/app-config.js';
import { DatabaseStatus } from '../../infra/database/database-status.service.js';
import { MetricsService } from '../../infra/metrics/metrics.service.js';
import { ShutdownState } from '../../infra/process/shutdown-state.js';
import { taskJobName } from '../../infra/queue/jobs.js';
import { QueueService } from '../../infra/queue/queue.service.js';
import { type PolledStatus, UpstreamBusy, UpstreamRefused, UpstreamUnavailable } from '../../infra/relay/upstream-client.js';
import { Tracing } from '../../infra/tracing/tracing.service.js';
import { ChannelRouter } from '../channels/channel-router.js';
import { Limiter } from '../../infra/process/limiter.js';
import { type DueWatch, WatchesRepository } from './watches.repository.js';

/**
 * How long a poller holds a task of its batch, at most: longer than a poll takes (UpstreamClient's
 * POLL_TIMEOUT_MS, 10 s), so no other poller asks about it meanwhile. A task whose next poll is at least
 * SHORT_LEASE_FROM_S away is held only until then, and its poll, ending sooner (the usual case), writes
 * nothing after it: the lease runs out by itself. A poll still in flight EXTEND_AHEAD_MS before its
 * lease's end has it extended by POLL_LEASE_S.
 */
export const POLL_LEASE_S = 12;
const SHORT_LEASE_FROM_S = 3;
const EXTEND_AHEAD_MS = 1500;
/** A round starts no poll later than this after it took its batch (so each ends within the lease); the rest go back to be polled by anyone. */
const ROUND_START_MS = 1500;
/** Tasks taken at once, at most. */
const MAX_BATCH = 500;
/**
 * After a look that found fewer tasks due than it had room for, the next comes after this long (sooner when
 * a callback, a step or a finished round wakes the poller): a due poll waits at most about this long, and an
 * idle instance asks once a second.
 */
const IDLE_MS = 1000;
/** A channel that refused polls without saying for how long is paused for this long at first, doubling to PAUSE_MAX_S. */
const PAUSE_FIRST_S = 2;
const PAUSE_MAX_S = 60;

/** What one round learnt of its tasks, written back together. */
interface RoundOutcome {
  /** Polled without news (or not answered), to be let go of now: those whose next poll comes before their lease ends. */
  working: string[];
  changed: DueWatch[];
  /** What the polls read of the changed tasks' upstream tasks, by task id: carried in their steps' jobs. */
  polled: Record<string, PolledStatus>;
  /** Not polled (their channel refused polls, or the round ran out of time): due again at `at`. */
  later: { ids: string[]; at?: Date }[];
}

/**
 * Watches the tasks that wait on an upstream, on every instance that runs workers: takes the due ones in
 * batches (one statement, a short lease: two instances never poll a task at once, and a killed instance's
 * batch is taken again when its lease runs out), asks each task's upstream about it through its kind's
 * watcher (as many tasks per request as the protocol takes, RELAY_CONCURRENCY requests in flight and
 * RELAY_POLL_PER_CHANNEL per channel), and writes only what changed: a task with news gets a job for its
 * next step; one without costs no write of its own (its next poll time was set when it was taken). An
 * upstream that refuses polls (429, Retry-After) pauses that channel's polls on every instance, and counts
 * toward its circuit as a refused create does.
 */
@Injectable()
export class UpstreamPoller implements OnApplicationBootstrap, OnModuleDestroy {
  private readonly logger = new Logger(UpstreamPoller.name);
  /** This instance's poller (lease owner of the watches it holds). */
  readonly owner = `poll-${process.pid}-${randomUUID().slice(0, 8)}`;
  private readonly schedule: PollSchedule;
  private readonly requests: Limiter;
  private readonly perChannel = new Map<string, Limiter>();
  /** A channel's pause after its last refusal without Retry-After (it doubles while refusals go on). */
  private readonly pauses = new Map<string, number>();
  private readonly watchers: Map<string, TaskKind>;
  private inHand = 0;
  /** Polled without news since the last look: let go of by the next look's statement, where their lease must be (WatchesRepository.takeDue). */
  private letGo: string[] = [];
  /** The poller waits for a round to end (it holds as many tasks as it may). */
  private waitingForRoom = false;
  private stopping = false;
  /** Rounds writing back what they learnt (awaited at shutdown, before the database pool closes). */
  private readonly writing = new Set<Promise<void>>();
  private loop?: Promise<void>;
  private wake?: () => void;

  constructor(
    private readonly config: AppConfig,
    private readonly database: DatabaseStatus,
    private readonly watches: WatchesRepository,
    private readonly router: ChannelRouter,
    private readonly metrics: MetricsService,
    private readonly tracing: Tracing,
    private readonly queue: QueueService,
    lifecycle: TaskLifecycle,
    shutdown: ShutdownState,
  ) {
    this.schedule = { pollS: config.relay.pollMs / 1000, callbackPollS: config.relay.callbackPollS };
    this.requests = new Limiter(config.relay.concurrency);
    this.watchers = new Map(lifecycle.kinds.filter((k) => k.watcher).map((k) => [k.definition.name, k]));
    shutdown.onDrain(() => this.stop());
  }

  onApplicationBootstrap(): void {
    if (!this.config.runsWorkers || this.watchers.size === 0) return;
    this.loop = this.run();
  }

  onModuleDestroy(): Promise<void> {
    return this.stop();
  }

  /** Polls due now rather than at the next look (an upstream called back). */
  poke(): void {
    this.wake?.();
  }

  /** Takes no more tasks and gives back the ones in hand at once, for the other instances' pollers. */
  async stop(): Promise<void> {
    if (this.stopping) return this.loop;
    this.stopping = true;
    this.wake?.();
    await this.loop;
    await Promise.allSettled([...this.writing]);
    await this.watches.giveBackAll(this.owner).catch((err: unknown) => this.logger.warn(`could not give back the watched tasks in hand: ${String(err)}`));
  }

  private async run(): Promise<void> {
    while (!this.stopping) {
      // twice as many tasks in hand as requests may be in flight: a task taken is polled within a moment of its time
      const room = Math.min(MAX_BATCH, this.config.relay.concurrency * 2 - this.inHand);
      if (!this.database.isAvailable) {
        await this.idle(IDLE_MS);
        continue;
      }
      if (room <= 0) {
        // a round's end makes room
        this.waitingForRoom = true;
        await this.idle(IDLE_MS);
        this.waitingForRoom = false;
        continue;
      }
      let batch: DueWatch[] = [];
      const letGo = this.letGo;
      this.letGo = [];
      try {
        // what is not let go of (the statement failed) is let go by its lease running out
        batch = await this.watches.takeDue(this.owner, room, { leaseS: POLL_LEASE_S, untilNextPollFromS: SHORT_LEASE_FROM_S, letGo }, this.schedule);
      } catch (err) {
        if (!this.database.report(err)) this.logger.error({ msg: 'taking due watched tasks failed', err });
      }
      if (batch.length > 0) {
        const now = Date.now();
        for (const w of batch) this.metrics.pollLag.observe({ operation: w.kind }, Math.max(0, (now - w.dueAt.getTime()) / 1000));
        this.inHand += batch.length;
        void this.round(batch, now).finally(() => {
          this.inHand -= batch.length;
          if (this.waitingForRoom) this.wake?.();
        });
      }
      // a full batch may have left due tasks behind: look again at once; otherwise nothing more is due now
      if (batch.length < room) await this.idle(IDLE_MS);
    }
  }

  /** Polls a batch, channel by channel, and writes back what it learnt. */
  private async round(batch: DueWatch[], startedAt: number): Promise<void> {
    const outcome: RoundOutcome = { working: [], changed: [], polled: {}, later: [] };
    const groups = new Map<string, DueWatch[]>();
    for (const w of batch) {
      const key = `${w.kind} ${w.channelId ?? ''}`;
      groups.set(key, [...(groups.get(key) ?? []), w]);
    }
    await Promise.all([...groups.values()].map((group) => this.pollGroup(group, startedAt, outcome)));
    // stopping: what is in hand was given back; another instance polls it again
    if (this.stopping) return;
    const writing = this.writeBack(outcome, startedAt);
    this.writing.add(writing);
    await writing.finally(() => this.writing.delete(writing));
  }

  private async writeBack(outcome: RoundOutcome, startedAt: number): Promise<void> {
    this.letGo.push(...outcome.working);
    try {
      await this.database.retryWhileUnavailable(async () => {
        for (const { ids, at } of outcome.later) await this.watches.giveBack(this.owner, ids, at);
        const resumed = await this.watches.resume(this.owner, outcome.changed.map((w) => w.id), this.config.workerLeaseS, outcome.polled);
        if (resumed.length === 0) return;
        // this instance's workers take the new jobs at once (the others at their next look)
        for (const kind of new Set(outcome.changed.map((w) => w.kind))) this.queue.jobsAdded(taskJobName(kind));
        this.traceNews(outcome.changed, new Set(resumed), startedAt);
      });
    } catch (err) {
      // the leases run out and the next poller takes the tasks again
      this.logger.error({ msg: 'writing what a poll round learnt failed', err });
    }
  }

  /** The tasks of one kind on one channel, as many per request as its protocol takes. */
  private async pollGroup(group: DueWatch[], startedAt: number, outcome: RoundOutcome): Promise<void> {
    const { kind, channelId } = group[0];
    let channel: ChannelPoll | null;
    try {
      channel = await this.watchers.get(kind)!.watcher!.channelPoll(channelId);
    } catch (err) {
      this.logger.error({ msg: 'could not prepare the polls of a channel', channel_id: channelId, err });
      outcome.working.push(...group.map((w) => w.id));
      return;
    }
    if (!channel) {
      // the channel is gone altogether: each task's step fails it
      outcome.changed.push(...group);
      return;
    }
    const poll = channel;
    const limiter = this.channelLimiter(channelId ?? `config:${kind}`);
    const chunks: DueWatch[][] = [];
    for (let i = 0; i < group.length; i += poll.batchSize) chunks.push(group.slice(i, i + poll.batchSize));
    let pausedUntil: Date | undefined;
    await Promise.all(
      chunks.map((chunk) =>
        limiter.run(() =>
          this.requests.run(async () => {
            if (pausedUntil || this.stopping || Date.now() > startedAt + ROUND_START_MS) {
              outcome.later.push({ ids: chunk.map((w) => w.id), at: pausedUntil });
              return;
            }
            const held = await this.holdFor(chunk);
            if (held.length === 0) return;
            const extending = this.extendWhileInFlight(held);
            try {
              const paused = await this.pollChunk(poll, kind, channelId, held, outcome);
              if (paused) pausedUntil = paused;
            } finally {
              clearTimeout(extending);
            }
          }),
        ),
      ),
    );
  }

  /**
   * The tasks of a chunk this poller may poll now: when their lease ends within EXTEND_AHEAD_MS (the chunk
   * waited for a free request), it is extended first; a task whose lease had run out (another poller may
   * have it) is left out, unpolled and unwritten.
   */
  private async holdFor(chunk: DueWatch[]): Promise<DueWatch[]> {
    if (Math.min(...chunk.map((w) => w.leaseUntil.getTime())) - Date.now() > EXTEND_AHEAD_MS) return chunk;
    const held = new Set(await this.extendLeases(chunk));
    return chunk.filter((w) => held.has(w.id));
  }

  /** While the chunk's request is in flight: its leases extended EXTEND_AHEAD_MS before the first ends. */
  private extendWhileInFlight(chunk: DueWatch[]): NodeJS.Timeout {
    const first = Math.min(...chunk.map((w) => w.leaseUntil.getTime()));
    return setTimeout(() => void this.extendLeases(chunk), first - EXTEND_AHEAD_MS - Date.now());
  }

  /** Extends the chunk's leases by POLL_LEASE_S; answers the ids still held. */
  private async extendLeases(chunk: DueWatch[]): Promise<string[]> {
    try {
      const held = await this.watches.extend(this.owner, chunk.map((w) => w.id), POLL_LEASE_S);
      const until = new Date(Date.now() + POLL_LEASE_S * 1000);
      for (const w of chunk) if (held.includes(w.id)) w.leaseUntil = until;
      return held;
    } catch (err) {
      if (!this.database.report(err)) this.logger.error({ msg: 'extending the leases of polls in flight failed', err });
      return [];
    }
  }

  /** One request: its answer sorted into the round's outcome. Answers the end of a pause when the upstream refused polls. */
  private async pollChunk(poll: ChannelPoll, kind: string, channelId: string | null, chunk: DueWatch[], outcome: RoundOutcome): Promise<Date | undefined> {
    const count = (result: string, n = chunk.length) => this.metrics.upstreamPolls.inc({ channel: poll.name, operation: kind, outcome: result }, n);
    try {
      const news = await poll.poll(chunk);
      const at = Date.now();
      if (channelId) this.pauses.delete(channelId);
      const changed = chunk.filter((w) => isNews(news.get(w.id)));
      outcome.changed.push(...changed);
      for (const w of changed) {
        const said = news.get(w.id);
        if (typeof said === 'object') outcome.polled[w.id] = { upstreamId: w.upstreamId, status: said.read, at };
      }
      outcome.working.push(...chunk.filter((w) => !isNews(news.get(w.id))).map((w) => w.id));
      count('changed', changed.length);
      count('working', chunk.length - changed.length);
      return undefined;
    } catch (err) {
      if (err instanceof UpstreamBusy) {
        count('busy');
        return this.refused(poll, kind, channelId, chunk, err, outcome);
      }
      if (err instanceof UpstreamRefused) {
        // its credentials (the watcher auto-disabled the channel) or the task itself: the step decides
        count('refused');
        outcome.changed.push(...chunk);
        return undefined;
      }
      if (!(err instanceof UpstreamUnavailable)) this.logger.error({ msg: 'a poll failed unexpectedly', channel: poll.name, err });
      count('unavailable');
      outcome.working.push(...chunk.map((w) => w.id));
      return undefined;
    }
  }

  /**
   * The upstream refused polls: the channel's polls pause on every instance for its Retry-After (or a pause
   * that doubles while refusals go on), and the refusal counts toward its circuit, as a refused create does.
   */
  private async refused(poll: ChannelPoll, kind: string, channelId: string | null, chunk: DueWatch[], err: UpstreamBusy, outcome: RoundOutcome): Promise<Date> {
    const key = channelId ?? `config:${kind}`;
    const seconds = err.retryAfterS && err.retryAfterS > 0 ? Math.min(err.retryAfterS, 600) : Math.min((this.pauses.get(key) ?? PAUSE_FIRST_S / 2) * 2, PAUSE_MAX_S);
    if (!err.retryAfterS) this.pauses.set(key, seconds);
    const until = channelId ? await this.watches.pauseChannelPolls(channelId, seconds) : new Date(Date.now() + seconds * 1000);
    if (channelId) await this.router.pollsRefused(channelId, poll.name, kind, err);
    outcome.later.push({ ids: chunk.map((w) => w.id), at: until });
    return until;
  }

  private channelLimiter(key: string): Limiter {
    let limiter = this.perChannel.get(key);
    if (!limiter) this.perChannel.set(key, (limiter = new Limiter(this.config.relay.pollPerChannel)));
    return limiter;
  }

  /** With tracing: a poll that brought news is a span in the trace of the request that created its task. */
  private traceNews(changed: DueWatch[], resumed: Set<string>, startedAt: number): void {
    if (!this.tracing.enabled) return;
    for (const w of changed) {
      if (!resumed.has(w.id)) continue;
      void this.tracing.inSpan(`task.poll ${w.kind}`, { parent: w.traceParent, startTime: startedAt, attributes: { 'mgw.task.id': w.id, 'mgw.task.kind': w.kind } }, async () => undefined);
    }
  }

  private idle(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const timer = setTimeout(done, ms);
      function done(): void {
        clearTimeout(timer);
        resolve();
      }
      this.wake = () => {
        this.wake = undefined;
        done();
      };
    });
  }
}

/** Whether a poll's answer about a task is news for its step (a change, with or without the status it read). */
function isNews(news: WatchNews | undefined): boolean {
  return news !== undefined && news !== 'working';
}
