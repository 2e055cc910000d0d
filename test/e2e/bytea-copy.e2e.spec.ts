import { randomBytes, randomUUID } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type pg from 'pg';
import { copyByteaToFile } from '../../src/infra/prisma/bytea-copy.js';
import { PrismaService } from '../../src/infra/prisma/prisma.service.js';
import { startTestApp, type TestApp } from '../support/test-app.js';

// copyByteaToFile parses PostgreSQL's binary COPY by hand as it streams: every size across chunk boundaries, no row, NULL.
describe('copyByteaToFile', () => {
  let t: TestApp;
  let pool: pg.Pool;
  const dir = mkdtempSync(path.join(tmpdir(), 'mgw-bytea-'));
  const file = () => path.join(dir, randomUUID());
  const source = { table: 'bytea_probe', column: 'bytes', key: 'id' };

  beforeAll(async () => {
    t = await startTestApp({ ROLE: 'api' });
    pool = t.app.get(PrismaService).pool;
    await pool.query('CREATE TABLE bytea_probe (id uuid PRIMARY KEY, bytes bytea)');
  });
  afterAll(async () => {
    await t.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it.each([0, 1, 5, 63, 64, 65, 65_536, 65_537, 3 * 1024 * 1024 + 7])('gives back %i bytes exactly as stored', async (size) => {
    const id = randomUUID();
    const bytes = randomBytes(size);
    await pool.query('INSERT INTO bytea_probe (id, bytes) VALUES ($1, $2)', [id, bytes]);
    const into = file();
    expect(await copyByteaToFile(pool, source, id, into)).toBe(size);
    expect(readFileSync(into).equals(bytes)).toBe(true);
  });

  it('answers null, and leaves no file, when there is no row or the value is NULL', async () => {
    const none = file();
    expect(await copyByteaToFile(pool, source, randomUUID(), none)).toBeNull();
    expect(existsSync(none)).toBe(false);
    const id = randomUUID();
    await pool.query('INSERT INTO bytea_probe (id, bytes) VALUES ($1, NULL)', [id]);
    expect(await copyByteaToFile(pool, source, id, none)).toBeNull();
    expect(existsSync(none)).toBe(false);
  });

  it('refuses a key that is not a UUID before it reaches SQL', async () => {
    await expect(copyByteaToFile(pool, source, "x' OR '1'='1", file())).rejects.toThrow(/not a UUID/);
  });
});
