import { createHash } from 'node:crypto';
import type pg from 'pg';

/** The text and parameters of one SQL statement, built from parts; values are always parameters. */
export class Statement {
  readonly values: unknown[] = [];

  /** A placeholder for `value` (with an optional cast). */
  param(value: unknown, cast?: string): string {
    this.values.push(value);
    return `$${this.values.length}${cast ? `::${cast}` : ''}`;
  }
}

/**
 * The admission of a task (per-owner limits), rendered as a query that returns the owner's
 * `slots_before` and raises when the task is refused; see LimitsService.admission.
 */
export type AdmissionSql = (s: Statement, taskId: string) => string;

/** The job of a task, rendered as an INSERT … SELECT; `priority` is an SQL expression. See QueueService.jobSql. */
export type JobSql = (s: Statement, priority: string) => string;

/** Rows of another table that belong to a task (an input image, a result's media), written with it. */
export interface DetailRows {
  table: string;
  /** snake_case columns; each row has the same. */
  rows: Record<string, unknown>[];
  /** An ON CONFLICT clause, when a row may already be there. */
  onConflict?: string;
}

export interface NewTaskRows {
  /** The task's table and columns (snake_case names; JSON values already serialised). */
  table: string;
  id: string;
  columns: Record<string, unknown>;
  /** Rows of other tables that belong to the task (the input image). */
  details?: DetailRows[];
  /** What to return of the inserted task (an SQL RETURNING list). */
  returning: string;
}

/**
 * Admits, inserts and enqueues a task in ONE statement (so one round trip and one implicit transaction):
 * the owner's counter row is locked only from that statement until its commit, which keeps one owner's
 * submissions from queueing behind each other's round trips. A refusal raises in the admission and
 * undoes everything; the job gets minus the slots the owner held before as its priority (fair share).
 * VALUES take their types from the target columns, so no value needs a cast.
 */
export async function insertAdmittedTask<R extends pg.QueryResultRow>(pool: pg.Pool, task: NewTaskRows, admission: AdmissionSql, job: JobSql): Promise<R> {
  const s = new Statement();
  const names = (row: Record<string, unknown>) => Object.keys(row).map((c) => `"${c}"`).join(', ');
  const values = (row: Record<string, unknown>) => `(${Object.values(row).map((v) => s.param(v)).join(', ')})`;
  const parts = [
    `admitted AS (${admission(s, task.id)})`,
    `task AS (INSERT INTO "${task.table}" (${names(task.columns)}) VALUES ${values(task.columns)} RETURNING ${task.returning})`,
    ...(task.details ?? []).filter((c) => c.rows.length > 0).map((c, i) => `detail${i} AS (INSERT INTO "${c.table}" (${names(c.rows[0])}) VALUES ${c.rows.map(values).join(', ')} ${c.onConflict ?? ''})`),
    `job AS (${job(s, '(SELECT -slots_before FROM admitted)')})`,
  ];
  const { rows } = await pool.query<R>(prepared(`WITH ${parts.join(',\n')}\nSELECT task.* FROM task`, s.values));
  return rows[0];
}

const names = new Map<string, string>();

/**
 * A named (prepared) statement: each connection parses and plans it once, then only binds values; its
 * name comes from its text, so the same text always has the same name (a task with two keyframes is
 * another statement than one with none).
 */
export function prepared(text: string, values: unknown[]): pg.QueryConfig {
  let name = names.get(text);
  if (!name) {
    name = `mgw_${createHash('sha1').update(text).digest('hex').slice(0, 20)}`;
    if (names.size < 1000) names.set(text, name);
  }
  return { name, text, values };
}

const snakeNames = new Map<string, string>();

function memo(cache: Map<string, string>, name: string, convert: (n: string) => string): string {
  let converted = cache.get(name);
  if (converted === undefined) {
    converted = convert(name);
    if (cache.size < 1000) cache.set(name, converted);
  }
  return converted;
}

/** Column names and values of a new row given as Prisma's camelCase fields (undefined fields left out). */
export function snakeColumns(fields: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const key in fields) {
    if (fields[key] !== undefined) out[memo(snakeNames, key, (k) => k.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`))] = fields[key];
  }
  return out;
}

const camelNames = new Map<string, string>();

/** A row read by raw SQL (snake_case columns) with Prisma's camelCase field names, as a model read has them. */
export function camelRow(row: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const key in row) out[memo(camelNames, key, (k) => k.replace(/_([a-z0-9])/g, (_, c: string) => c.toUpperCase()))] = row[key];
  return out;
}
