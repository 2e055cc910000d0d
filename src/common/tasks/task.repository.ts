import { Injectable } from '@nestjs/common';
import { isUUID } from 'class-validator';
import type { Prisma } from '../../generated/prisma/client.js';
import { PrismaService } from '../../infra/prisma/prisma.service.js';
import { type AdmissionSql, camelRow, type DetailRows, prepared, Statement, UNFLUSHED_COMMIT } from '../../infra/prisma/statement.js';
import { taskJobNameSql } from '../../infra/queue/jobs.js';
import { QueueService } from '../../infra/queue/queue.service.js';
import type { Admission, Task, TaskTx } from './task-kind.js';

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
  /** The W3C traceparent of the request that created it, with tracing on (its steps continue that trace). */
  traceParent: string | null;
  /** Its job is written as taken by this instance, which runs it at once (QueueService.reserve). */
  jobTaken?: boolean;
  /** Its acceptance need not wait for the disk (Submission.held); a batch waits unless all its tasks are so. */
  unflushed?: boolean;
}

/** An owner's tasks of one kind, newest first: a page, and optionally only those with one external id. */
export interface TaskPage {
  skip: number;
  take: number;
  externalId?: string;
}

/** The owner's task of a kind, by id, unless deleted. $1 id, $2 kind, $3 owner. */
const FIND_FOR_OWNER_SQL = `SELECT * FROM tasks WHERE id = $1::uuid AND kind = $2 AND owner = $3 AND deleted_at IS NULL`;
/** The oldest unended task of an owner's kind made from the request whose fingerprint is $3, created between $4 and $5 (the service's clock, which writes created_at). */
export const FIND_UNENDED_BY_FINGERPRINT_SQL = `SELECT * FROM tasks
  WHERE owner = $1 AND kind = $2 AND deleted_at IS NULL AND state IN ('queued', 'running') AND params->>'request_fingerprint' = $3
    AND created_at BETWEEN $4::timestamptz AND $5::timestamptz
  ORDER BY created_at, id LIMIT 1`;

/** Reads of the task table, and the insert of an accepted task. Deleted tasks are left out of an owner's reads. */
@Injectable()
export class TaskRepository {
  constructor(private readonly prisma: PrismaService) {}

  /**
   * Admits, inserts and enqueues tasks, with their detail rows, in ONE statement (one round trip, one
   * transaction): `admission` decides each owner's tasks in order, the owners one after the other (`batch`
   * holds the tasks in that order); only the admitted are inserted, each with its job,
   * whose priority is minus the slots its owner held before it (fair share). Answers each task's
   * admission, in order. A duplicate external id fails the whole statement (23505).
   */
  async insertTasks(batch: { task: NewTaskRow; details: DetailRows[] }[], admission: AdmissionSql): Promise<Admission[]> {
    const s = new Statement();
    const admitted = `admitted AS (${admission(s)})`;
    const input = batch
      .map(({ task: t }, i) =>
        [i + 1, s.param(t.id, 'uuid'), s.param(t.owner, 'varchar'), s.param(t.kind, 'varchar'), s.param(t.externalId, 'varchar'), s.param(JSON.stringify(t.params), 'jsonb'), s.param(t.callbackUrl, 'text'), s.param(t.baseUrl, 'varchar')]
          .concat([s.param(t.parentId, 'uuid'), s.param(t.slots, 'int'), s.param(t.credits, 'int'), s.param(t.jobId, 'uuid'), s.param(t.createdAt.toISOString(), 'timestamptz'), s.param(t.deadlineAt.toISOString(), 'timestamptz'), s.param(t.traceParent, 'varchar'), s.param(t.jobTaken === true, 'boolean')])
          .join(', '),
      )
      .map((row) => `(${row})`)
      .join(', ');
    const parts = [
      admitted,
      `input (ord, id, owner, kind, external_id, params, callback_url, base_url, parent_id, slots, credits, job_id, created_at, deadline_at, trace_parent, job_taken) AS (VALUES ${input})`,
      `ok AS (SELECT i.*, a.slots_before FROM input i JOIN admitted a ON a.ord = i.ord WHERE a.admitted)`,
      `task AS (INSERT INTO tasks (id, kind, owner, external_id, params, callback_url, base_url, parent_id, slots, credits, job_id, created_at, updated_at, deadline_at, trace_parent)
         SELECT id, kind, owner, external_id, params, callback_url, base_url, parent_id, slots, credits, job_id, created_at, created_at, deadline_at, trace_parent FROM ok)`,
      ...(await this.detailCtes(s, batch.flatMap((b) => b.details))),
      `job AS (${QueueService.jobRowsSql(`(SELECT job_id AS id, ${taskJobNameSql('kind')} AS name, jsonb_build_object('taskId', id) AS data, -slots_before AS priority, job_taken FROM ok)`, undefined, 'job_taken')})`,
    ];
    const { rows } = await this.prisma.pool.query<{ admitted: boolean; refusal: Admission['refusal']; slots_before: number; credits_before: number; max_slots: number | null; max_credits: number | null }>(
      prepared(`WITH ${parts.join(',\n')}\nSELECT admitted, refusal, slots_before, credits_before, max_slots, max_credits${batch.every((b) => b.task.unflushed) ? `, ${UNFLUSHED_COMMIT}` : ''} FROM admitted ORDER BY ord`, s.values),
    );
    return rows.map((r) => ({ admitted: r.admitted, refusal: r.refusal, slotsBefore: r.slots_before, creditsBefore: r.credits_before, maxSlots: r.max_slots, maxCredits: r.max_credits }));
  }

  /**
   * The detail rows' INSERTs, each row only when its task was admitted (inserted in `ok`): a row names its
   * task in its task_id column. Values are cast to their column's type (read once from the catalog).
   */
  private async detailCtes(s: Statement, details: DetailRows[]): Promise<string[]> {
    const byTable = new Map<string, DetailRows>();
    for (const d of details.filter((d) => d.rows.length > 0)) {
      const into = byTable.get(d.table);
      if (into) into.rows.push(...d.rows);
      else byTable.set(d.table, { ...d, rows: [...d.rows] });
    }
    const ctes: string[] = [];
    for (const d of byTable.values()) {
      const types = await this.columnTypes(d.table);
      const names = Object.keys(d.rows[0]);
      const values = d.rows.map((row) => `(${names.map((n) => s.param(row[n], types.get(n))).join(', ')})`).join(', ');
      const list = names.map((n) => `"${n}"`).join(', ');
      ctes.push(`detail${ctes.length} AS (INSERT INTO "${d.table}" (${list}) SELECT ${list} FROM (VALUES ${values}) v (${list}) WHERE v.task_id IN (SELECT id FROM ok) ${d.onConflict ?? ''})`);
    }
    return ctes;
  }

  private readonly types = new Map<string, Map<string, string>>();

  /** A table's column types (as SQL casts), read from the catalog once. */
  private async columnTypes(table: string): Promise<Map<string, string>> {
    let types = this.types.get(table);
    if (!types) {
      const { rows } = await this.prisma.pool.query<{ name: string; type: string }>(
        'SELECT attname AS name, format_type(atttypid, atttypmod) AS type FROM pg_attribute WHERE attrelid = $1::regclass AND attnum > 0 AND NOT attisdropped',
        [`"${table}"`],
      );
      types = new Map(rows.map((r) => [r.name, r.type]));
      this.types.set(table, types);
    }
    return types;
  }

  async findById<P, R>(id: string): Promise<Task<P, R> | null> {
    return (await this.prisma.task.findUnique({ where: { id } })) as Task<P, R> | null;
  }

  /** The owner's task of `kind` with this id. */
  async findForOwner<P, R>(kind: string, owner: string, id: string): Promise<Task<P, R> | null> {
    if (!isUUID(id)) return null;
    // a prepared statement on the pool, not Prisma's query: the read a held request makes once woken by its end
    const { rows } = await this.prisma.pool.query<Record<string, unknown>>(prepared(FIND_FOR_OWNER_SQL, [id, kind, owner]));
    return rows[0] ? (camelRow(rows[0]) as unknown as Task<P, R>) : null;
  }

  /**
   * The owner's oldest task of `kind` still under way whose params name `fingerprint` as the request it was made
   * from (`request_fingerprint`), created at least `olderS` and at most `youngerS` seconds ago; null when none.
   * Through an index (query-plans checks it): the kind's tasks under way, or the owner's of those minutes.
   */
  async findUnendedByFingerprint<P, R>(kind: string, owner: string, fingerprint: string, olderS: number, youngerS: number): Promise<Task<P, R> | null> {
    const now = Date.now();
    const { rows } = await this.prisma.pool.query<Record<string, unknown>>(prepared(FIND_UNENDED_BY_FINGERPRINT_SQL, [owner, kind, fingerprint, new Date(now - youngerS * 1000), new Date(now - olderS * 1000)]));
    return rows[0] ? (camelRow(rows[0]) as unknown as Task<P, R>) : null;
  }

  /** The owner's tasks of any of these kinds with these ids, in the order asked; unknown ids are left out. */
  async findManyForOwner<P, R>(kinds: string[], owner: string, ids: string[]): Promise<Task<P, R>[]> {
    const wanted = ids.filter((id) => isUUID(id)).map((id) => id.toLowerCase());
    if (wanted.length === 0) return [];
    const rows = (await this.prisma.task.findMany({ where: { id: { in: wanted }, kind: { in: kinds }, owner, deletedAt: null } })) as Task<P, R>[];
    const byId = new Map(rows.map((r) => [r.id, r]));
    return [...new Set(wanted)].flatMap((id) => byId.get(id) ?? []);
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

  /**
   * A page of the owner's tasks of `kind` after the task `after` (a cursor: its id) in `order` of creation,
   * by keyset on (created_at, id); null when `after` is not such a task.
   */
  async listForOwnerAfter<P, R>(kind: string, owner: string, page: { after?: string; order: 'asc' | 'desc'; take: number }): Promise<Task<P, R>[] | null> {
    let cursor: { createdAt: Date; id: string } | undefined;
    if (page.after !== undefined) {
      const found = isUUID(page.after) ? await this.prisma.task.findFirst({ where: { id: page.after, kind, owner }, select: { createdAt: true, id: true } }) : null;
      if (!found) return null;
      cursor = found;
    }
    const beyond = page.order === 'desc' ? 'lt' : 'gt';
    return (await this.prisma.task.findMany({
      where: {
        kind,
        owner,
        deletedAt: null,
        ...(cursor ? { OR: [{ createdAt: { [beyond]: cursor.createdAt } }, { createdAt: cursor.createdAt, id: { [beyond]: cursor.id } }] } : {}),
      },
      orderBy: [{ createdAt: page.order }, { id: page.order }],
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
