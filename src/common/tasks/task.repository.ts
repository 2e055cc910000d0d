import { Injectable } from '@nestjs/common';
import { isUUID } from 'class-validator';
import type { Prisma } from '../../generated/prisma/client.js';
import { PrismaService } from '../../infra/prisma/prisma.service.js';
import { type AdmissionSql, type DetailRows, insertAdmittedTask, type JobSql } from '../../infra/prisma/task-insert.js';
import type { Task, TaskState, TaskTx } from './task-kind.js';

/** A task as accepted: the row's columns that are set at acceptance. */
export interface NewTaskRow {
  id: string;
  kind: string;
  owner: string;
  externalId: string | null;
  params: object;
  callbackUrl: string | null;
  baseUrl: string | null;
  parentId: string | null;
  slots: number;
  credits: number;
  /** The id of the job sent with it (see TaskStatesRepository.requeueOrphaned). */
  jobId: string;
  createdAt: Date;
  deadlineAt: Date;
}

/** An owner's tasks of one kind, newest first: a page, and optionally only those with one external id. */
export interface TaskPage {
  skip: number;
  take: number;
  externalId?: string;
}

/** Reads of the task table, and the insert of an accepted task. Deleted tasks are left out of an owner's reads. */
@Injectable()
export class TaskRepository {
  constructor(private readonly prisma: PrismaService) {}

  /**
   * Admits, inserts and enqueues the task, with its detail rows, in one statement; answers the state it
   * was stored with. A duplicate external id raises the unique violation (23505).
   */
  async insertTask(task: NewTaskRow, details: DetailRows[], admission: AdmissionSql, job: JobSql): Promise<TaskState> {
    const row = await insertAdmittedTask<{ state: TaskState }>(
      this.prisma.pool,
      {
        table: 'tasks',
        id: task.id,
        columns: {
          id: task.id,
          kind: task.kind,
          owner: task.owner,
          external_id: task.externalId,
          params: JSON.stringify(task.params),
          callback_url: task.callbackUrl,
          base_url: task.baseUrl,
          parent_id: task.parentId,
          slots: task.slots,
          credits: task.credits,
          job_id: task.jobId,
          created_at: task.createdAt,
          updated_at: task.createdAt,
          deadline_at: task.deadlineAt,
        },
        details,
        returning: 'state',
      },
      admission,
      job,
    );
    return row.state;
  }

  async findById<P, R>(id: string): Promise<Task<P, R> | null> {
    return (await this.prisma.task.findUnique({ where: { id } })) as Task<P, R> | null;
  }

  /** The owner's task of `kind` with this id. */
  async findForOwner<P, R>(kind: string, owner: string, id: string): Promise<Task<P, R> | null> {
    if (!isUUID(id)) return null;
    return (await this.prisma.task.findFirst({ where: { id, kind, owner, deletedAt: null } })) as Task<P, R> | null;
  }

  /** By id or, as in Kling, by the owner's external id (the oldest, should both match). */
  async findForOwnerByIdOrExternalId<P, R>(kind: string, owner: string, idOrExternalId: string): Promise<Task<P, R> | null> {
    const byId = isUUID(idOrExternalId) ? [{ id: idOrExternalId }] : [];
    return (await this.prisma.task.findFirst({
      where: { kind, owner, deletedAt: null, OR: [...byId, { externalId: idOrExternalId }] },
      orderBy: { createdAt: 'asc' },
    })) as Task<P, R> | null;
  }

  /** A page of the owner's tasks of `kind`, newest first. */
  async listForOwner<P, R>(kind: string, owner: string, page: TaskPage): Promise<Task<P, R>[]> {
    return (await this.prisma.task.findMany({
      where: { kind, owner, deletedAt: null, ...(page.externalId !== undefined ? { externalId: page.externalId } : {}) },
      orderBy: [{ createdAt: 'desc' }, { id: 'desc' }],
      skip: page.skip,
      take: page.take,
    })) as Task<P, R>[];
  }

  /** Which of these ids are tasks of `kind` of this owner. */
  async findOwnedIds(kind: string, owner: string, ids: string[]): Promise<Set<string>> {
    const rows = await this.prisma.task.findMany({ where: { kind, owner, id: { in: ids.filter((id) => isUUID(id)) }, deletedAt: null }, select: { id: true } });
    return new Set(rows.map((r) => r.id));
  }

  /** These tasks as the transaction `tx` sees them (a state change building its notifications), in the order of `ids`. */
  async findManyInTx<P, R>(tx: TaskTx, ids: string[]): Promise<Task<P, R>[]> {
    const rows = (await (tx as Prisma.TransactionClient).task.findMany({ where: { id: { in: ids } } })) as Task<P, R>[];
    const byId = new Map(rows.map((r) => [r.id, r]));
    return ids.flatMap((id) => byId.get(id) ?? []);
  }
}
