import { Injectable } from '@nestjs/common';
import type { TaskLease } from '../../common/tasks/task-runner.js';
import type { Prisma, VideoGeneration, VideoKeyframe } from '../../generated/prisma/client.js';
import { AppConfig } from '../../infra/config/app-config.js';
import { PrismaService } from '../../infra/prisma/prisma.service.js';
import { sqlExecutorOf } from '../../infra/prisma/sql-executor.js';
import { type AdmissionSql, insertAdmittedTask, type JobSql, snakeColumns } from '../../infra/prisma/task-insert.js';
import { type InTransaction, TaskTable } from '../../infra/prisma/task-table.js';
import { mediaEndRows, type NewMedia } from '../media/media.repository.js';

export type GenerationRow = VideoGeneration & { keyframes: VideoKeyframe[] };
/** What a generation record (GET, the create answer) is made of. */
export type GenerationRecordRow = Pick<GenerationRow, 'id' | 'state' | 'model' | 'createdAt' | 'prompt' | 'aspectRatio' | 'enhance' | 'loop' | 'resolution' | 'duration' | 'concepts' | 'callbackUrl' | 'keyframes'>;
export type NewKeyframe = Pick<VideoKeyframe, 'id' | 'position' | 'kind' | 'url' | 'sourceGenerationId'>;
export type NewGeneration = Pick<
  VideoGeneration,
  'id' | 'jobId' | 'owner' | 'slots' | 'credits' | 'prompt' | 'aspectRatio' | 'loop' | 'enhance' | 'model' | 'resolution' | 'duration' | 'callbackUrl' | 'baseUrl' | 'createdAt' | 'deadlineAt'
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

  constructor(
    private readonly prisma: PrismaService,
    config: AppConfig,
  ) {
    this.states = new TaskTable(prisma, { table: 'video_generations', status: 'state', waiting: 'pending', processing: 'dreaming', done: 'completed', message: 'failure_reason', maxRunning: config.maxRunning.video, notifyColumn: 'callback_url' });
    this.lease = this.states.lease((id) => this.findById(id), () => this.onChange);
  }

  /** Admits the generation, inserts it with its keyframes, and sends its job, in one statement. */
  async createGeneration(generation: NewGeneration, keyframes: NewKeyframe[], admission: AdmissionSql, job: JobSql): Promise<GenerationRecordRow> {
    const row = await insertAdmittedTask<{ state: GenerationRow['state'] }>(
      this.prisma.pool,
      {
        table: 'video_generations',
        id: generation.id,
        columns: snakeColumns({ ...generation, concepts: generation.concepts ? JSON.stringify(generation.concepts) : null, updatedAt: generation.createdAt }),
        children: [{ table: 'video_keyframes', rows: keyframes.map((k) => snakeColumns({ ...k, generationId: generation.id })) }],
        returning: 'state',
      },
      admission,
      job,
    );
    return { ...generation, concepts: generation.concepts as GenerationRow['concepts'], state: row.state, keyframes: keyframes.map((k) => ({ ...k, generationId: generation.id })) };
  }

  /** Which of these ids are generations of this owner. */
  async findOwnedIds(owner: string, ids: string[]): Promise<Set<string>> {
    const rows = await this.prisma.videoGeneration.findMany({ where: { owner, id: { in: ids }, deletedAt: null }, select: { id: true } });
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
    return this.prisma.videoGeneration.findFirst({ where: { id, owner, deletedAt: null }, include: WITH_KEYFRAMES });
  }

  /**
   * A page of the owner's generations, newest first, and whether more follow (one more is read to know:
   * no count of all of them, which would grow with the owner's history).
   */
  async listForOwner(owner: string, limit: number, offset: number): Promise<{ rows: GenerationRow[]; hasMore: boolean }> {
    const rows = await this.prisma.videoGeneration.findMany({ where: { owner, deletedAt: null }, include: WITH_KEYFRAMES, orderBy: [{ createdAt: 'desc' }, { id: 'desc' }], take: limit + 1, skip: offset });
    return { rows: rows.slice(0, limit), hasMore: rows.length > limit };
  }

  /**
   * Deletes the owner's generation: it leaves the API, and stays for usage and credits. One that has not
   * finished ends failed, and `whenUnfinished` runs in the same transaction (giving back its slot and
   * credits). False when there is no such generation.
   */
  async deleteForOwner(owner: string, id: string, whenUnfinished: InTransaction): Promise<boolean> {
    return this.prisma.$transaction(async (tx) => {
      const rows = await tx.$queryRawUnsafe<{ unfinished: boolean }[]>(
        `UPDATE video_generations t SET deleted_at = now(), updated_at = now(),
           state = CASE WHEN old.unfinished THEN 'failed' ELSE t.state END,
           failure_reason = CASE WHEN old.unfinished THEN 'deleted by its owner before it finished' ELSE t.failure_reason END,
           finished_at = COALESCE(t.finished_at, now()),
           lease_owner = CASE WHEN old.unfinished THEN NULL ELSE t.lease_owner END,
           lease_until = CASE WHEN old.unfinished THEN NULL ELSE t.lease_until END
         FROM (SELECT id, state IN ('pending', 'dreaming') AS unfinished FROM video_generations WHERE id = $1::uuid AND owner = $2 AND deleted_at IS NULL FOR UPDATE) old
         WHERE t.id = old.id RETURNING old.unfinished`,
        id,
        owner,
      );
      if (rows.length === 0) return false;
      if (rows[0].unfinished) await whenUnfinished(sqlExecutorOf(tx), tx, [id], 'failed');
      return true;
    });
  }

  /** dreaming → completed, with the result's media rows (written only when the generation did change). */
  markCompleted(id: string, worker: string, media: NewMedia[]): Promise<boolean> {
    return this.states.finish(id, worker, {}, this.onChange, [mediaEndRows(media)]);
  }
}
