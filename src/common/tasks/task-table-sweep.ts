import type { JobPayloads } from '../../infra/queue/jobs.js';
import { orphanGraceS, type QueueService } from '../../infra/queue/queue.service.js';
import type { EnqueueTask, InTransaction, TaskTable } from '../../infra/prisma/task-table.js';
import type { Sweepable } from './task-sweeper.js';

export type TaskJobName = 'expand.run' | 'video.run' | 'audio.run';

export interface TaskTableSweepOptions<N extends TaskJobName> {
  kind: string;
  states: TaskTable;
  queue: QueueService;
  job: N;
  payload(id: string): JobPayloads[N];
  leaseS: number;
  timeoutReason(): string;
  /** The hook that writes notifications in each state change's transaction. */
  onChange(): InTransaction | undefined;
}

/** What the sweeper does for one task table: deadlines, dead workers' leases, orphaned jobs. */
export class TaskTableSweep<N extends TaskJobName> implements Sweepable {
  readonly kind: string;

  constructor(private readonly options: TaskTableSweepOptions<N>) {
    this.kind = options.kind;
  }

  /** Sends the job of one task inside a transaction, with the id recorded on the task (and a queue priority). */
  readonly enqueue: EnqueueTask = async (db, id, jobId, priority) => {
    await this.options.queue.send(this.options.job, this.options.payload(id), { db, id: jobId, priority });
  };

  async failOverdue(): Promise<number> {
    return (await this.options.states.failOverdue(this.options.timeoutReason(), this.options.onChange())).length;
  }

  async requeueAbandoned(): Promise<number> {
    return (await this.options.states.requeueAbandoned(this.options.leaseS, this.enqueue)).length;
  }

  async requeueOrphaned(): Promise<number> {
    return (await this.options.states.requeueOrphaned(this.options.job, orphanGraceS(this.options.leaseS), this.enqueue)).length;
  }

  expireLeases(): Promise<number> {
    return this.options.states.expireLeases();
  }

  async handBack(worker: string): Promise<number> {
    return (await this.options.states.handBack(worker, this.options.leaseS, this.enqueue)).length;
  }
}
