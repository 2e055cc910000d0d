import { randomUUID } from 'node:crypto';
import { Injectable, Logger } from '@nestjs/common';
import { AppConfig } from '../../infra/config/app-config.js';
import { DatabaseStatus } from '../../infra/database/database-status.service.js';
import { MetricsService } from '../../infra/metrics/metrics.service.js';
import { taskJobName } from '../../infra/queue/jobs.js';
import { type JobResult, QueueService } from '../../infra/queue/queue.service.js';
import type { PolledStatus } from '../../infra/relay/upstream-client.js';
import { StepScope, StepTimeLimit } from '../../infra/process/step-scope.js';
import { Tracing } from '../../infra/tracing/tracing.service.js';
import { WorkDirService } from '../../infra/workdir/work-dir.service.js';
import { type StepContext, type StepOutcome, type Task, TaskFailure, type TaskKind } from './task-kind.js';
import type { PollSchedule } from './poll-schedule.js';
import { TaskEnds } from './task-ends.js';
import { TaskLifecycle } from './task-lifecycle.js';
import { TaskRepository } from './task.repository.js';
import { type Ended, type Holder, LeaseLost, succeededBy, TaskStatesRepository } from './task-states.repository.js';

/** How long a consumer fetches no more work after a task had to wait for the upstream cap. */
export const DEFER_BACKOFF_MS = 1000;

/** A task whose step keeps failing unexpectedly ends failed instead of retrying forever. */
export const MAX_ATTEMPTS = 5;

/**
 * After a step's time limit its child processes are killed at once and its signal aborts; its own code is
 * given this long to notice before its work files are removed from under it (the task has failed already).
 */
const STEP_STOP_GRACE_MS = 5000;

const TIMED_OUT = Symbol('the step ran out of time');

type Durably = <V>(work: () => Promise<V>) => Promise<V>;

/**
 * Runs one step of a task of any kind under a lease, so that any number of workers on any number of
 * instances can share the work: each task is held by one worker at a time, its lease is renewed by a
 * heartbeat, and a worker that dies (kill -9) simply stops renewing, so the sweeper hands the task to
 * another. Every state change is guarded by the lease, so a late or duplicate worker never moves a
 * finished task.
 *
 * A database outage is weather: the claim and every state change wait for the database to answer again
 * (a finished result is not thrown away), and a step that failed only because the database went away
 * is put back to run again, not counted as a failure.
 */
@Injectable()
export class TaskRunner {
  private readonly logger = new Logger(TaskRunner.name);
  /** This instance's worker identity (lease owner). */
  readonly worker = `${process.pid}-${randomUUID().slice(0, 8)}`;
  /** Set at shutdown: no claim is sent any more (see stopClaiming). */
  private closing = false;
  /** Claims sent and not yet answered. */
  private readonly claims = new Set<Promise<unknown>>();
  /** The scopes of the steps running now. */
  private readonly steps = new Set<StepScope>();
  private readonly pollSchedule: PollSchedule;

  constructor(
    private readonly config: AppConfig,
    private readonly database: DatabaseStatus,
    private readonly metrics: MetricsService,
    private readonly queue: QueueService,
    private readonly workDir: WorkDirService,
    private readonly tasks: TaskRepository,
    private readonly states: TaskStatesRepository,
    private readonly lifecycle: TaskLifecycle,
    private readonly tracing: Tracing,
    private readonly ends: TaskEnds,
  ) {
    this.pollSchedule = { pollS: config.relay.pollMs / 1000, callbackPollS: config.relay.callbackPollS };
  }

  /**
   * Runs one step of the task, with work files that live as long as the step. A task that cannot start
   * yet (its kind's upstream cap is reached) is sent back to the queue with its job's `priority`, and the
   * consumer is asked to back off for a moment.
   *
   * With tracing, a claimed step is a span (from the claim to the task's new state) in the trace of the
   * request that created the task, whichever instance runs it: its traceparent is on the row. A step that
   * ends its task, or has it watched, completes `job` in the same statement, and says so (`completed`), so
   * the queue writes no completion of its own.
   */
  run(kind: TaskKind, id: string, job: { id: string; priority: number }, polled?: PolledStatus): Promise<JobResult> {
    const { priority } = job;
    return this.workDir.inScope(async (files) => {
      const claimedFrom = Date.now();
      const durably: Durably = (work) => this.database.retryWhileUnavailable(work);
      if (this.closing) {
        // Shutting down: this job's task goes to another instance now rather than be claimed here.
        await durably(() => this.states.giveBack(id, priority));
        return;
      }
      const claiming = durably(() => this.states.claim(id, this.worker, this.config.workerLeaseS, this.lifecycle.claimRules(kind), this.lifecycle.onChange));
      this.claims.add(claiming);
      const claim = await claiming.finally(() => this.claims.delete(claiming));
      if (!claim) return; // finished, deleted, or held by a live worker: nothing to do
      if (claim.kind === 'deferred') {
        await durably(() => this.states.defer(id, priority));
        return { backOffMs: DEFER_BACKOFF_MS };
      }
      const { task } = claim;
      const labels = { owner: task.owner, operation: kind.definition.name };
      if (claim.firstStart) this.metrics.queueWait.observe(labels, claim.waitedS);
      this.metrics.tasksRunning.inc(labels);
      try {
        const span = { parent: task.traceParent, startTime: claimedFrom, work: true, attributes: { 'mgw.task.id': id, 'mgw.task.kind': labels.operation, 'mgw.task.attempt': task.attempts } };
        const jobCompleted = await this.tracing.inSpan(`task.step ${labels.operation}`, span, () => this.runClaimed(kind, task, job.id, files, durably, polled));
        if (jobCompleted) return { completed: true };
      } finally {
        this.metrics.tasksRunning.dec(labels);
      }
    });
  }

  /** Claims sent and not yet answered. */
  get claimsInFlight(): number {
    return this.claims.size;
  }

  /**
   * At shutdown, once the queue fetches no more jobs: no claim is sent any more (a job taken but not
   * claimed is given to the other instances), and this resolves when the claims already sent have been
   * answered, or at `deadline`. Then every task this worker holds is known to the database, and the
   * hand-back (TaskSweeper.handBack) reaches them all. Answers how many claims are still unanswered.
   */
  async stopClaiming(deadline: number): Promise<number> {
    this.closing = true;
    while (this.claims.size > 0 && Date.now() < deadline) {
      await Promise.race([Promise.allSettled([...this.claims]), new Promise((resolve) => setTimeout(resolve, Math.max(0, deadline - Date.now())).unref())]);
    }
    return this.claims.size;
  }

  /**
   * Runs the claimed task's step within its time limit (what is left of the task's deadline), in a StepScope:
   * when the step ends, fails or runs out of time, the child processes it started are killed; out of time,
   * the task fails on its deadline at once (its slot freed) without waiting for the step's code to return.
   */
  private async runClaimed(kind: TaskKind, task: Task, jobId: string, files: StepContext['files'], durably: Durably, polled?: PolledStatus): Promise<boolean> {
    const { id } = task;
    // this claim, as every write of the step names it: a later claim of the task, this worker's too, counts a new
    // attempt; and the job it runs under, which the task's end (or its watch) completes
    const holder: Holder = { worker: this.worker, attempt: task.attempts, jobId };
    // whether the statement that ended the task (or had it watched) completed this job too (what runClaimed answers)
    let jobCompleted = false;
    const scope = new StepScope();
    this.steps.add(scope);
    const ctx: StepContext = { files, marks: { ...this.states.submitMarks(id, holder), polled }, signal: scope.signal };
    const leaseS = this.config.workerLeaseS;
    const fail = async (reason: string) => {
      const failed = await durably(() => this.states.fail(id, holder, reason, this.lifecycle.onChange, this.lifecycle.settle));
      if (failed) {
        jobCompleted ||= failed.jobCompleted;
        this.ends.announce([id], { task: { ...task, state: 'failed', message: reason, finishedAt: new Date(), leaseOwner: null, leaseUntil: null } });
        this.freedSlot(kind, failed);
        return true;
      }
      // Nothing changed: the sweeper or another claim ended or holds the task, or an earlier try of this same
      // fail ended it (its commit landed, its answer was lost with the connection). An ended task is announced
      // as stored: in the last case no one else would (a second word of an end already announced wakes no one
      // twice). Which of them it was cannot be told from the row, so this fail is not counted as the one.
      const row = await durably(() => this.tasks.findById(id));
      if (row && (row.state === 'failed' || row.state === 'succeeded') && !row.deletedAt) {
        this.ends.announce([id], { task: row });
        this.freedSlot(kind, { wokeWaiter: true, jobCompleted: false });
      }
      return false;
    };
    if (task.deadlineAt.getTime() <= Date.now()) {
      await fail(this.lifecycle.timeoutReason(kind));
      return jobCompleted;
    }
    // A beat that finds the claim gone (the task ended, deleted, or taken over after its lease ran out) stops the
    // step: its requests are aborted and its processes killed, rather than run on beside the claim that has it now.
    const beat = setInterval(() => {
      this.states.heartbeat(id, holder, leaseS).then(
        (held) => held || scope.close(new LeaseLost(id)),
        (err: unknown) => {
          if (!this.database.report(err)) this.logger.warn(`heartbeat failed for ${id}: ${String(err)}`);
        },
      );
    }, (leaseS * 1000) / 3);
    const limitMs = task.deadlineAt.getTime() - Date.now();
    try {
      let outcome: StepOutcome<unknown> | typeof TIMED_OUT;
      const stepping = scope.run(() => kind.step(task, ctx));
      try {
        outcome = await withinLimit(stepping, limitMs);
      } catch (err) {
        if (!(err instanceof TaskFailure) && (await this.database.confirm(err))) {
          // The step needed the database and it went away: not the task's fault. Put it back to run again.
          this.logger.warn(`task ${id} interrupted by a database outage; it will run again when the database answers`);
          await durably(() => this.states.releaseToNextStep(id, holder, 0, 0));
          return jobCompleted;
        }
        throw err;
      }
      if (outcome === TIMED_OUT) {
        scope.close(new StepTimeLimit(limitMs));
        this.tracing.annotate({ 'mgw.task.outcome': 'timed_out' });
        const failed = await fail(this.lifecycle.timeoutReason(kind));
        this.logger.warn({ msg: `task ${id}: its step ran past the task's deadline; ${failed ? 'it failed on it' : 'the sweeper had already ended it'}, and the step's processes were stopped`, task_id: id, kind: kind.definition.name, limit_ms: limitMs });
        if (!(await settlesWithin(stepping, STEP_STOP_GRACE_MS))) this.logger.warn(`task ${id}: its step did not return within ${STEP_STOP_GRACE_MS} ms of its time limit; its work files are removed anyway`);
        return jobCompleted;
      }
      this.tracing.annotate({ 'mgw.task.outcome': outcome.kind });
      switch (outcome.kind) {
        case 'done': {
          const finished = await durably(() => this.complete(kind, task, holder, outcome.result, ctx));
          if (finished) jobCompleted = finished.jobCompleted;
          else {
            // Too late (the deadline passed: fail it, if this claim still holds it) or taken over by another claim.
            const failed = await fail(this.lifecycle.timeoutReason(kind));
            this.logger.warn(`task ${id} finished too late; ${failed ? 'it failed on its deadline' : 'another worker or the sweeper had already ended it'}; result dropped`);
          }
          return jobCompleted;
        }
        case 'failed':
          await fail(outcome.reason);
          return jobCompleted;
        case 'wait':
          await durably(() => this.states.releaseToNextStep(id, holder, outcome.seconds + leaseS, outcome.seconds));
          this.queue.jobsDueIn(taskJobName(kind.definition.name), outcome.seconds);
          return jobCompleted;
        case 'busy':
          await durably(() => this.states.postpone(id, holder, outcome.seconds, leaseS));
          this.queue.jobsDueIn(taskJobName(kind.definition.name), outcome.seconds);
          return jobCompleted;
        case 'watch':
          return await durably(() => this.states.watch(id, holder, this.pollSchedule, outcome.minPollS ?? 0));
      }
    } catch (err) {
      // whatever a step stopped by its beat threw (an aborted request, a killed process), its claim was gone
      const lost = err instanceof LeaseLost ? err : scope.signal.reason instanceof LeaseLost ? scope.signal.reason : null;
      if (lost) {
        this.logger.warn(`task ${id}: ${lost.message}; this worker's step stopped`);
        return jobCompleted;
      }
      if (err instanceof TaskFailure) {
        await fail(err.message);
        return jobCompleted;
      }
      if (task.attempts >= MAX_ATTEMPTS) {
        this.logger.error({ msg: `task ${id} failed ${MAX_ATTEMPTS} times; giving up`, err });
        await fail('internal error while processing the task');
        return jobCompleted;
      }
      await durably(() => this.states.abandon(id, holder, 0));
      throw err; // the queue retries the job with backoff
    } finally {
      clearInterval(beat);
      scope.close();
      this.steps.delete(scope);
    }
  }

  /**
   * At shutdown, once the tasks this worker held have been handed back: the steps still running end (their
   * child processes killed, their requests aborted), so none outlives the process; their tasks run again
   * elsewhere.
   */
  endSteps(): number {
    const ending = this.steps.size;
    for (const scope of this.steps) scope.close(new Error('the instance is shutting down; the task was handed back'));
    return ending;
  }

  /** The task's end gave a task waiting for the slot it freed its job now (in the same statement): this instance's consumers take it at once. */
  private freedSlot(kind: TaskKind, ended: Ended): void {
    if (ended.wokeWaiter) this.queue.jobsAdded(taskJobName(kind.definition.name));
  }

  /**
   * Stores what the step produced and ends the task succeeded with it, while this claim (`holder`) holds
   * the lease; null if it no longer does. Then nothing names this step's objects (keyed by the claim), so
   * they are deleted, whoever ended the task or still holds it.
   */
  private async complete(kind: TaskKind, task: Task, holder: Holder, output: unknown, ctx: StepContext): Promise<Ended | null> {
    const success = await kind.store(task, output, ctx);
    const finished = await this.states.finish(task.id, holder, success.result, success.details, this.lifecycle.onChange, this.lifecycle.settle);
    if (finished) {
      const ended = { ...task, state: 'succeeded' as const, message: null, result: success.result === undefined ? task.result : success.result, finishedAt: new Date(), leaseOwner: this.worker, leaseUntil: null };
      this.ends.announce([task.id], { task: ended, output });
      this.logger.log({ msg: `${kind.definition.name} task succeeded`, task_id: task.id, kind: kind.definition.name });
      this.freedSlot(kind, finished);
      return finished;
    }
    // None of this claim's rows name its objects, unless an earlier try of this same completion ended the task
    // (its commit landed, its answer was lost with the connection, durably ran it again, and its objects were
    // written again in place): then the task did succeed by this step, and it is announced as such.
    const row = await this.tasks.findById(task.id);
    if (!row || !succeededBy(row, holder)) {
      await success.discard();
      return null;
    }
    if (row.deletedAt) return null; // deleted by its owner since: the delete told its waiters
    this.ends.announce([task.id], { task: row, output });
    this.logger.log({ msg: `${kind.definition.name} task succeeded (its end committed on a try whose answer was lost)`, task_id: task.id, kind: kind.definition.name });
    // whether that end gave a waiting task its slot is not known here: this instance's consumers look once
    this.freedSlot(kind, { wokeWaiter: true, jobCompleted: false });
    return { wokeWaiter: true, jobCompleted: false };
  }
}

/** The step's outcome, or TIMED_OUT once `ms` have passed first (setTimeout's ceiling is about 24.8 days; a deadline is 7 at most). */
function withinLimit<T>(work: Promise<T>, ms: number): Promise<T | typeof TIMED_OUT> {
  let timer: NodeJS.Timeout | undefined;
  const limit = new Promise<typeof TIMED_OUT>((resolve) => (timer = setTimeout(() => resolve(TIMED_OUT), Math.min(Math.max(0, ms), 2 ** 31 - 1))));
  return Promise.race([work, limit]).finally(() => clearTimeout(timer));
}

/** Whether `work` settles (either way) within `ms`. */
async function settlesWithin(work: Promise<unknown>, ms: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const settled = work.then(() => true, () => true);
  const late = new Promise<false>((resolve) => (timer = setTimeout(() => resolve(false), ms)));
  return Promise.race([settled, late]).finally(() => clearTimeout(timer));
}
