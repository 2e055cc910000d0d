import { Injectable } from '@nestjs/common';
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

  /** Records an object at once (a partial image shown while its task runs); one already there is replaced. */
  async upsert(media: NewMedia): Promise<MediaRow> {
    const { id, taskId, role, index, ...rest } = media;
    return this.prisma.media.upsert({ where: { taskId_role_index: { taskId, role, index } }, create: media, update: { id, ...rest } });
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
