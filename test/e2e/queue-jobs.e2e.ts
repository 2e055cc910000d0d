import { randomUUID } from 'node:crypto';
import pg from 'pg';
import PgBoss from 'pg-boss';
import { QUEUES_WITH_JOBS_READY_SQL, QueueService } from '../../src/infra/queue/queue.service.js';
import { PrismaService } from '../../src/infra/prisma/prisma.service.js';
import { Statement } from '../../src/infra/prisma/statement.js';
import { pollUntil } from '../support/poll.js';
import { api, queryDb, startTestApp, type TestApp } from '../support/test-app.js';

/**
 * A task's job is written by our own SQL in the statement that inserts the task (QueueService.jobRowsSql),
 * not by pg-boss's send(): the row must be the one send() writes, or pg-boss would retry, expire and
 * archive it differently.
 */
describe('jobs written with the task', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp({ ROLE: 'api' }); // no worker takes the jobs away
  });
  afterAll(() => t.close());

  it('are the rows pg-boss send() writes, with the priority asked for', async () => {
    for (const name of ['expand.run', 'video.run', 'audio.run'] as const) {
      const [bySend, byOurs] = [randomUUID(), randomUUID()];
      const payload = (id: string) => ({ taskId: id });
      await t.app.get(QueueService).send(name, payload(bySend), { id: bySend, priority: -3 });
      const s = new Statement();
      const sql = QueueService.jobRowsSql(`(SELECT ${s.param(byOurs)}::uuid AS id, ${s.param(name)}::text AS name, ${s.param(JSON.stringify(payload(byOurs)))}::jsonb AS data, -3 AS priority)`);
      await t.app.get(PrismaService).pool.query(sql, s.values);
      const rows = await queryDb<Record<string, unknown>>(
        t.db,
        `SELECT id, name, priority, state, retry_limit, retry_count, retry_delay, retry_backoff, expire_in::text, policy, dead_letter, singleton_key, singleton_on,
                round(extract(epoch FROM keep_until - start_after)) AS keep_s, start_after <= now() AS due, data
         FROM pgboss.job WHERE id = ANY($1::uuid[]) ORDER BY id = $2 DESC`,
        [[bySend, byOurs], bySend],
      );
      expect(rows).toHaveLength(2);
      const strip = ({ id: _, data: __, ...rest }: Record<string, unknown>) => rest;
      expect(strip(rows[1])).toEqual(strip(rows[0]));
      expect(rows[1].data).toEqual(payload(byOurs));
      expect(rows[1].priority).toBe(-3);
    }
  });

  it('written taken (run at once where they were written), are the rows pg-boss fetch() leaves', async () => {
    const name = 'expand.run';
    const [fetched, taken, queued] = [randomUUID(), randomUUID(), randomUUID()];
    const boss = t.app.get(QueueService);
    await boss.send(name, { taskId: fetched }, { id: fetched, priority: -2 });
    const s = new Statement();
    const rows = [taken, queued].map((id) => `SELECT ${s.param(id)}::uuid AS id, ${s.param(name)}::text AS name, ${s.param(JSON.stringify({ taskId: id }))}::jsonb AS data, -2 AS priority, ${s.param(id === taken)}::boolean AS here`);
    await t.app.get(PrismaService).pool.query(QueueService.jobRowsSql(`(${rows.join(' UNION ALL ')})`, undefined, 'here'), s.values);
    // pg-boss's own fetch of the one it sent (the other two are not ready to it: taken is active, queued is ours to compare)
    const pgboss = new PgBoss({ connectionString: t.db.url, schema: 'pgboss', supervise: false, schedule: false });
    await pgboss.start();
    try {
      await queryDb(t.db, "UPDATE pgboss.job SET start_after = now() + interval '1 hour' WHERE id = $1", [queued]);
      expect((await pgboss.fetch(name)).map((j) => j.id)).toEqual([fetched]);
    } finally {
      await pgboss.stop({ graceful: false, wait: true, close: true });
    }
    const [byFetch, byUs, waiting] = await queryDb<Record<string, unknown>>(
      t.db,
      `SELECT state::text, retry_count, started_on IS NOT NULL AS started, started_on = created_on AS started_as_written, expire_in::text, policy, priority
       FROM pgboss.job WHERE id = ANY($1::uuid[]) ORDER BY array_position($1::uuid[], id)`,
      [[fetched, taken, queued]],
    );
    expect(byUs).toEqual({ ...byFetch, started_as_written: true });
    expect(byFetch).toMatchObject({ state: 'active', retry_count: 0, started: true, started_as_written: false });
    expect(waiting).toMatchObject({ state: 'created', started: false });
  });
});

/**
 * A task accepted where a worker of its kind waits for work (its last fetch found the queue empty) is run
 * there at once: its job is written taken, active from the statement that wrote it, with no fetch or wake
 * between; as many as the worker has free slots, the rest queued for any worker, as before.
 */
describe('a task accepted where a worker waits for work', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp({ ROLE: 'all', WORKER_CONCURRENCY: '2', SANDBOX_DELAY_MS: '3000' });
  });
  afterAll(() => t.close());

  const jobOf = async (id: string) =>
    (await queryDb<{ state: string; taken: boolean }>(t.db, 'SELECT j.state::text, COALESCE(j.started_on = j.created_on, false) AS taken FROM tasks t JOIN pgboss.job j ON j.id = t.job_id WHERE t.id = $1', [id]))[0];
  const submit = async (key: string, prompt: string) => {
    const res = await api(t.url, 'POST', '/music-a/submit/lyrics', { key, body: { prompt } });
    expect([res.status, res.body.code]).toEqual([200, 'success']);
    return res.body.data as string;
  };
  const ended = (key: string, id: string) =>
    pollUntil(() => api(t.url, 'GET', `/music-a/fetch/${id}`, { key }), (r) => r.body.data?.status === 'SUCCESS' || r.body.data?.status === 'FAILURE', { timeoutMs: 60_000, what: `lyrics task ${id} to end` });

  it('runs there at once while it has a free slot; beyond its slots the job is queued and fetched', async () => {
    const keys = await Promise.all(['taken-a', 'taken-b', 'taken-c'].map((owner) => t.createKey(owner)));
    // one first, to its end (taken, or fetched if it came before the worker's first fetch had ended): since, the
    // worker's fetches have found the queue empty, so it waits for work
    const first = await submit(keys[0], 'a first song');
    expect((await ended(keys[0], first)).body.data.status).toBe('SUCCESS');
    expect((await jobOf(first)).state).toBe('completed');
    // three at once for a worker of two slots (each step takes 3 s): two taken here, the third queued
    const ids = await Promise.all(keys.map((key, i) => submit(key, `song ${i}`)));
    const jobs = await Promise.all(ids.map(jobOf));
    expect(jobs.map((j) => j.taken).sort()).toEqual([false, true, true]);
    const queued = ids[jobs.findIndex((j) => !j.taken)];
    for (const [i, id] of ids.entries()) expect((await ended(keys[i], id)).body.data.status).toBe('SUCCESS');
    // the queued one ran once a slot freed, fetched as any job is
    expect(await jobOf(queued)).toEqual({ state: 'completed', taken: false });
  });
});

/**
 * The scout looks, every 500 ms, for queues with a job ready to start. pg-boss keeps every completed job in
 * its queue's partition for days; a look must read its index on waiting jobs, not the partition, even when
 * the planner's statistics were taken while most of those jobs still waited (a burst not yet run).
 */
describe("the queue's scout", () => {
  let t: TestApp;
  let client: pg.Client;
  beforeAll(async () => {
    t = await startTestApp({ ROLE: 'api' }); // no worker: nothing runs the jobs written here, and no scout looks
    client = new pg.Client({ connectionString: t.db.url });
    await client.connect();
  });
  afterAll(async () => {
    await client.end();
    await t.close();
  });

  /** Sequential scans of the queue's partition while `look` runs, as PostgreSQL counts them. */
  async function scansDuring(partition: string, look: () => Promise<unknown>): Promise<number> {
    const count = async () => {
      await client.query('SELECT pg_stat_force_next_flush()');
      await client.query('SELECT pg_stat_clear_snapshot()');
      const { rows } = await client.query<{ n: string }>('SELECT seq_scan AS n FROM pg_stat_user_tables WHERE schemaname = $1 AND relname = $2', ['pgboss', partition]);
      return Number(rows[0].n);
    };
    const before = await count();
    await look();
    return (await count()) - before;
  }

  it('finds a ready job by the index, never a scan of the jobs kept, whatever the statistics say', async () => {
    const queue = 'lyrics.run';
    const { rows } = await client.query<{ partition_name: string }>('SELECT partition_name FROM pgboss.queue WHERE name = $1', [queue]);
    const partition = rows[0].partition_name;
    // statistics taken while 2,000 jobs waited; then they ran (and are kept)
    await client.query(`INSERT INTO pgboss.job (id, name, data) SELECT gen_random_uuid(), $1, '{}'::jsonb FROM generate_series(1, 2000)`, [queue]);
    await client.query(`ANALYZE pgboss.${partition}`);
    await client.query(`UPDATE pgboss.job SET state = 'completed', completed_on = now() WHERE name = $1`, [queue]);
    const look = async () => (await client.query<{ name: string }>(QUEUES_WITH_JOBS_READY_SQL, [[queue, 'wav.run']])).rows.map((r) => r.name);

    // the other side: the look as one plain statement, planned with those statistics, scans the partition
    const plain = `SELECT q.name FROM unnest($1::text[]) AS q(name) WHERE EXISTS (SELECT 1 FROM pgboss.job j WHERE j.name = q.name AND j.state < 'active' AND j.start_after < now())`;
    expect(await scansDuring(partition, () => client.query(plain, [[queue]]))).toBeGreaterThan(0);

    let found: string[] = [];
    expect(await scansDuring(partition, async () => (found = await look()))).toBe(0);
    expect(found).toEqual([]);
    // a job due later is not ready; one due now is
    await client.query(`INSERT INTO pgboss.job (id, name, data, start_after) VALUES (gen_random_uuid(), $1, '{}'::jsonb, now() + interval '1 hour')`, [queue]);
    expect(await look()).toEqual([]);
    await client.query(`INSERT INTO pgboss.job (id, name, data) VALUES (gen_random_uuid(), $1, '{}'::jsonb)`, [queue]);
    expect(await scansDuring(partition, async () => (found = await look()))).toBe(0);
    expect(found).toEqual([queue]);
  });
});
