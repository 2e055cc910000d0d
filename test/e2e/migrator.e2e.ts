import { mkdtemp, mkdir, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { applyMigrations, MIGRATIONS_DIR, readMigrations } from '../../src/infra/database/migrator.js';
import { createTestDatabase } from '../support/test-app.js';

const quiet = { info: () => undefined, warn: () => undefined };

async function query<T extends pg.QueryResultRow>(url: string, sql: string): Promise<T[]> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query<T>(sql)).rows;
  } finally {
    await client.end();
  }
}

describe('migrator', () => {
  it("applies every migration once, in Prisma's own bookkeeping, and nothing on a second run", async () => {
    const db = await createTestDatabase();
    try {
      const all = (await readMigrations()).map((m) => m.name);
      expect(await applyMigrations(db.url, quiet)).toEqual(all);
      expect(await applyMigrations(db.url, quiet)).toEqual([]);
      const rows = await query<{ migration_name: string; checksum: string; finished_at: Date; applied_steps_count: number }>(
        db.url,
        'SELECT migration_name, checksum, finished_at, applied_steps_count FROM _prisma_migrations ORDER BY migration_name',
      );
      const migrations = await readMigrations();
      expect(rows.map((r) => [r.migration_name, r.checksum, r.applied_steps_count])).toEqual(migrations.map((m) => [m.name, m.checksum, 1]));
      expect(rows.every((r) => r.finished_at instanceof Date)).toBe(true);
    } finally {
      await db.drop();
    }
  });

  it('lets concurrent instances start together: each migration is applied exactly once', async () => {
    const db = await createTestDatabase();
    try {
      const results = await Promise.all(Array.from({ length: 4 }, () => applyMigrations(db.url, quiet)));
      expect(results.flat().sort()).toEqual((await readMigrations()).map((m) => m.name).sort());
      const rows = await query<{ n: string }>(db.url, 'SELECT count(*) AS n FROM _prisma_migrations');
      expect(Number(rows[0].n)).toBe((await readMigrations()).length);
    } finally {
      await db.drop();
    }
  });

  it('rolls a failing migration back, records it, and refuses to go on until it is resolved', async () => {
    const db = await createTestDatabase();
    const dir = await mkdtemp(path.join(tmpdir(), 'migrations-'));
    try {
      await mkdir(path.join(dir, '001_ok'));
      await writeFile(path.join(dir, '001_ok', 'migration.sql'), 'CREATE TABLE a (id int);');
      await mkdir(path.join(dir, '002_bad'));
      await writeFile(path.join(dir, '002_bad', 'migration.sql'), 'CREATE TABLE b (id int); SELECT nope FROM nowhere;');
      await expect(applyMigrations(db.url, quiet, dir)).rejects.toThrow(/002_bad failed/);
      const tables = await query<{ t: string }>(db.url, "SELECT tablename AS t FROM pg_tables WHERE schemaname = 'public' ORDER BY 1");
      expect(tables.map((r) => r.t)).toEqual(['_prisma_migrations', 'a']);
      const failed = await query<{ logs: string; finished_at: Date | null }>(db.url, "SELECT logs, finished_at FROM _prisma_migrations WHERE migration_name = '002_bad'");
      expect(failed[0].finished_at).toBeNull();
      expect(failed[0].logs).toMatch(/nowhere/);
      await expect(applyMigrations(db.url, quiet, dir)).rejects.toThrow(/failed earlier/);
    } finally {
      await db.drop();
    }
  });

  it('reads migrations from prisma/migrations in name order', async () => {
    expect(MIGRATIONS_DIR).toMatch(/prisma[/\\]migrations$/);
    const names = (await readMigrations()).map((m) => m.name);
    expect(names).toEqual([...names].sort());
    expect(names.length).toBeGreaterThan(0);
  });
});
