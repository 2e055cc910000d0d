import { Injectable } from '@nestjs/common';
import { isUUID } from 'class-validator';
import type { TaskState } from '../../common/tasks/task-kind.js';
import { PrismaService } from '../../infra/prisma/prisma.service.js';
import type { TaskCursor } from './task-cursor.js';

/** What the list reads of a task: never its documents (params, result), which may be large; only the two names its params give (door, model). */
export interface TaskListRow {
  id: string;
  kind: string;
  owner: string;
  externalId: string | null;
  state: TaskState;
  message: string | null;
  credits: number;
  createdAt: Date;
  startedAt: Date | null;
  finishedAt: Date | null;
  /** The door name its parameters store (`params.door`; null: its kind's tasks store none). */
  storedDoor: string | null;
  /** The model its request names (`params.model`). */
  model: string | null;
}

export interface TaskListFilter {
  /** Only this owner's tasks (a team's key: always its own). */
  owner?: string;
  kind?: string;
  state?: TaskState;
  /**
   * Only the tasks that came through this door: those storing its name, and those of `doorKinds` (whose tasks
   * store no door name, being of its fallback rendering) storing none.
   */
  door?: { name: string; doorKinds: string[] };
  /** Only the tasks whose request names this model. */
  model?: string;
  /** A task id or an external id. */
  q?: string;
  createdAfter?: Date;
  createdBefore?: Date;
  /** Tasks after this one in the list's order (created_at desc, id desc). */
  after?: TaskCursor;
  limit: number;
}

/**
 * The cross-operation list: every kind's tasks in one statement, newest first, paged by a keyset on
 * (created_at, id) so that a page costs the same at the millionth task as at the first: it reads
 * `tasks_owner_created_at_id_idx` (an owner) or `tasks_created_at_id_idx` (every owner) backwards from the
 * cursor. Deleted tasks are left out, as in every owner's read. The door and model filters read the params
 * document of each row on that range (no index of their own: an owner's tasks are read in the index's order
 * until a page is full, so a rare door or model reads further back, never sorts).
 */
@Injectable()
export class TaskListRepository {
  constructor(private readonly prisma: PrismaService) {}

  async list(filter: TaskListFilter): Promise<TaskListRow[]> {
    const where = ['deleted_at IS NULL'];
    const values: unknown[] = [];
    const param = (value: unknown, cast: string) => {
      values.push(value);
      return `$${values.length}::${cast}`;
    };
    if (filter.owner !== undefined) where.push(`owner = ${param(filter.owner, 'varchar')}`);
    if (filter.kind !== undefined) where.push(`kind = ${param(filter.kind, 'varchar')}`);
    if (filter.state !== undefined) where.push(`state = ${param(filter.state, 'task_state')}`);
    if (filter.door) {
      const named = `params->>'door' = ${param(filter.door.name, 'text')}`;
      where.push(filter.door.doorKinds.length ? `(${named} OR (params->>'door' IS NULL AND kind = ANY(${param(filter.door.doorKinds, 'varchar[]')})))` : named);
    }
    if (filter.model !== undefined) where.push(`params->>'model' = ${param(filter.model, 'text')}`);
    if (filter.q !== undefined) {
      const byExternalId = `external_id = ${param(filter.q, 'varchar')}`;
      where.push(isUUID(filter.q) ? `(id = ${param(filter.q, 'uuid')} OR ${byExternalId})` : byExternalId);
    }
    if (filter.createdAfter) where.push(`created_at >= ${param(filter.createdAfter, 'timestamptz')}`);
    if (filter.createdBefore) where.push(`created_at < ${param(filter.createdBefore, 'timestamptz')}`);
    if (filter.after) where.push(`(created_at, id) < (${param(filter.after.createdAt, 'timestamptz')}, ${param(filter.after.id, 'uuid')})`);
    const { rows } = await this.prisma.pool.query<{
      id: string;
      kind: string;
      owner: string;
      external_id: string | null;
      state: TaskState;
      message: string | null;
      credits: number;
      created_at: Date;
      started_at: Date | null;
      finished_at: Date | null;
      door: string | null;
      model: string | null;
    }>(
      `SELECT id, kind, owner, external_id, state, message, credits, created_at, started_at, finished_at, params->>'door' AS door, params->>'model' AS model FROM tasks
       WHERE ${where.join(' AND ')} ORDER BY created_at DESC, id DESC LIMIT ${param(filter.limit, 'int')}`,
      values,
    );
    return rows.map((r) => ({
      id: r.id,
      kind: r.kind,
      owner: r.owner,
      externalId: r.external_id,
      state: r.state,
      message: r.message,
      credits: r.credits,
      createdAt: r.created_at,
      startedAt: r.started_at,
      finishedAt: r.finished_at,
      storedDoor: r.door,
      model: r.model,
    }));
  }
}
