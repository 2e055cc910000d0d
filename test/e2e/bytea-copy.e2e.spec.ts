import { randomBytes, randomUUID } from 'node:crypto';
import type pg from 'pg';
import { readByteaByUuid } from '../../src/infra/prisma/bytea-copy.js';
import { PrismaService } from '../../src/infra/prisma/prisma.service.js';
import { startTestApp, type TestApp } from '../support/test-app.js';

// readByteaByUuid parses PostgreSQL's binary COPY by hand: every size across chunk boundaries, no row, NULL.
describe('readByteaByUuid', () => {
  let t: TestApp;
  let pool: pg.Pool;
  const source = { table: 'bytea_probe', column: 'bytes', key: 'id' };

  beforeAll(async () => {
    t = await startTestApp({ ROLE: 'api' });
    pool = t.app.get(PrismaService).pool;
    await pool.query('CREATE TABLE bytea_probe (id uuid PRIMARY KEY, bytes bytea)');
  });
  afterAll(() => t.close());

  it.each([0, 1, 5, 63, 64, 65, 65_536, 65_537, 3 * 1024 * 1024 + 7])('gives back %i bytes exactly as stored', async (size) => {
    const id = randomUUID();
    const bytes = randomBytes(size);
    await pool.query('INSERT INTO bytea_probe (id, bytes) VALUES ($1, $2)', [id, bytes]);
    const read = await readByteaByUuid(pool, source, id);
    expect(read?.length).toBe(size);
    expect(read?.equals(bytes)).toBe(true);
  });

  it('answers null when there is no row, or the value is NULL', async () => {
    expect(await readByteaByUuid(pool, source, randomUUID())).toBeNull();
    const id = randomUUID();
    await pool.query('INSERT INTO bytea_probe (id, bytes) VALUES ($1, NULL)', [id]);
    expect(await readByteaByUuid(pool, source, id)).toBeNull();
  });

  it('refuses a key that is not a UUID before it reaches SQL', async () => {
    await expect(readByteaByUuid(pool, source, "x' OR '1'='1")).rejects.toThrow(/not a UUID/);
  });
});
