import { Injectable } from '@nestjs/common';
import type { ChannelPoll, StepOutcome, Task, WatchedTask, WatchNews } from '../../common/tasks/task-kind.js';
import { AppConfig } from '../../infra/config/app-config.js';
import { isStorableText } from '../../infra/database/storable-text.js';
import { type PolledStatus, pollDelaySeconds, type SubmitMarks, submitOnce, UpstreamBusy, UpstreamRefused, UpstreamUnavailable } from '../../infra/relay/upstream-client.js';
import { UnusableAnswer, type VendorAccount } from '../../vendors/contracts/vendor.js';
import type { VendorBilled } from '../../vendors/contracts/vendor-billing.js';
import type { RelayStatus, RelayVendor } from '../../vendors/contracts/relay.js';
import { refusesContent } from '../../vendors/registry.js';
import type { UpstreamTaskFacts } from './channels.repository.js';
import type { ChannelOperation } from './channel-protocols.js';
import { type CandidateChannel, type ChannelHandle, ChannelRouter, refusedWords, stalledOn, stallReason } from './channel-router.js';
import { ChannelHandles } from './channel-handles.js';
import { UpstreamBilling } from './upstream-billing.js';
import { PolledChannels } from './polled-channels.js';

/** What a create came to: the results at once (a vendor that answers with them), or an upstream task to watch. */
export type RelayCreated<S, R> = { made: R } | { upstreamId: string; status?: S; callback?: boolean };

/**
 * What a create needs, decided by the operation before any channel is chosen (RelayOperation.prepare) and
 * handed on by the flow as data: the channel the task is pinned to (what it follows is there), and the
 * operation's own facts its `fits` and `create` read (an expand's input size, the upstream ids of the generations a
 * video's keyframes name).
 */
export interface RelayOrder<O> {
  pinnedTo: string | null;
  data: O;
}

/** Whether a step's preparation ended it (a check refused the task) rather than giving its order. */
function isOutcome<O, R>(prepared: RelayOrder<O> | StepOutcome<R>): prepared is StepOutcome<R> {
  return 'kind' in prepared;
}

/**
 * One operation's part of relaying one task: its vendors, what its request asks of a channel, what a create
 * needs (prepared once, as data), how its request maps onto its vendor's create, and how a vendor's end becomes
 * the task's. RelayFlow does the rest, the same for every operation, calling nothing of the operation's in
 * between but pure tests of a channel and the mapping of the create.
 */
export interface RelayOperation<V extends RelayVendor<S>, S extends RelayStatus, R, O = undefined> {
  operation: ChannelOperation;
  /** What the operation's API calls the task, in its failures: "generation", "task", "music task", "upload". */
  noun: string;
  /** The adapters by channel protocol. */
  vendors: Readonly<Record<string, V>>;
  /**
   * What a create needs, read once and only by a step that chooses a channel (a new create, a failover), before
   * it chooses: the checks a create must pass (a caller's URL the vendor would fetch, a generation a keyframe
   * names: an outcome ends the step), the channel a follow-up is pinned to, and the facts `fits` and `create`
   * read. Absent: nothing to check, no pin, `data` undefined.
   */
  prepare?(): Promise<RelayOrder<O> | StepOutcome<R>>;
  /** Whether a channel makes the task exactly as asked (a model that honours every field), by the prepared facts; absent: any does. */
  fits?(channel: CandidateChannel, data: O): boolean;
  /** What the task costs the company on a channel; null: unpriced. */
  costOf?(channel: CandidateChannel): number | null;
  /** The model and price an upstream task of it on this channel is recorded with. */
  taken?(channel: CandidateChannel): Omit<UpstreamTaskFacts, 'upstreamId'>;
  /** What the vendor's billed figure for its upstream task on this channel costs the company (the channel's price of that unit); null: unpriced. */
  billedCost?(channel: CandidateChannel, billed: VendorBilled): number | null;
  /** The task follows something a channel holds (a clip continued, a generation named): only that channel (its order's `pinnedTo`) can take it, and it never fails over. */
  pinned?: boolean;
  /**
   * Whether an upstream task that failed for a reason of the vendor's own, or stalled past its channel's
   * limit, is given up for another channel (video, expand). Without it the task ends with the vendor's end.
   */
  failsOver?: boolean;
  /**
   * The task's request mapped onto the vendor's create and sent through its contract, with the prepared facts
   * (RelayFlow marks it as sent first: an answer that never comes is never sent again blindly).
   */
  create(channel: ChannelHandle, vendor: V, data: O): Promise<RelayCreated<S, R>>;
  /** Finds the task the vendor made under our id, for a create whose answer was lost (null: not made); null at once where the vendor cannot be asked. */
  findByOwnId?(channel: ChannelHandle, vendor: V): Promise<{ upstreamId: string; status: S } | null> | null;
  /** A vendor's end other than working or failed (succeeded, ready): the results copied into our store. */
  finished(status: S, channel: ChannelHandle): Promise<StepOutcome<R>>;
  /** The words of the vendor's failure as the caller reads them (default: "the upstream failed the <noun>: <its words>"). */
  failure?(status: Extract<S, { state: 'failed' }>): string;
  /** A vendor's words as a caller may read them (an aggregator's carry its ids): applied to refusals and unusable answers. */
  tenantWords?(message: string): string;
}

/**
 * Whether a held task's upstream task is given up for another channel (where one may take it), and why: its
 * vendor failed it for a reason of its own (its moderation's refusal, by its descriptor's contentRefusal, only
 * with RELAY_FAILOVER_ON_CONTENT), or it is still working past its channel's stall limit (`stalled`); null when
 * it is not (the operation does not fail over, the task is pinned, or the status is an end to keep).
 */
export function givingUp(
  status: RelayStatus,
  o: { failsOver: boolean; failoverOnContent: boolean; stalled: boolean; refusesContent(words: string): boolean },
): 'failed' | 'stalled' | null {
  if (!o.failsOver) return null;
  if (status.state === 'failed') return o.failoverOnContent || !o.refusesContent((status as { reason: string }).reason) ? 'failed' : null;
  return status.state === 'working' && o.stalled ? 'stalled' : null;
}

/** A step's preparation, read at most once (RelayOperation.prepare). */
type Prepared<O, R> = () => Promise<RelayOrder<O> | StepOutcome<R>>;

/** Longest upstream id kept (the column's size): a vendor answering a longer one fails the task. */
export const MAX_UPSTREAM_ID = 256;

/** How many tasks one batch query asks about. */
const FETCH_BATCH = 50;

/**
 * How long a status a poll read stays good for the step it queued (which normally runs within a second): a
 * step that waited longer asks again, as the links in an end may expire (BFL's last ten minutes).
 */
export const POLLED_FRESH_MS = 60_000;

/** The largest status a poll carries to its step (JSON characters); a bigger one is asked for again by the step. */
export const POLLED_MAX_CHARS = 64 * 1024;

/**
 * What a poll tells the poller of a task: working (nothing new), or news with the status it read when that
 * status can be carried to the step in its job (plain JSON, not too big), else news alone (the step asks).
 * A task the answer left out (undefined) is news: its step asks for it alone.
 */
export function pollNews(status: RelayStatus | undefined): WatchNews {
  if (status === undefined) return 'changed';
  if (status.state === 'working') return 'working';
  return carriable(status) ? { read: status } : 'changed';
}

/**
 * Whether a status survives its trip through a job's JSONB as it is (no bytes, dates or class instances; no
 * text PostgreSQL cannot store: an upstream's lone surrogate or NUL, which the step's own query keeps as
 * U+FFFD where it stores it) and is small enough to carry.
 */
export function carriable(status: unknown): boolean {
  const plain = (v: unknown): boolean => {
    if (typeof v === 'string') return isStorableText(v);
    if (v === null || typeof v === 'boolean' || (typeof v === 'number' && Number.isFinite(v))) return true;
    if (Array.isArray(v)) return v.every(plain);
    if (typeof v !== 'object' || Object.getPrototypeOf(v) !== Object.prototype) return false;
    return Object.entries(v as object).every(([key, x]) => isStorableText(key) && (x === undefined || plain(x)));
  };
  return plain(status) && JSON.stringify(status).length <= POLLED_MAX_CHARS;
}

/**
 * The status a step acts on without asking: the one its poll read (SubmitMarks.polled), when it is of the
 * upstream task the task holds now (not one given up since) and read less than POLLED_FRESH_MS before `now`;
 * undefined otherwise (the step asks once).
 */
export function polledStatus<S>(polled: PolledStatus | undefined, upstreamId: string, now: number): S | undefined {
  if (!polled || polled.upstreamId !== upstreamId || now - polled.at > POLLED_FRESH_MS || now < polled.at - POLLED_FRESH_MS) return undefined;
  const status = polled.status as { state?: unknown } | null;
  return status && typeof status === 'object' && typeof status.state === 'string' && status.state !== 'working' ? (polled.status as S) : undefined;
}

/**
 * The one relay path of every operation: a new task goes to a channel the router picks (one whose vendor
 * makes it as asked, by priority and, where the operation routes by cost, price); its create is sent once
 * (marked before it goes); the answer is classified (busy and refused accounts go on to the next channel, a
 * refusal of the task ends it, an answer that never came stays with that channel); an upstream task is
 * watched (polled, or called back) and its end mapped by the operation. A create whose answer was lost is
 * found by our id where the vendor keeps it, else never sent there again: it goes on to a channel it has not
 * had when one may take it. An upstream task that failed for a reason of the vendor's own or stalled is given
 * up for another channel where the operation fails over. Each operation's provider only maps its request.
 */
@Injectable()
export class RelayFlow {
  /** Accounts that refused a batch query: their tasks are asked about one by one. */
  private readonly singleQuery = new Set<string>();

  constructor(
    private readonly router: ChannelRouter,
    private readonly handles: ChannelHandles,
    private readonly config: AppConfig,
    private readonly billing: UpstreamBilling,
    private readonly polled: PolledChannels,
  ) {}

  /** One step of a relayed task: its upstream task asked about, or a create sent. */
  async step<V extends RelayVendor<S>, S extends RelayStatus, R, O>(task: Task<unknown, unknown>, marks: SubmitMarks, op: RelayOperation<V, S, R, O>): Promise<StepOutcome<R>> {
    // what a create needs, prepared at most once in this step, and only when a channel is to be chosen
    let order: Promise<RelayOrder<O> | StepOutcome<R>> | undefined;
    const prepared = () => (order ??= op.prepare ? op.prepare() : Promise.resolve({ pinnedTo: null, data: undefined as O }));
    try {
      if (task.upstreamId || task.submitStartedAt) {
        const held = await this.held(task, marks, op, prepared);
        if (held) return held;
        // given up there (or provably never made): on to a channel it has not had, in this same step
      }
      const ready = await prepared();
      if (isOutcome(ready)) return ready;
      const { data } = ready;
      // a create answered with the task's end already: its billed figure is kept once the router has kept the attempt
      const ended: { upstream?: { channel: ChannelHandle; upstreamId: string; status: S } } = {};
      const outcome = await this.router.submitNew({
        operation: op.operation,
        noun: op.noun,
        failsOver: op.failsOver && !op.pinned,
        task,
        marks,
        pinnedTo: ready.pinnedTo,
        fits: op.fits ? (channel) => op.fits!(channel, data) : undefined,
        costOf: op.costOf,
        send: (channel, marked) => this.create(channel, marks, op, data, marked, (upstreamId, status) => (ended.upstream = { channel, upstreamId, status })),
      });
      if (ended.upstream) await this.keepBilled(task.id, op, ended.upstream.channel, ended.upstream.upstreamId, ended.upstream.status);
      return outcome;
    } catch (err) {
      const words = op.tenantWords ?? ((m: string) => m);
      if (err instanceof UnusableAnswer) return { kind: 'failed', reason: words(err.message) };
      if (err instanceof UpstreamRefused) return await this.router.refusal(task.id, op.operation, op.noun, err, refusedWords(op.noun), words);
      if (err instanceof UpstreamBusy) return { kind: 'busy', seconds: pollDelaySeconds(task.createdAt, this.config.relay.pollMs) };
      if (err instanceof UpstreamUnavailable) return { kind: 'wait', seconds: pollDelaySeconds(task.createdAt, this.config.relay.pollMs) };
      throw err;
    }
  }

  /**
   * How the poller asks about the tasks a channel holds: up to FETCH_BATCH in one request where the vendor
   * has a batch query (a task the answer leaves out is news: its step asks for it alone and decides), else one
   * at a time. A status other than working is news, with the status itself (`pollNews`): the step it queues
   * acts on it without asking again. An account that refuses the batch query is asked one task at a time from then on, and the
   * tasks of the refused request are news (each step asks for its own): taken as unanswered, a task whose
   * upstream had called back waited for the safety poll. A task stalled past its channel's limit is news at
   * once where the operation fails over.
   */
  async channelPoll<V extends RelayVendor<S>, S extends RelayStatus>(channelId: string | null, op: Pick<RelayOperation<V, S, unknown, unknown>, 'operation' | 'vendors' | 'failsOver'>): Promise<ChannelPoll | null> {
    const channel = await this.polled.handleOf(channelId, op.operation);
    const vendor = channel ? op.vendors[channel.protocol] : undefined;
    const query = vendor?.query?.bind(vendor);
    if (!channel || !vendor || !query) return null;
    const many = vendor.queryMany && !this.singleQuery.has(channel.baseUrl) ? vendor.queryMany.bind(vendor) : undefined;
    return {
      name: channel.name,
      batchSize: many ? FETCH_BATCH : 1,
      poll: (tasks: WatchedTask[]) =>
        this.router.onHeld(channel, tasks[0].id, op.operation, async () => {
          if (many) {
            const statuses = await many(channel, tasks.map((t) => t.upstreamId));
            if (!statuses) {
              this.singleQuery.add(channel.baseUrl);
              return new Map(tasks.map((t): [string, WatchNews] => [t.id, 'changed']));
            }
            return new Map(tasks.map((t): [string, WatchNews] => [t.id, pollNews(statuses.get(t.upstreamId))]));
          }
          const [task] = tasks;
          // stalled past the channel's limit: its step gives it up
          if (op.failsOver && stalledOn(channel, task.upstreamSince)) return new Map<string, WatchNews>([[task.id, 'changed']]);
          return new Map<string, WatchNews>([[task.id, pollNews(await query(channel, task.upstreamId, true))]]);
        }),
    };
  }

  /** A task a channel holds (its create sent, answered or not): its outcome, or null to go on to a create. */
  private async held<V extends RelayVendor<S>, S extends RelayStatus, R, O>(task: Task<unknown, unknown>, marks: SubmitMarks, op: RelayOperation<V, S, R, O>, prepared: Prepared<O, R>): Promise<StepOutcome<R> | null> {
    const where = task.channelId ?? `RELAY_${op.operation.toUpperCase()}_URL`;
    const channel = await this.handles.heldBy(task, op.operation);
    if (!channel) return this.router.gatewayFailure(task.id, op.operation, `the channel that holds the ${op.noun} (${where}) no longer exists`);
    const vendor = op.vendors[channel.protocol];
    if (!vendor) return this.router.gatewayFailure(task.id, op.operation, `channel ${channel.name} speaks ${channel.protocol}, which serves no ${op.operation}`, channel);
    if (!task.upstreamId) return this.unansweredCreate(task, marks, op, channel, vendor, where, prepared);
    const upstreamId = task.upstreamId;
    if (!vendor.query) return this.router.gatewayFailure(task.id, op.operation, `channel ${channel.name}'s vendor cannot be asked about upstream task ${upstreamId}`, channel);
    // the status the poll that queued this step read, when it is of this upstream task and fresh; else asked now
    const polled = polledStatus<S>(marks.polled, upstreamId, Date.now());
    const status = polled ?? (await this.router.onHeld(channel, task.id, op.operation, () => vendor.query!(channel, upstreamId, false)));
    // what the vendor billed is kept whatever comes next (its end, or failover: the task given up there was billed too)
    await this.keepBilled(task.id, op, channel, upstreamId, status);
    const givesUp = givingUp(status, {
      failsOver: !!op.failsOver && !op.pinned,
      failoverOnContent: this.config.relay.failoverOnContent,
      stalled: stalledOn(channel, task.upstreamSince),
      refusesContent: (words) => refusesContent(channel.protocol, words),
    });
    if (!givesUp || !(await this.mayFailOver(op, task.id, prepared))) return this.outcome(vendor, status, channel, op);
    const stalled = givesUp === 'stalled';
    const reason = stalled ? stallReason(channel) : `the upstream failed the ${op.noun}: ${(status as { reason: string }).reason}`;
    const cancel = stalled && vendor.cancel ? () => vendor.cancel!(channel, upstreamId) : undefined;
    await this.router.abandon({ operation: op.operation, taskId: task.id, channel, upstreamId, marks, reason, cancel });
    return null;
  }

  /**
   * A create went out and its answer never came back (a timeout, a reset, a worker killed while it was in
   * flight). A vendor that keeps our id (Kling) is asked for the task by it: found, it is adopted (its
   * accepted attempt recorded now); provably not made, the create may be sent again (Kling refuses a second
   * with the same id, so it can never be made twice). A vendor that cannot be asked is never sent it again:
   * the task goes on to another channel that has not had it when it may (a possibly billed orphan upstream,
   * the tenant charged once), and fails otherwise.
   */
  private async unansweredCreate<V extends RelayVendor<S>, S extends RelayStatus, R, O>(
    task: Task<unknown, unknown>,
    marks: SubmitMarks,
    op: RelayOperation<V, S, R, O>,
    channel: ChannelHandle,
    vendor: V,
    where: string,
    prepared: Prepared<O, R>,
  ): Promise<StepOutcome<R> | null> {
    const lookUp = op.findByOwnId?.(channel, vendor);
    if (lookUp) {
      const found = await this.router.onHeld(channel, task.id, op.operation, () => lookUp);
      if (!found) {
        await marks.clearSubmitting();
        return null;
      }
      await marks.saveUpstreamId(found.upstreamId, { callback: false });
      await this.router.adopted(task.id, op.operation, channel, { model: '', cost: null, ...op.taken?.(channel), upstreamId: found.upstreamId });
      await this.keepBilled(task.id, op, channel, found.upstreamId, found.status);
      return this.outcome(vendor, found.status, channel, op);
    }
    const reason = `the upstream never answered the create request (channel ${where}); it was not sent again, to avoid a second (billed) ${op.noun}`;
    if (op.pinned || !(await this.mayFailOver(op, task.id, prepared, channel))) return this.router.gatewayFailure(task.id, op.operation, reason, channel);
    await this.router.abandon({ operation: op.operation, taskId: task.id, channel, upstreamId: null, marks, reason });
    return null;
  }

  /**
   * One create to one channel, marked as sent before it goes (`marked`: by its assignment already); its upstream
   * task saved, or its results at once. An answer that is already the task's end is told to `ended` (its billed
   * figure is kept after its attempt).
   */
  private async create<V extends RelayVendor<S>, S extends RelayStatus, R, O>(channel: ChannelHandle, marks: SubmitMarks, op: RelayOperation<V, S, R, O>, data: O, marked: boolean, ended: (upstreamId: string, status: S) => void) {
    const vendor = op.vendors[channel.protocol];
    if (!vendor) throw new UpstreamRefused(`channel ${channel.name} speaks ${channel.protocol}, which serves no ${op.operation}`, 0, 'request', true);
    const answer = await submitOnce(marks, () => op.create(channel, vendor, data), marked);
    const facts = { model: '', cost: null, ...op.taken?.(channel) };
    if ('made' in answer) return { kind: 'done' as const, result: answer.made, taken: { ...facts, upstreamId: null } };
    if (answer.upstreamId.length > MAX_UPSTREAM_ID) return { kind: 'failed' as const, reason: `the upstream answered a task id longer than ${MAX_UPSTREAM_ID} characters` };
    await marks.saveUpstreamId(answer.upstreamId, { callback: answer.callback ?? false });
    if (answer.status && answer.status.state !== 'working') ended(answer.upstreamId, answer.status);
    const taken = op.taken ? { ...facts, upstreamId: answer.upstreamId } : undefined;
    const outcome = answer.status ? await this.outcome(vendor, answer.status, channel, op) : { kind: 'watch' as const, minPollS: vendor.minPollS };
    return { ...outcome, taken };
  }

  /**
   * Whether the task may go on to a channel it has not had (ChannelRouter.mayFailOver), by the facts `fits`
   * reads (prepared first). A preparation that refuses the task leaves it where it is.
   */
  private async mayFailOver<R, O>(op: { operation: ChannelOperation; fits?(channel: CandidateChannel, data: O): boolean }, taskId: string, prepared: Prepared<O, R>, besides?: ChannelHandle): Promise<boolean> {
    const ready = await prepared();
    if (isOutcome(ready)) return false;
    return this.router.mayFailOver(op.operation, taskId, op.fits ? (channel) => op.fits!(channel, ready.data) : undefined, besides);
  }

  /** Keeps what the vendor says it billed for an upstream task that ended (UpstreamBilling), priced by the operation. */
  private async keepBilled<V extends RelayVendor<S>, S extends RelayStatus, R, O>(taskId: string, op: RelayOperation<V, S, R, O>, channel: ChannelHandle, upstreamId: string, status: S): Promise<void> {
    const billed = status.state === 'working' ? undefined : (status as { billed?: VendorBilled }).billed;
    if (!billed) return;
    await this.billing.record(taskId, op.operation, channel, upstreamId, { ...billed, cost: op.billedCost?.(channel, billed) ?? null });
  }

  /** A vendor's state onto the step's: working → watched; failed → its words; its end → the operation's results. */
  private outcome<V extends RelayVendor<S>, S extends RelayStatus, R, O>(vendor: V, status: S, channel: ChannelHandle, op: RelayOperation<V, S, R, O>): Promise<StepOutcome<R>> | StepOutcome<R> {
    if (status.state === 'working') return { kind: 'watch', minPollS: vendor.minPollS };
    if (status.state === 'failed') {
      const failed = status as Extract<S, { state: 'failed' }>;
      return { kind: 'failed', reason: op.failure ? op.failure(failed) : `the upstream failed the ${op.noun}: ${(failed as { reason: string }).reason}` };
    }
    return op.finished(status, channel);
  }
}
