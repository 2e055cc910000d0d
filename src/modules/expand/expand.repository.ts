import { Injectable } from '@nestjs/common';
import { isUUID } from 'class-validator';
import { AppError } from '../../common/errors/app-error.js';
import type { TaskLease } from '../../common/tasks/task-runner.js';
import type { ExpandTask, Prisma } from '../../generated/prisma/client.js';
import { AppConfig } from '../../infra/config/app-config.js';
import { copyByteaToFile } from '../../infra/prisma/bytea-copy.js';
import { PrismaService } from '../../infra/prisma/prisma.service.js';
import { type AdmissionSql, insertAdmittedTask, type JobSql, snakeColumns } from '../../infra/prisma/task-insert.js';
import { type InTransaction, TaskTable } from '../../infra/prisma/task-table.js';
import { mediaEndRows, type NewMedia } from '../media/media.repository.js';

export type ExpandTaskRow = ExpandTask;
/** What the short task record (the create answer) is made of. */
export type ExpandTaskRecordRow = Pick<ExpandTaskRow, 'id' | 'status' | 'externalTaskId' | 'createdAt' | 'updatedAt'>;

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
  /** The input image as an object of the media store (STORAGE_DRIVER=s3) instead of bytes in the database. */
  imageObject?: NewMedia;
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
    this.states = new TaskTable(prisma, { table: 'expand_tasks', status: 'status', waiting: 'submitted', processing: 'processing', done: 'succeed', message: 'status_message', maxRunning: config.maxRunning.expand, notifyColumn: 'callback_url' });
    this.lease = this.states.lease((id) => this.findById(id), () => this.onChange, (row) => row as ExpandTaskRow);
  }

  /**
   * Admits the task, inserts it with its decoded image, and sends its job, in one statement; a duplicate
   * external_task_id of the owner is a CONFLICT.
   */
  async createTask(task: NewExpandTask, admission: AdmissionSql, job: JobSql): Promise<ExpandTaskRecordRow> {
    const { imageBytes, imageObject, ...fields } = task;
    try {
      const row = await insertAdmittedTask<{ status: ExpandTaskRow['status'] }>(
        this.prisma.pool,
        {
          table: 'expand_tasks',
          id: task.id,
          columns: snakeColumns({ ...fields, updatedAt: task.createdAt }),
          children: [
            { table: 'expand_inputs', rows: imageBytes ? [{ task_id: task.id, bytes: imageBytes }] : [] },
            { table: 'media', rows: imageObject ? [snakeColumns(imageObject)] : [] },
          ],
          returning: 'status',
        },
        admission,
        job,
      );
      return { id: task.id, status: row.status, externalTaskId: task.externalTaskId, createdAt: task.createdAt, updatedAt: task.createdAt };
    } catch (err) {
      if ((err as { code?: string }).code === '23505') {
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

  /** The submitted image, as stored, into `file` (see copyByteaToFile); its size, or null when there is none. */
  copyInputToFile(taskId: string, file: string): Promise<number | null> {
    return copyByteaToFile(this.prisma.pool, { table: 'expand_inputs', column: 'bytes', key: 'task_id' }, taskId, file);
  }

  /** processing → succeed, with the result's media rows (written only when the task did change). */
  markSucceeded(id: string, worker: string, media: NewMedia[]): Promise<boolean> {
    return this.states.finish(id, worker, {}, this.onChange, [mediaEndRows(media)]);
  }
}
