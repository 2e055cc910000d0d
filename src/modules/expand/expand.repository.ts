import { Injectable } from '@nestjs/common';
import { isUUID } from 'class-validator';
import { AppError } from '../../common/errors/app-error.js';
import type { TaskLease } from '../../common/tasks/task-runner.js';
import { Prisma, type ExpandTask } from '../../generated/prisma/client.js';
import { AppConfig } from '../../infra/config/app-config.js';
import { PrismaService } from '../../infra/prisma/prisma.service.js';
import { sqlExecutorOf } from '../../infra/prisma/sql-executor.js';
import { type AdmitTask, type EnqueueTask, type InTransaction, TaskTable } from '../../infra/prisma/task-table.js';

export type ExpandTaskRow = ExpandTask;

export interface NewExpandTask {
  id: string;
  /** The id of the job sent with it (see TaskTable.requeueOrphaned). */
  jobId: string;
  owner: string;
  /** Slots it holds until it ends (n) and credits charged. */
  slots: number;
  credits: number;
  externalTaskId: string | null;
  imageUrl: string | null;
  imageBytes: Buffer | null;
  imageFormat: string | null;
  imageWidth: number | null;
  imageHeight: number | null;
  upRatio: number;
  bottomRatio: number;
  leftRatio: number;
  rightRatio: number;
  prompt: string | null;
  n: number;
  callbackUrl: string | null;
  watermark: boolean;
  baseUrl: string | null;
  createdAt: Date;
  deadlineAt: Date;
}

@Injectable()
export class ExpandRepository {
  /** The guarded state changes: submitted → processing → succeed | failed. */
  readonly states: TaskTable;
  /** What the task runner uses: claim, heartbeat, release, fail. */
  readonly lease: TaskLease<ExpandTaskRow>;
  /** Set by the module to act inside each state change's transaction (notifications). */
  onChange?: InTransaction;

  constructor(
    private readonly prisma: PrismaService,
    config: AppConfig,
  ) {
    this.states = new TaskTable(prisma, { table: 'expand_tasks', status: 'status', waiting: 'submitted', processing: 'processing', done: 'succeed', message: 'status_message', maxRunning: config.maxRunning.expand });
    this.lease = this.states.lease((id) => this.findById(id), () => this.onChange);
  }

  /**
   * Admits the task, inserts it with its decoded image, and sends its job, in one transaction; a duplicate
   * external_task_id of the owner is a CONFLICT.
   */
  async createTask(task: NewExpandTask, admit: AdmitTask, enqueue: EnqueueTask): Promise<ExpandTaskRow> {
    const { imageBytes, ...columns } = task;
    try {
      return await this.prisma.$transaction(async (tx) => {
        const { priority } = await admit(tx);
        const row = await tx.expandTask.create({
          data: { ...columns, updatedAt: task.createdAt, ...(imageBytes ? { input: { create: { bytes: imageBytes as Uint8Array<ArrayBuffer> } } } : {}) },
        });
        await enqueue(sqlExecutorOf(tx), row.id, task.jobId, priority);
        return row;
      });
    } catch (err) {
      if (err instanceof Prisma.PrismaClientKnownRequestError && err.code === 'P2002') {
        throw new AppError('CONFLICT', `external_task_id "${task.externalTaskId}" is already used by another of your tasks`);
      }
      throw err;
    }
  }

  /** By task_id or, as in Kling, by the owner's external_task_id. */
  findForOwner(owner: string, idOrExternalId: string): Promise<ExpandTaskRow | null> {
    const byId = isUUID(idOrExternalId) ? [{ id: idOrExternalId }] : [];
    return this.prisma.expandTask.findFirst({ where: { owner, OR: [...byId, { externalTaskId: idOrExternalId }] }, orderBy: { createdAt: 'asc' } });
  }

  /** The owner's tasks, newest first. */
  listForOwner(owner: string, page: { skip: number; take: number }, externalTaskId?: string): Promise<ExpandTaskRow[]> {
    return this.prisma.expandTask.findMany({
      where: { owner, ...(externalTaskId !== undefined ? { externalTaskId } : {}) },
      orderBy: [{ createdAt: 'desc' }, { id: 'desc' }],
      skip: page.skip,
      take: page.take,
    });
  }

  /** Of these tasks, those with a callback_url (read inside the transaction of their status change). */
  findWithCallback(ids: string[], tx: Prisma.TransactionClient): Promise<ExpandTaskRow[]> {
    return tx.expandTask.findMany({ where: { id: { in: ids }, callbackUrl: { not: null } } });
  }

  findById(id: string): Promise<ExpandTaskRow | null> {
    return this.prisma.expandTask.findUnique({ where: { id } });
  }

  async findInputBytes(taskId: string): Promise<Buffer | null> {
    const input = await this.prisma.expandInput.findUnique({ where: { taskId } });
    return input ? Buffer.from(input.bytes) : null;
  }

  markSucceeded(id: string, worker: string): Promise<boolean> {
    return this.states.finish(id, worker, {}, this.onChange);
  }
}
