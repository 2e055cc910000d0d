import { Injectable } from '@nestjs/common';
import type { Holder } from '../../common/tasks/task-states.repository.js';
import type { Media, Prisma } from '../../generated/prisma/client.js';
import { PrismaService } from '../../infra/prisma/prisma.service.js';
import { camelRow, type DetailRows, prepared, snakeColumns } from '../../infra/prisma/statement.js';

export type MediaRow = Media;
export type NewMedia = Omit<Media, 'createdAt'>;

/**
 * A result's media rows, written in the statement that ends their task (TaskStatesRepository.finish), so only a task
 * that did end with them has them. One row per (task, role, index): a row already there is replaced.
 */
export function mediaEndRows(media: NewMedia[]): DetailRows {
  return {
    table: 'media',
    rows: media.map(snakeMedia),
    onConflict: `ON CONFLICT (task_id, role, index) DO UPDATE SET id = EXCLUDED.id, owner = EXCLUDED.owner, content_type = EXCLUDED.content_type, size_bytes = EXCLUDED.size_bytes,
      width = EXCLUDED.width, height = EXCLUDED.height, driver = EXCLUDED.driver, storage_key = EXCLUDED.storage_key`,
  };
}

/** A media row's columns, to insert with its task (an input object) or with its end (mediaEndRows). */
export function snakeMedia(media: NewMedia): Record<string, unknown> {
  return snakeColumns(media);
}

/** A media row ($1-$11, in the table's order) while task $3 runs held by worker $12 in attempt $13; replaces the row of its role and index. */
const UPSERT_WHILE_HELD_SQL = `INSERT INTO media (id, owner, task_id, role, "index", content_type, size_bytes, width, height, driver, storage_key)
  SELECT $1::uuid, $2, $3::uuid, $4, $5, $6, $7, $8, $9, $10, $11
  WHERE EXISTS (SELECT 1 FROM tasks WHERE id = $3::uuid AND state = 'running' AND lease_owner = $12 AND attempts = $13)
  ON CONFLICT (task_id, role, "index") DO UPDATE SET id = EXCLUDED.id, owner = EXCLUDED.owner, content_type = EXCLUDED.content_type, size_bytes = EXCLUDED.size_bytes,
    width = EXCLUDED.width, height = EXCLUDED.height, driver = EXCLUDED.driver, storage_key = EXCLUDED.storage_key, created_at = now()
  RETURNING *`;

/** The media of tasks $1 (uuid[]), by role, then index. */
const LIST_FOR_TASKS_SQL = `SELECT * FROM media WHERE task_id = ANY ($1::uuid[]) ORDER BY role, "index"`;

@Injectable()
export class MediaRepository {
  constructor(private readonly prisma: PrismaService) {}

  findById(id: string): Promise<MediaRow | null> {
    return this.prisma.media.findUnique({ where: { id } });
  }

  findForTask(taskId: string, role: string, index: number): Promise<MediaRow | null> {
    return this.prisma.media.findUnique({ where: { taskId_role_index: { taskId, role, index } } });
  }

  /**
   * One statement, in `tx` when given; outside a transaction it is prepared on the pool rather than sent
   * through Prisma's query path (the read a held request makes before it answers an ended task's media).
   */
  async listForTasks(taskIds: string[], tx?: Prisma.TransactionClient): Promise<MediaRow[]> {
    const rows = tx
      ? await tx.$queryRawUnsafe<Record<string, unknown>[]>(LIST_FOR_TASKS_SQL, taskIds)
      : (await this.prisma.pool.query<Record<string, unknown>>(prepared(LIST_FOR_TASKS_SQL, [taskIds]))).rows;
    return rows.map((row) => camelRow(row) as unknown as MediaRow);
  }

  /**
   * Records an object at once (a partial image shown while its task runs, a fitted frame), while the claim
   * `holder` has its task running; one already there is replaced. Null, and nothing written, when it does not.
   */
  async upsertWhileHeld(media: NewMedia, holder: Holder): Promise<MediaRow | null> {
    const { rows } = await this.prisma.pool.query<Record<string, unknown>>(prepared(UPSERT_WHILE_HELD_SQL, [
      media.id, media.owner, media.taskId, media.role, media.index, media.contentType, media.sizeBytes, media.width, media.height, media.driver, media.storageKey, holder.worker, holder.attempt,
    ]));
    return rows.length ? (camelRow(rows[0]) as unknown as MediaRow) : null;
  }

  /** Deletes the rows and returns them, so their bytes can be deleted too. */
  async deleteForTasks(taskIds: string[]): Promise<MediaRow[]> {
    return this.prisma.$transaction(async (tx) => {
      const rows = await tx.media.findMany({ where: { taskId: { in: taskIds } } });
      await tx.media.deleteMany({ where: { id: { in: rows.map((r) => r.id) } } });
      return rows;
    });
  }

}
