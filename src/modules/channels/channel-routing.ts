import type { StepOutcome } from '../../common/tasks/task-kind.js';
import type { SubmitMarks, UpstreamAuth } from '../../infra/relay/upstream-client.js';
import type { UpstreamTaskFacts } from './channels.repository.js';
import type { ChannelOperation } from './channel-protocols.js';

// The shapes of routing a task through channels (ChannelRouter's): what a step knows of a channel, a new
// task's submission, an upstream task given up, and the words of the gateway's own failures.

/** A channel as a task's step uses it: where to send, and how to authenticate (never logged). */
export interface ChannelHandle {
  /** Empty for RELAY_<OP>_URL as a task accepted before channels existed knows it. */
  id: string;
  name: string;
  protocol: string;
  baseUrl: string;
  auth: UpstreamAuth;
  /** The models it lists (`channels.models`; empty: its vendor's catalog). */
  models: unknown;
  /** Seconds after which an upstream task of it still working is given up (null: none). */
  stallAfterS: number | null;
  /** How it fits a video's first frame by default (its frame_fit; null: the gateway's default). */
  frameFit?: string | null;
}

/** A channel as a candidate sees it: what it speaks and serves (and, for video, how it fits a first frame by default). */
export type CandidateChannel = { protocol: string; models: unknown; frameFit?: string | null };

/** What came of a create the channel answered; when it took the task, the facts of the upstream task it made. */
export type Created<R> = StepOutcome<R> & { taken?: UpstreamTaskFacts };

/** A new task's create request, as the channels are tried with it. */
export interface Submission<R> {
  operation: ChannelOperation;
  /** What the operation's API calls the task ("generation", "task"), in the words of its failures. */
  noun: string;
  /**
   * A refusal of the task for its content (the vendor's moderation, by its descriptor's `contentRefusal`) goes on
   * to the next capable channel it has not had, when RELAY_FAILOVER_ON_CONTENT (the operations that fail over, a
   * follow-up pinned to a channel never).
   */
  failsOver?: boolean;
  task: { id: string; createdAt: Date };
  marks: SubmitMarks;
  /** A follow-up of what a channel holds (the clip continued, the generation named as a keyframe): only that channel can take it. */
  pinnedTo?: string | null;
  /** Whether a channel can make exactly what the task asks (a model of its that honours every field); absent: any can. */
  fits?(channel: CandidateChannel): boolean;
  /** What the task would cost the company on this channel (its model's price); null: not priced. Read when the operation routes by cost. */
  costOf?(channel: CandidateChannel): number | null;
  /**
   * Sends the create to this channel: throws UpstreamBusy when it provably did not take it, UpstreamRefused (account) on its credentials.
   * `marked`: the task's submit mark was written with its assignment (ChannelsRepository.assignTask), so the create goes out with no write before it.
   */
  send(channel: ChannelHandle, marked: boolean): Promise<Created<R>>;
}

/** An upstream task given up: it failed there for a reason of the vendor's own, or stalled past the channel's limit. */
export interface Abandonment {
  operation: ChannelOperation;
  taskId: string;
  channel: ChannelHandle;
  /** null: a create whose answer never came, given up without knowing whether it was made. */
  upstreamId: string | null;
  marks: SubmitMarks;
  reason: string;
  /** Cancels the upstream task, where the vendor can. */
  cancel?: () => Promise<void>;
}

/**
 * What a tenant reads when its task ends for a reason of the gateway's own: its routing (no channel could take
 * the task, the channel that holds it is gone or cannot make it) or its network (an upstream it could not reach,
 * a result it could not download, an upstream URL the outbound rules refuse). The detail names channels and
 * internal hosts: it is kept for admins as the task's `gateway_error` attempt (GET /admin/tasks/{id}/attempts).
 */
export const GATEWAY_FAILURE = "the gateway could not reach an upstream for this task; its credits were given back and it may be submitted again (the gateway's operators see why under the task's id)";

/** An upstream task given up because it stalled: the words `abandon` keeps, by which a later failure tells a stall from the vendor's own failure. */
export const STALLED = 'the upstream task was still working after';

/** Why an upstream task is given up when it stalled past its channel's limit. */
export function stallReason(channel: Pick<ChannelHandle, 'stallAfterS'>): string {
  return `${STALLED} ${channel.stallAfterS} s (the channel's stall_after_s)`;
}


/** How an auto-disabled channel's status_reason begins, by what the upstream refused (ChannelRouter.autoDisable). */
export const ACCOUNT_REFUSED = { auth: "the upstream refused the account's credentials", account: "the upstream refused the account's credit" } as const;

/** Why no enabled channel can make a task: its vendor refused the gateway's credentials or credit, its channels are disabled by an admin, or it has none. */
export type DeadEnd = keyof typeof ACCOUNT_REFUSED | 'disabled' | 'none';

/**
 * What a task's owner reads when no enabled channel can make it, in words a caller can act on (the channels'
 * names and hosts are for admins: the task's `gateway_error` attempt). `held`: the vendor refused the
 * account while it held the task (a later step's call), rather than before taking it.
 */
export function deadEndWords(operation: ChannelOperation, noun: string, why: DeadEnd, held = false): string {
  const back = 'its credits were given back';
  switch (why) {
    case 'auth':
      return `the ${operation} vendor refused the gateway's credentials${held ? ` while it held this ${noun}` : ''}, so its channel was disabled${held ? '' : ` and no other channel can make this ${noun}`}; ${back}: the gateway's operators must renew the vendor's key before it is submitted again`;
    case 'account':
      return `the ${operation} vendor's account is out of credit${held ? ` (it said so while it held this ${noun})` : ''}, so its channel was disabled${held ? '' : ` and no other channel can make this ${noun}`}; ${back}: the gateway's operators must top the account up before it is submitted again`;
    case 'disabled':
      return `every channel that can make this ${noun} is disabled by the gateway's operators; ${back}: submit it again once they enable one`;
    case 'none':
      return `no channel of the gateway can make this ${noun} as asked; ${back}`;
  }
}

/** Why a disabled channel cannot take tasks, read from its status and status_reason. */
export function deadEndOf(channel: { status: string; statusReason: string | null }): DeadEnd {
  if (channel.status === 'auto_disabled') return channel.statusReason?.startsWith(ACCOUNT_REFUSED.account) ? 'account' : 'auth';
  return 'disabled';
}

/**
 * The channels a new task is drawn from, of its candidates (non-empty): those of the highest priority and,
 * where the operation routes by cost (`costOf` given), the cheapest of them, an unpriced one after every
 * priced one.
 */
export function topPool<C extends { priority: number }>(candidates: readonly C[], costOf?: (channel: C) => number | null): C[] {
  const top = Math.max(...candidates.map((c) => c.priority));
  const pool = candidates.filter((c) => c.priority === top);
  if (!costOf) return pool;
  const costs = pool.map((c) => costOf(c) ?? Number.POSITIVE_INFINITY);
  const least = Math.min(...costs);
  return pool.filter((_c, i) => costs[i] === least);
}

/**
 * One of the channels (non-empty), each as likely as its weight, all equally when none has weight: `draw(n)`
 * is a whole number from 0 to n - 1 (crypto's randomInt).
 */
export function byWeight<C extends { weight: number }>(channels: readonly C[], draw: (n: number) => number): C {
  const total = channels.reduce((sum, c) => sum + c.weight, 0);
  if (total === 0) return channels[draw(channels.length)];
  let point = draw(total);
  for (const channel of channels) {
    if (point < channel.weight) return channel;
    point -= channel.weight;
  }
  return channels[channels.length - 1];
}

/** Whether the upstream task a task holds on `channel` has worked past the channel's stall limit. */
export function stalledOn(channel: Pick<ChannelHandle, 'stallAfterS'>, since: Date | null): boolean {
  return channel.stallAfterS !== null && since !== null && Date.now() - since.getTime() > channel.stallAfterS * 1000;
}

/** How a task's failure begins when its upstream refused the request itself (a parameter, its content), before the vendor's words. */
export function refusedWords(noun: string): string {
  return `the upstream refused the ${noun}`;
}

/**
 * The vendor's words of a task that failed because its upstream refused the request ("the upstream refused the
 * speech: Voice 'x' not found."), or undefined for any other failure (a failed generation, the gateway's own).
 * A content refusal reads so too: a caller tells it apart by the vendor's descriptor (`readsAsContentRefusal`).
 */
export function upstreamRefusalOf(reason: string, noun: string): string | undefined {
  const prefix = `${refusedWords(noun)}: `;
  return reason.startsWith(prefix) ? reason.slice(prefix.length) : undefined;
}
