import { Injectable } from '@nestjs/common';
import type { TaskLease } from '../../common/tasks/task-runner.js';
import { Prisma, type VideoGeneration, type VideoKeyframe } from '../../generated/prisma/client.js';
import { PrismaService } from '../../infra/prisma/prisma.service.js';
import { type SqlExecutor, sqlExecutorOf } from '../../infra/prisma/sql-executor.js';
import { type InTransaction, TaskTable } from '../../infra/prisma/task-table.js';

export type GenerationRow = VideoGeneration & { keyframes: VideoKeyframe[] };
export type NewKeyframe = Pick<VideoKeyframe, 'id' | 'position' | 'kind' | 'url' | 'sourceGenerationId'>;
export type NewGeneration = Pick<
  VideoGeneration,
  'id' | 'jobId' | 'owner' | 'prompt' | 'aspectRatio' | 'loop' | 'enhance' | 'model' | 'resolution' | 'duration' | 'callbackUrl' | 'baseUrl' | 'createdAt' | 'deadlineAt'
> & { concepts: { key: string }[] | null };

const WITH_KEYFRAMES = { keyframes: true } as const;

@Injectable()
export class VideoRepository {
  /** The guarded state changes: pending → processing → completed | failed. */
  readonly states: TaskTable;
  /** What the task runner uses: claim, heartbeat, release, fail. */
  readonly lease: TaskLease<GenerationRow>;
  /** Set by the module to act inside each state change's transaction (notifications). */
  onChange?: InTransaction;

  constructor(private readonly prisma: PrismaService) {
    this.states = new TaskTable(prisma, { table: 'video_generations', status: 'state', waiting: 'pending', processing: 'dreaming', done: 'completed', message: 'failure_reason' });
    this.lease = this.states.lease((id) => this.findById(id), () => this.onChange);
  }

  /** The generation, its keyframe media and its job, in one transaction. */
  createGeneration(generation: NewGeneration, keyframes: NewKeyframe[], enqueue: (db: SqlExecutor, id: string) => Promise<void>): Promise<GenerationRow> {
    return this.prisma.$transaction(async (tx) => {
      const row = await tx.videoGeneration.create({
        data: { ...generation, concepts: generation.concepts ?? Prisma.DbNull, updatedAt: generation.createdAt, keyframes: { create: keyframes } },
        include: WITH_KEYFRAMES,
      });
      await enqueue(sqlExecutorOf(tx), row.id);
      return row;
    });
  }

  /** Which of these ids are generations of this owner. */
  async findOwnedIds(owner: string, ids: string[]): Promise<Set<string>> {
    const rows = await this.prisma.videoGeneration.findMany({ where: { owner, id: { in: ids } }, select: { id: true } });
    return new Set(rows.map((r) => r.id));
  }

  /** Of these generations, those with a callback_url (read inside the transaction of their state change). */
  findWithCallback(ids: string[], tx: Prisma.TransactionClient): Promise<GenerationRow[]> {
    return tx.videoGeneration.findMany({ where: { id: { in: ids }, callbackUrl: { not: null } }, include: WITH_KEYFRAMES });
  }

  findById(id: string): Promise<GenerationRow | null> {
    return this.prisma.videoGeneration.findUnique({ where: { id }, include: WITH_KEYFRAMES });
  }

  findForOwner(owner: string, id: string): Promise<GenerationRow | null> {
    return this.prisma.videoGeneration.findFirst({ where: { id, owner }, include: WITH_KEYFRAMES });
  }

  /** A page of the owner's generations, newest first, and how many there are in all. */
  async listForOwner(owner: string, limit: number, offset: number): Promise<{ rows: GenerationRow[]; total: number }> {
    const [rows, total] = await this.prisma.$transaction([
      this.prisma.videoGeneration.findMany({ where: { owner }, include: WITH_KEYFRAMES, orderBy: [{ createdAt: 'desc' }, { id: 'desc' }], take: limit, skip: offset }),
      this.prisma.videoGeneration.count({ where: { owner } }),
    ]);
    return { rows, total };
  }

  /** Deletes the owner's generation (and its keyframes); false when there is none. */
  async deleteForOwner(owner: string, id: string): Promise<boolean> {
    const { count } = await this.prisma.videoGeneration.deleteMany({ where: { id, owner } });
    return count === 1;
  }

  markCompleted(id: string, worker: string): Promise<boolean> {
    return this.states.finish(id, worker, {}, this.onChange);
  }
}
