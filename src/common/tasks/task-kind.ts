import type { Type } from '@nestjs/common';
import type { Task as TaskModel, Prisma } from '../../generated/prisma/client.js';
import type { KindSettingsSpec } from '../../infra/config/app-config.js';
import type { SqlExecutor } from '../../infra/prisma/sql-executor.js';
import type { AdmissionSql, DetailRows, Statement } from '../../infra/prisma/statement.js';
import type { SubmitMarks } from '../../infra/relay/upstream-client.js';
import type { WorkScope } from '../../infra/workdir/work-dir.service.js';

/** The normalized lifecycle every task follows, whatever its kind; each kind names these states in its own API. */
export const TASK_STATES = ['queued', 'running', 'succeeded', 'failed'] as const;
export type TaskState = (typeof TASK_STATES)[number];
export type FinalState = 'succeeded' | 'failed';

/** A row of the task table, its kind's documents typed: `params` (as accepted) and `result` (what a success stored). */
export type Task<P = Record<string, unknown>, R = Record<string, unknown>> = Omit<TaskModel, 'params' | 'result'> & { params: P; result: R | null };

/** A transaction of the task table (a state change and what must happen with it). */
export type TaskTx = Prisma.TransactionClient;

/** The outcome of one step of work on a task. */
export type StepOutcome<O> =
  | { kind: 'done'; result: O }
  | { kind: 'failed'; reason: string }
  /** Not finished (an upstream is still working): run the next step after this many seconds. */
  | { kind: 'wait'; seconds: number }
  /** The upstream is at capacity and did not take the task: try again after this many seconds, off the deadline's clock. */
  | { kind: 'busy'; seconds: number }
  /**
   * Created upstream and not final: the task is watched (no job) until the upstream has news, when its next
   * step is queued. `minPollS`: how often its upstream's protocol allows it to be asked, at most.
   */
  | { kind: 'watch'; minPollS?: number };

/** Thrown by a step (or what it calls) to end the task failed with a reason meant for the caller. */
export class TaskFailure extends Error {}

/** What the engine gives a step: work files that live as long as the step, and the task's upstream marks. */
export interface StepContext {
  files: WorkScope;
  /** How the task records the create request it sends upstream (see submitOnce). */
  marks: SubmitMarks;
  /**
   * Aborts when the step must stop: it ran past the task's deadline (the task has failed), or it ended.
   * Child processes started inside the step are killed then whatever the step does (StepScope); pass it
   * to long waits of your own.
   */
  signal: AbortSignal;
}

/** What a success stores: the result facts (the task's `result`), and detail rows written in the statement that ends it. */
export interface Success<R> {
  result?: R;
  /** Rows of other tables (the result's media), written only when the task did end with them. */
  details: DetailRows[];
  /** Undoes what storing wrote outside the database (objects), when the task ended otherwise. */
  discard(): Promise<void>;
}

/** What a task holds while it runs (slots), and what it is charged (credits). */
export interface Price {
  slots: number;
  credits: number;
}

/** What a kind is, statically: enough for config, the job map, usage, metrics and OpenAPI, without a running app. */
export interface KindDefinition {
  /** The task's `kind`, its queue (`<name>.run`), its metric label and its key in usage reports. */
  name: string;
  /** How its API names each state (Kling's submitted…succeed, Luma's pending…completed). */
  states: Record<TaskState, string>;
  /** What its API calls a task, in messages: "the generation did not finish within 1800 s". */
  noun: string;
  /** Its settings (deadline, upstream cap, provider, prices), validated with the rest of the config. */
  settings: Omit<KindSettingsSpec, 'name'>;
  /** Its Swagger UI tag. */
  openapi: { tag: string; description: string };
  /**
   * How `GET /tasks/{id}` shows what a task asked (its `request`: the parameters document, in the gateway's own
   * words). `bookkeeping`: the document's fields that are the gateway's own notes, not what was asked (facts read
   * from an input, ids it gave, resolved parts), left out; a dotted path reaches into an object, `*` into every
   * item of an array (`inputs.*.width`). The door (`door`) is always left out: the view names it apart.
   * `inputRoles`: the roles of the task's media that came with the request or were made from it before it was
   * sent (frames, reference images, input images, a mask, a fitted frame), which the view marks as inputs.
   */
  request?: { bookkeeping?: readonly string[]; inputRoles?: RegExp };
  /**
   * Its own routes for one task, `{id}` standing for the task's id: where its record is read (GET) and,
   * when it has one, its callbacks' delivery log. The cross-operation list (`GET /tasks`) links to them.
   */
  routes?: { record: string; callbacks?: string };
  /**
   * The schema of its entries in `GET /models` (a DTO class whose `operation` is its name), when its tasks name
   * models: the document's list is one of these per operation that declares one.
   */
  models?: { dto: Type<unknown> };
}

/** One model a caller may ask an operation for (`GET /models`): its name, its operation, the vendor behind it and what it can do, in the operation's own fields. */
export interface ModelEntry {
  name: string;
  operation: string;
  vendor: string;
  vendor_model: string;
}

/**
 * One operation, plugged into the task engine: everything the engine needs to accept, run, end and notify
 * a task of the kind. P: its parameters document, R: its result document, O: what its step produces.
 */
export interface TaskKind<P = any, R = any, O = any> {
  readonly definition: KindDefinition;
  /** Slots and credits of a task with these parameters (at acceptance). */
  price(params: P): Price;
  /** One step of work, safe to run twice (a worker may die after it, and another runs it again). */
  step(task: Task<P, R>, ctx: StepContext): Promise<StepOutcome<O>>;
  /** Stores what a step produced (objects, facts), for the engine to end the task with. */
  store(task: Task<P, R>, output: O, ctx: StepContext): Promise<Success<R>>;
  /** How the poller asks upstreams about this kind's tasks that wait on them (set when the kind relays). */
  readonly watcher?: UpstreamWatcher;
  /**
   * The bodies of the notifications of these tasks (their callback_url), read in the transaction `tx` of
   * the state change they announce: the record the kind's GET answers (its body, or that body's `data`).
   * Without `tx`, the same record as it stands (the cross-operation task view, `GET /tasks/{id}`).
   */
  notifications(tasks: Task<P, R>[], tx?: TaskTx): Promise<unknown[]>;
  /** The models callers may ask it for now (`GET /models`), when its definition declares `models`. */
  models?(): Promise<ModelEntry[]>;
}

/** A task created upstream and not final, as the poller hands it to its kind's watcher. */
export interface WatchedTask {
  id: string;
  kind: string;
  owner: string;
  channelId: string | null;
  upstreamId: string;
  /** When its current upstream task was created (a channel's stall limit counts from there). */
  upstreamSince: Date | null;
  createdAt: Date;
  traceParent: string | null;
}

/**
 * What a poll learnt of a task: nothing new (still working upstream), news its next step must act on, or news
 * with the status the poll read (plain JSON: `read`), which the step it queues acts on rather than ask again.
 */
export type WatchNews = 'working' | 'changed' | { read: unknown };

/** How the tasks one channel holds are asked about: as many in one request as its protocol takes. */
export interface ChannelPoll {
  /** The channel's name, for metrics and logs. */
  name: string;
  /** Tasks one request asks about (the aggregators' batch fetch takes many; most protocols one). */
  batchSize: number;
  /**
   * Asks the upstream about these tasks (at most batchSize); a task missing from the answer is taken as
   * working. Throws UpstreamBusy when the upstream refuses polls for now, UpstreamRefused (account) when it
   * refuses the channel's credentials, UpstreamUnavailable when it gave no usable answer.
   */
  poll(tasks: WatchedTask[]): Promise<Map<string, WatchNews>>;
}

/** A kind's way of asking upstreams about its waiting tasks, per channel. */
export interface UpstreamWatcher {
  /** How the tasks of this channel (null: RELAY_<OP>_URL before channels) are polled; null when the channel is gone (their steps then fail them). */
  channelPoll(channelId: string | null): Promise<ChannelPoll | null>;
}

/** A kind's class: its definition is static, so the registry can be read before anything runs. */
export interface KindClass extends Type<TaskKind> {
  readonly definition: KindDefinition;
}

/** A kind's Nest module (the registry lists these): it provides and exports `kind`. */
export interface KindModule extends Type<unknown> {
  readonly kind: KindClass;
}

/** The kinds the engine drives (provided from the registry). */
export const TASK_KINDS = Symbol('TASK_KINDS');

/** One notification of a task's state change, for its callback_url. */
/**
 * Several notifications that one state change makes for one task, as a kind's `notifications` may give in place
 * of one body (with `tx`): each is its own delivery, sent one after the other in this order (a door whose API
 * calls back at stages the gateway passes together: the sunoapi.org family's `first` then `complete`).
 */
export class NotificationSeries {
  constructor(readonly bodies: readonly unknown[]) {}
}

export interface TaskNotification {
  taskId: string;
  kind: string;
  owner: string;
  /** The state as the kind's API names it. */
  status: string;
  url: string;
  /** Its body; a `NotificationSeries`: several deliveries, in order. */
  body: unknown;
  /** The W3C traceparent its deliveries continue (with tracing on): the step or request that made it, else the task's. */
  traceParent: string | null;
}

/** A task that reached a final state, as its owner's bookkeeping needs it. */
export interface EndedTasks {
  /** Per owner and kind after commit: how many ended, and the credits given back. */
  owner: string;
  kind: string;
  tasks: number;
  refunded: number;
}

/** What the admission of one task answered (a row of TaskHooks.admissionSql). */
export interface Admission {
  admitted: boolean;
  refusal: 'concurrency' | 'credits' | null;
  /** The owner's counters before this task (the job's fair-share priority is minus slotsBefore). */
  slotsBefore: number;
  creditsBefore: number;
  /** The owner's limits (null: unlimited). */
  maxSlots: number | null;
  maxCredits: number | null;
}

/**
 * What must happen around the engine's writes, declared to it once at construction (TASK_HOOKS):
 * admission at acceptance, and in the transaction of every state change the notifications (the callback
 * outbox) and, for a final state, the owner's slots and refund.
 */
export interface TaskHooks {
  /**
   * The admission of these owners' tasks, each owner's in order and the owners one after the other (their
   * counters locked in that order), as SQL inside the statement that inserts them.
   */
  admissionSql(owners: { owner: string; tasks: { id: string; price: Price }[] }[]): AdmissionSql;
  /** Counts a task's admission, and answers the error that refuses it (null: admitted). */
  admissionOutcome(owner: string, kind: string, price: Price, admission: Admission): Error | null;
  /** Writes the notifications (and queues their delivery) in the transaction `tx` of their state change. */
  notify(db: SqlExecutor, tx: TaskTx, notifications: TaskNotification[]): Promise<void>;
  /** Gives back the slots (and, when `to` is failed, the credits) of these tasks that just ended, in `tx`. */
  settle(tx: TaskTx, ids: string[], to: FinalState): Promise<void>;
  /**
   * The same as CTEs for a one-statement end: they read `changed` (id, kind, owner, slots, credits,
   * created_at) and the last is named `settled`; its rows (EndedTasks) go to `recordSettled` after commit.
   */
  settleCtes(s: Statement, to: FinalState): string[];
  recordSettled(rows: EndedTasks[], to: FinalState): void;
}

export const TASK_HOOKS = Symbol('TASK_HOOKS');
