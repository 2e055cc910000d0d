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
 * The admission of a batch of tasks (per-owner limits), rendered as a query returning one row per task,
 * in order: ord (from 1), admitted, refusal, slots_before, credits_before, max_slots, max_credits. See
 * LimitsService.admissionSql.
 */
export type AdmissionSql = (s: Statement) => string;

/** Rows of another table that belong to a task (an input image, a result's media), written with it. */
export interface DetailRows {
  table: string;
  /** snake_case columns; each row has the same. */
  rows: Record<string, unknown>[];
  /** An ON CONFLICT clause, when a row may already be there. */
  onConflict?: string;
}

/**
 * A select-list item that lets its statement's commit return before its WAL reaches the disk: it sets
 * synchronous_commit off for that transaction alone (PostgreSQL applies the setting in effect when a
 * transaction commits). Only for a write nothing outside the database acts on before a later commit is
 * flushed: WAL is written in order, so that flushed commit (the submit mark before a create goes out, a
 * task's end before its answer) takes it to disk too, and a PostgreSQL crash before then loses it with
 * everything after it, a consistent prefix. Other sessions see it at once either way. On this project's
 * machines a flushed commit waits 0.3-1 ms for the disk; one like this, none.
 */
export const UNFLUSHED_COMMIT = "set_config('synchronous_commit', 'off', true) AS unflushed_commit";

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
