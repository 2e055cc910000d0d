import { randomUUID } from 'node:crypto';
import { Inject, Injectable, type OnApplicationBootstrap } from '@nestjs/common';
import { isUUID } from 'class-validator';
import { AppConfig } from '../../infra/config/app-config.js';
import type { DetailRows } from '../../infra/prisma/statement.js';
import { taskJobName, taskQueues } from '../../infra/queue/jobs.js';
import { QueueService } from '../../infra/queue/queue.service.js';
import { Tracing } from '../../infra/tracing/tracing.service.js';
import { AppError } from '../errors/app-error.js';
import { type Admission, type Task, type TaskHooks, type TaskKind, type TaskState, TASK_HOOKS } from './task-kind.js';
import { TaskEnds } from './task-ends.js';
import { TaskIntake } from './task-intake.js';
import { TaskLifecycle } from './task-lifecycle.js';
import { TaskRunner } from './task-runner.js';
import { type NewTaskRow, TaskRepository } from './task.repository.js';
import { TaskStatesRepository } from './task-states.repository.js';

/** A task to accept: what its kind built from the request. */
export interface Submission<P> {
  owner: string;
  params: P;
  /** The caller's own id for it, unique per owner and kind, and the name its API gives that field (for the conflict's message). */
  externalId?: { value: string; field: string } | null;
  callbackUrl?: string | null;
  baseUrl?: string | null;
  /** The task or clip it continues or combines. */
  parentId?: string | null;
  /** Its id, when the kind needs it before acceptance (the key of an input object). */
  id?: string;
  /** Rows of the kind's own tables that belong to it (an input image), written in the same statement. */
  details?: DetailRows[];
  /**
   * Its request is held until its end (holdUntilEnded): the caller learns nothing before the end's commit,
   * which is flushed to disk, so its acceptance commits without waiting for the disk (UNFLUSHED_COMMIT).
   */
  held?: boolean;
}

/** How long a door that answers a task's result itself holds the request, past the task's deadline, unless its kind's holdS says. */
const HOLD_MARGIN_S = 15;

/**
 * What a request held for its task's end learns: the task ended (succeeded or failed; with `output`, what
 * its step made, when it ended on this instance: the bytes in hand, already stored), was deleted, or still
 * runs after `holdS` or once the caller left.
 */
export type Held<P, R> = { ended: Task<P, R>; output?: unknown } | { deleted: true } | { timedOut: true; holdS: number };

/** Who holds a request: gone once `destroyed`; an HTTP response also says when it closes. */
export interface HeldCaller {
  readonly destroyed: boolean;
  once?(event: 'close', listener: () => void): unknown;
  off?(event: 'close', listener: () => void): unknown;
}

/** Something done while a request is held, every `everyMs` (a stream's partial results), besides the wait for the end. */
export interface WhileHeld {
  everyMs: number;
  run(): Promise<void>;
}

/**
 * The task engine: accepts a task of any kind (admission, the row, its detail rows and its job in one
 * statement), deletes one, and runs every kind's queue on instances with workers. What a kind does lives
 * in its TaskKind; the lifecycle (TaskRunner, TaskSweeper, TaskLifecycle's hooks) is the same for all.
 */
@Injectable()
export class TaskEngine implements OnApplicationBootstrap {
  constructor(
    private readonly config: AppConfig,
    private readonly queue: QueueService,
    private readonly intake: TaskIntake,
    private readonly states: TaskStatesRepository,
    private readonly lifecycle: TaskLifecycle,
    private readonly runner: TaskRunner,
    private readonly tracing: Tracing,
    private readonly tasks: TaskRepository,
    private readonly ends: TaskEnds,
    @Inject(TASK_HOOKS) private readonly hooks: TaskHooks,
  ) {}

  /** Every kind's queue exists on every instance before the first request; instances with workers consume them. */
  async onApplicationBootstrap(): Promise<void> {
    await this.queue.createQueues(taskQueues(this.lifecycle.kinds.map((kind) => kind.definition.name)));
    if (!this.config.runsWorkers) return;
    for (const kind of this.lifecycle.kinds) {
      // a relayed step mostly waits on its upstream: it runs with the relays' own concurrency, not a core's slot
      const relayed = this.config.kinds[kind.definition.name]?.provider === 'relay';
      const concurrency = relayed ? this.config.relay.concurrency : this.config.workerConcurrency;
      await this.queue.work(taskJobName(kind.definition.name), concurrency, ({ taskId, polled }, job) => this.runner.run(kind, taskId, job, polled));
    }
  }

  /**
   * Accepts a task: its owner's limits admit it (its kind prices it), and the row, its detail rows and its
   * job are written in one statement (with the other submissions of the moment: TaskIntake), so
   * none exists without the others. Its deadline counts from its first start. A refusal throws the error
   * the hooks give it; a duplicate external id is a CONFLICT. Where a worker of its kind on this instance
   * waits for work, the job is written taken and the step starts at once (QueueService.reserve): a request
   * held for its task's end waits for no fetch.
   */
  async submit<P extends object, R>(kind: TaskKind<P, R>, input: Submission<P>): Promise<Task<P, R>> {
    const name = kind.definition.name;
    const price = kind.price(input.params);
    const createdAt = new Date();
    const row: NewTaskRow = {
      id: input.id ?? randomUUID(),
      kind: name,
      owner: input.owner,
      externalId: input.externalId?.value ?? null,
      params: input.params,
      callbackUrl: input.callbackUrl ?? null,
      baseUrl: input.baseUrl ?? null,
      parentId: input.parentId ?? null,
      ...price,
      jobId: randomUUID(),
      createdAt,
      deadlineAt: new Date(createdAt.getTime() + this.config.kinds[name].timeoutS * 1000),
      // the request's trace, which the task's steps and notifications continue wherever they run
      traceParent: this.tracing.traceParent(),
    };
    // an external id that is the task_id of another of the owner's tasks of this kind could never be read by it
    // (a record route takes either, and the id wins): refused as a used one is
    if (input.externalId && (await this.tasks.findForOwner(name, input.owner, input.externalId.value))) {
      throw new AppError('CONFLICT', `${input.externalId.field} "${input.externalId.value}" is the task_id of another of your tasks`);
    }
    // a worker here whose queue is empty runs the task at once: its job is written taken, with no fetch or wake between
    const slot = this.queue.reserve(taskJobName(name));
    let admission: Admission;
    try {
      admission = await this.intake.accept({ ...row, jobTaken: slot !== null, unflushed: input.held === true }, input.details ?? [], price);
    } catch (err) {
      if (slot) this.queue.release(slot);
      if ((err as { code?: string }).code === '23505' && input.externalId) {
        throw new AppError('CONFLICT', `${input.externalId.field} "${input.externalId.value}" is already used by another of your tasks`);
      }
      throw err;
    }
    const refusal = this.hooks.admissionOutcome(input.owner, name, price, admission);
    if (refusal) {
      if (slot) this.queue.release(slot);
      throw refusal;
    }
    // its step's spans continue the request's trace through the row's traceparent, as on any instance
    if (slot) this.tracing.detached(() => this.queue.runTaken(slot, { id: row.jobId, data: { taskId: row.id }, priority: -admission.slotsBefore }));
    else this.queue.jobsAdded(taskJobName(name));
    return {
      ...row,
      params: input.params,
      state: 'queued',
      message: null,
      result: null,
      channelId: null,
      attempts: 0,
      leaseOwner: null,
      leaseUntil: null,
      upstreamId: null,
      submitStartedAt: null,
      upstreamCallback: false,
      upstreamCalledBack: false,
      upstreamSince: null,
      updatedAt: createdAt,
      startedAt: null,
      finishedAt: null,
      mediaExpiredAt: null,
      deletedAt: null,
    };
  }

  /**
   * Deletes the owner's task of this kind: it leaves the API and stays for usage; one that has not finished
   * ends failed and gives back its slots and credits. False when there is no such task.
   */
  async deleteForOwner(kind: TaskKind, owner: string, id: string): Promise<boolean> {
    if (!isUUID(id)) return false;
    const deleted = await this.states.deleteForOwner(kind.definition.name, owner, id, 'deleted by its owner before it finished', (tx, ids, to) => this.hooks.settle(tx, ids, to));
    if (deleted) this.ends.announce([id]);
    return deleted;
  }

  /**
   * Holds a request until the owner's task `id` ends: woken by its end (TaskEnds: at once on this instance,
   * through NOTIFY from another), with a read of its row as the safety net; for as long as the kind's
   * holdS (0: its deadline and 15 s), or until `caller` has gone. `submitted`: the task as `submit` has just
   * accepted it (queued), so its row is not read before the first wait (an end heard meanwhile wakes it at once).
   */
  async holdUntilEnded<P, R>(kind: TaskKind, owner: string, id: string, caller: HeldCaller, meanwhile?: WhileHeld, submitted?: Task<P, R>): Promise<Held<P, R>> {
    const holdS = this.holdSeconds(kind);
    const until = Date.now() + holdS * 1000;
    const wait = this.ends.wait(id); // before the first read: an end between the read and the wait still wakes it
    // a caller that goes away ends its hold at once (the task goes on), not at the next read of the row
    const left = () => wait.poke();
    caller.once?.('close', left);
    try {
      for (let first = true; ; first = false) {
        const task = first && submitted?.id === id ? submitted : await this.tasks.findForOwner<P, R>(kind.definition.name, owner, id);
        if (!task) return { deleted: true };
        if (task.state === 'succeeded' || task.state === 'failed') return { ended: task };
        if (meanwhile) await meanwhile.run();
        const remaining = until - Date.now();
        if (caller.destroyed || remaining <= 0) return { timedOut: true, holdS };
        const woken = await wait.next(Math.min(remaining, meanwhile ? meanwhile.everyMs : wait.pauseMs()));
        // ended here: the row as the step left it, and what it made, without reading either back
        if (typeof woken === 'object') return { ended: woken.task as Task<P, R>, output: woken.output };
      }
    } finally {
      wait.cancel();
      caller.off?.('close', left);
    }
  }

  /**
   * A task still under way that the same request (its `request_fingerprint`, which the door stored in its params)
   * made, and whose own hold has passed: a retry of a request answered 504 (held past its hold while the task
   * went on), which a client's SDK sends again by itself, is held on that task rather than made a second one.
   * Only tasks at least the hold old (their first request has been answered) and younger than their deadline
   * and the hold; null when none.
   */
  findRetried<P, R>(kind: TaskKind, owner: string, fingerprint: string): Promise<Task<P, R> | null> {
    const holdS = this.holdSeconds(kind);
    return this.tasks.findUnendedByFingerprint<P, R>(kind.definition.name, owner, fingerprint, holdS, this.config.kinds[kind.definition.name].timeoutS + holdS);
  }

  /** How long a door that answers a task's end holds its request: the kind's holdS, or its deadline and HOLD_MARGIN_S. */
  private holdSeconds(kind: TaskKind): number {
    const settings = this.config.kinds[kind.definition.name];
    return Number(settings.options.holdS) || settings.timeoutS + HOLD_MARGIN_S;
  }

  /** The state as the kind's API names it. */
  publicState(kind: TaskKind, state: TaskState): string {
    return kind.definition.states[state];
  }
}
