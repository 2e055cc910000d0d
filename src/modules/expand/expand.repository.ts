import { Injectable } from '@nestjs/common';
import { copyByteaToFile } from '../../infra/prisma/bytea-copy.js';
import { PrismaService } from '../../infra/prisma/prisma.service.js';
import { type DetailRows, prepared } from '../../infra/prisma/statement.js';

/** Expand's own detail table: the decoded input image of a task sent as Base64 (expand_inputs), beside the task. */
@Injectable()
export class ExpandRepository {
  constructor(private readonly prisma: PrismaService) {}

  /** The input's row, written in the statement that accepts the task. */
  static inputRows(taskId: string, bytes: Buffer): DetailRows {
    return { table: 'expand_inputs', rows: [{ task_id: taskId, bytes }] };
  }

  /** The submitted image's bytes as stored, or null when there are none here. */
  async readInput(taskId: string): Promise<Buffer | null> {
    const { rows } = await this.prisma.pool.query<{ bytes: Buffer }>(prepared('SELECT bytes FROM expand_inputs WHERE task_id = $1::uuid', [taskId]));
    return rows[0]?.bytes ?? null;
  }

  /** The submitted image, as stored, into `file` (see copyByteaToFile); its size, or null when there is none. */
  copyInputToFile(taskId: string, file: string): Promise<number | null> {
    return copyByteaToFile(this.prisma.pool, { table: 'expand_inputs', column: 'bytes', key: 'task_id' }, taskId, file);
  }
}
