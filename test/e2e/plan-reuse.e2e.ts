import { randomUUID } from 'node:crypto';
import pg from 'pg';
import PgBoss from 'pg-boss';
import { TaskRepository } from '../../src/common/tasks/task.repository.js';
import type { PrismaService } from '../../src/infra/prisma/prisma.service.js';
import { LimitsRepository } from '../../src/modules/limits/limits.repository.js';
import { BossDb } from '../../src/infra/queue/boss-db.js';
import { createTestDatabase, type TestDatabase } from '../support/test-database.js';

/** Calls of each statement in the test: more than the five custom plans PostgreSQL makes before it weighs the generic one. */
const CALLS = 8;

interface PlanCounts {
  statement: string;
  generic_plans: number;
  custom_plans: number;
}

/** The plans a connection has made for its named statements whose text starts with `prefix` (pg_prepared_statements, PostgreSQL 14+). */
async function plansOf(client: pg.ClientBase | pg.Pool, prefix: string): Promise<PlanCounts[]> {
  const { rows } = await client.query<PlanCounts>(
    `SELECT statement, generic_plans::int, custom_plans::int FROM pg_prepared_statements WHERE from_sql = false AND ltrim(statement, E' \n\t') LIKE $1 || '%'`,
    [prefix],
  );
  return rows;
}

/**
 * The statements every task runs through are named, so each connection plans them once and then only binds
 * values. PostgreSQL keeps planning a named statement anew for each call's values while that looks cheaper
 * than its generic plan: these check, on the connection that ran them, that the generic plan is the one
 * used (PostgreSQL's own counters), for the admission (a migration gives its set-returning function an
 * estimate of rows) and for pg-boss's fetch and completion (its pool's sessions take generic plans).
 */
describe('plans made once per connection', () => {
  let db: TestDatabase;
  beforeAll(async () => {
    db = await createTestDatabase({ migrated: true });
  });
  afterAll(() => db.drop());

  it('the admission of tasks uses its generic plan after five calls, not a plan per call', async () => {
    const pool = new pg.Pool({ connectionString: db.url, max: 1 }); // one connection: one plan cache
    try {
      const tasks = new TaskRepository({ pool } as unknown as PrismaService);
      const monthStart = new Date(Date.UTC(2026, 10, 1));
      for (let i = 0; i < CALLS; i++) {
        const id = randomUUID();
        const now = new Date();
        const row = { id, kind: 'image', owner: 'plans', externalId: null, params: { prompt: 'p' }, callbackUrl: null, baseUrl: null, parentId: null, slots: 1, credits: 1, jobId: randomUUID(), createdAt: now, deadlineAt: new Date(now.getTime() + 60_000), traceParent: null };
        const [admission] = await tasks.insertTasks([{ task: row, details: [] }], LimitsRepository.admissionSql([{ owner: 'plans', tasks: [{ id, slots: 1, credits: 1 }] }], null, null, '2026-11', monthStart));
        expect(admission.admitted).toBe(true);
      }
      const [plans, ...others] = await plansOf(pool, 'WITH admitted AS');
      expect(others).toHaveLength(0);
      // PostgreSQL's five custom plans, then the generic one for every later call (it was a custom plan per call)
      expect({ custom: plans.custom_plans, generic: plans.generic_plans }).toEqual({ custom: 5, generic: CALLS - 5 });
    } finally {
      await pool.end();
    }
  });

  it("pg-boss's fetch and completion use one generic plan per connection from their first call", async () => {
    const errors: Error[] = [];
    const bossDb = new BossDb({ connectionString: db.url, max: 1 }, (err) => errors.push(err));
    const boss = new PgBoss({ db: bossDb, schema: 'pgboss', supervise: false, schedule: false, migrate: false });
    boss.on('error', (err) => errors.push(err));
    await boss.start();
    try {
      for (let i = 0; i < CALLS; i++) {
        await boss.send('image.run', { taskId: randomUUID() });
        const [job] = await boss.fetch('image.run');
        expect(job).toBeDefined();
        await boss.complete('image.run', job.id);
      }
      const [fetch, complete] = await bossDb.onOneConnection(async (client) => [await plansOf(client, 'WITH next as'), await plansOf(client, 'WITH results AS')]);
      expect(fetch.map((p) => ({ custom: p.custom_plans, generic: p.generic_plans }))).toEqual([{ custom: 0, generic: CALLS }]);
      expect(complete.map((p) => ({ custom: p.custom_plans, generic: p.generic_plans }))).toEqual([{ custom: 0, generic: CALLS }]);
      expect(errors).toEqual([]);
    } finally {
      await boss.stop({ graceful: false, close: true, wait: true });
      await bossDb.close();
    }
  });
});
