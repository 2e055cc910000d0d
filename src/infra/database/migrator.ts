import { createHash, randomUUID } from 'node:crypto';
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { onOneConnection } from './one-connection.js';

/** prisma/migrations, found from this file in src/ (tests) and in dist/ (build) alike. */
export const MIGRATIONS_DIR = fileURLToPath(new URL('../../../prisma/migrations', import.meta.url));

/** Serialises migration runs of every instance that shares the database. */
const MIGRATION_LOCK_ID = 72_804_115;

export interface Migration {
  name: string;
  sql: string;
  checksum: string;
}

export interface MigrationLog {
  info(message: string): void;
  warn(message: string): void;
}

/** Reads prisma/migrations/<name>/migration.sql in name order, as `prisma migrate deploy` does. */
export async function readMigrations(dir = MIGRATIONS_DIR): Promise<Migration[]> {
  const entries = await readdir(dir, { withFileTypes: true });
  const names = entries.filter((e) => e.isDirectory()).map((e) => e.name).sort();
  return Promise.all(
    names.map(async (name) => {
      const sql = await readFile(path.join(dir, name, 'migration.sql'), 'utf8');
      return { name, sql, checksum: createHash('sha256').update(sql).digest('hex') };
    }),
  );
}

/**
 * Applies pending migrations without the Prisma CLI (whose schema engine is a downloaded binary).
 * It keeps Prisma's own `_prisma_migrations` bookkeeping, so `prisma migrate deploy` and this agree
 * on what is applied. Each migration runs in a transaction; an advisory lock keeps concurrent
 * instances from applying the same one twice. Returns the names of the migrations it applied.
 */
export async function applyMigrations(database: string | pg.Pool, log: MigrationLog, dir = MIGRATIONS_DIR): Promise<string[]> {
  const migrations = await readMigrations(dir);
  return onOneConnection(database, (client) => applyPending(client, migrations, log));
}

async function applyPending(client: pg.ClientBase, migrations: Migration[], log: MigrationLog): Promise<string[]> {
  await client.query('SELECT pg_advisory_lock($1)', [MIGRATION_LOCK_ID]);
  await client.query(`CREATE TABLE IF NOT EXISTS "_prisma_migrations" (
    "id" VARCHAR(36) PRIMARY KEY NOT NULL,
    "checksum" VARCHAR(64) NOT NULL,
    "finished_at" TIMESTAMPTZ,
    "migration_name" VARCHAR(255) NOT NULL,
    "logs" TEXT,
    "rolled_back_at" TIMESTAMPTZ,
    "started_at" TIMESTAMPTZ NOT NULL DEFAULT now(),
    "applied_steps_count" INTEGER NOT NULL DEFAULT 0
  )`);
  const { rows } = await client.query<{ migration_name: string; checksum: string; finished_at: Date | null; rolled_back_at: Date | null }>(
    'SELECT migration_name, checksum, finished_at, rolled_back_at FROM "_prisma_migrations"',
  );
  const applied: string[] = [];
  for (const migration of migrations) {
    const previous = rows.filter((r) => r.migration_name === migration.name && r.rolled_back_at === null);
    if (previous.some((r) => r.finished_at !== null)) {
      if (previous.some((r) => r.checksum !== migration.checksum)) {
        log.warn(`migration ${migration.name} was modified after it was applied`);
      }
      continue;
    }
    if (previous.length > 0) {
      throw new Error(
        `migration ${migration.name} failed earlier and was not rolled back; fix the database, then mark it rolled back (prisma migrate resolve --rolled-back ${migration.name})`,
      );
    }
    await applyOne(client, migration);
    applied.push(migration.name);
    log.info(`applied migration ${migration.name}`);
  }
  // a migration's SET would outlive it on a pooled connection (the service's start lends one)
  if (applied.length > 0) await client.query('RESET ALL');
  // a failed step ends the connection (onOneConnection), and the lock with it: it is let go here on success only
  await client.query('SELECT pg_advisory_unlock($1)', [MIGRATION_LOCK_ID]);
  return applied;
}

async function applyOne(client: pg.ClientBase, migration: Migration): Promise<void> {
  const id = randomUUID();
  await client.query('INSERT INTO "_prisma_migrations" (id, checksum, migration_name, started_at) VALUES ($1, $2, $3, now())', [
    id,
    migration.checksum,
    migration.name,
  ]);
  try {
    await client.query('BEGIN');
    await client.query(migration.sql);
    await client.query('COMMIT');
  } catch (err) {
    await client.query('ROLLBACK');
    await client.query('UPDATE "_prisma_migrations" SET logs = $2 WHERE id = $1', [id, (err as Error).message]);
    throw new Error(`migration ${migration.name} failed: ${(err as Error).message}`, { cause: err });
  }
  await client.query('UPDATE "_prisma_migrations" SET finished_at = now(), applied_steps_count = 1 WHERE id = $1', [id]);
}
