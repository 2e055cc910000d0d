import pg from 'pg';
import { Statement } from '../../src/infra/prisma/statement.js';
import { LimitsRepository } from '../../src/modules/limits/limits.repository.js';
import { png } from '../support/images.js';
import { pollUntil } from '../support/poll.js';
import { api, queryDb as sql, startTestApp, type TestApp } from '../support/test-app.js';

const ADMIN = 'admin-secret-0123456789abcdef';
const VIDEO = '/video-b/v1/generations';
const EXPAND = '/video-a/v1/images/editing/expand';

/**
 * Concurrent submissions go to the database together, in one statement (TaskIntake), several owners' too: what
 * each answers must be what it would have answered alone, in arrival order.
 */
describe("grouping an owner's concurrent submissions", () => {
  let t: TestApp;
  beforeAll(async () => {
    // a submission may wait that long for a statement: the test that holds statements back has time to see them all wait
    t = await startTestApp({ ROLE: 'api', ADMIN_API_KEY: ADMIN, DATABASE_POOL_TIMEOUT_MS: '30000' });
  });
  afterAll(() => t.close());

  const transactions = async (ids: string[]) => (await sql<{ n: number }>(t.db, 'SELECT count(DISTINCT xmin::text)::int AS n FROM tasks WHERE id = ANY($1::uuid[])', [ids]))[0].n;

  it('admits exactly up to the limit among 40 at once, each job ranked by the slots held before it', async () => {
    const key = await t.createKey('burst');
    await api(t.url, 'PUT', '/admin/owners/burst/limits', { key: ADMIN, body: { max_concurrent_tasks: 25 } });
    const answers = await Promise.all(Array.from({ length: 40 }, (_, i) => api(t.url, 'POST', VIDEO, { key, body: { prompt: `burst ${i}` } })));
    const ok = answers.filter((a) => a.status === 201);
    expect(ok).toHaveLength(25);
    expect(answers.filter((a) => a.status === 429).map((a) => a.body.code)).toEqual(Array(15).fill(1303));
    const ids = ok.map((a) => a.body.id as string);
    // fewer transactions than tasks: they were grouped (and still one transaction each group)
    expect(await transactions(ids)).toBeLessThan(25);
    const [counter] = await sql<{ active_slots: number }>(t.db, "SELECT active_slots FROM owner_counters WHERE owner = 'burst'");
    expect(counter.active_slots).toBe(25);
    // each job's priority is minus the slots its owner held before it: 0, -1, … -24, once each
    const priorities = await sql<{ priority: number }>(t.db, "SELECT priority FROM pgboss.job WHERE name = 'video.run' AND (data->>'taskId')::uuid = ANY($1::uuid[]) ORDER BY priority DESC", [ids]);
    expect(priorities.map((p) => p.priority)).toEqual(Array.from({ length: 25 }, (_, i) => (i === 0 ? 0 : -i)));
  });

  it("groups several owners' submissions into one statement, each owner admitted under its own limits and ranked by its own slots", async () => {
    const owners = ['mix-a', 'mix-b', 'mix-c'];
    const keys = await Promise.all(owners.map((o) => t.createKey(o)));
    await api(t.url, 'PUT', '/admin/owners/mix-a/limits', { key: ADMIN, body: { max_concurrent_tasks: 3 } });
    await api(t.url, 'PUT', '/admin/owners/mix-b/limits', { key: ADMIN, body: { max_concurrent_tasks: 5 } });
    // Which submissions share a statement depends on when they come; held here so that it does not. Another
    // session holds mix-a's and mix-b's counter rows: their first submissions take both statements of
    // acceptance and wait there on the rows; the other 22 (all three owners') then wait in the gateway for a
    // statement (mgw_intake_waiting); let go, the first statement to end frees a slot for what waits of the
    // owners not in the other: some of mix-c's with mix-a's or mix-b's, in one statement.
    const month = new Date().toISOString().slice(0, 7);
    for (const owner of owners) await sql(t.db, 'INSERT INTO owner_counters (owner, active_slots, credits_month, credits_used) VALUES ($1, 0, $2, 0) ON CONFLICT (owner) DO NOTHING', [owner, month]);
    const holder = new pg.Client({ connectionString: t.db.url });
    await holder.connect();
    const send = (i: number) => ({ owner: owners[i % 3], answer: api(t.url, 'POST', VIDEO, { key: keys[i % 3], body: { prompt: `mix ${i}` } }) });
    const sent: ReturnType<typeof send>[] = [];
    try {
      await holder.query('BEGIN');
      await holder.query("SELECT 1 FROM owner_counters WHERE owner IN ('mix-a', 'mix-b') FOR UPDATE");
      sent.push(send(0), send(1));
      const blocked = async () =>
        (await sql<{ n: number }>(t.db, "SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock' AND query LIKE 'WITH admitted AS%'"))[0].n;
      await pollUntil(blocked, (n) => n === 2, { what: "mix-a's and mix-b's first statements waiting on their counter rows" });
      // eight of each in all, interleaved
      for (let i = 2; i < 24; i++) sent.push(send(i));
      const waiting = async () => Number(/^mgw_intake_waiting (\d+)$/m.exec(await t.metrics())?.[1] ?? -1);
      await pollUntil(waiting, (n) => n === 22, { what: 'the other 22 submissions waiting for a statement' });
    } finally {
      await holder.query('COMMIT').catch(() => undefined);
      await holder.end();
    }
    const answers = await Promise.all(sent.map(async (s) => ({ owner: s.owner, ...(await s.answer) })));
    const statuses = (owner: string) => answers.filter((a) => a.owner === owner).map((a) => a.status).sort();
    expect(statuses('mix-a')).toEqual([...Array(3).fill(201), ...Array(5).fill(429)]);
    expect(statuses('mix-b')).toEqual([...Array(5).fill(201), ...Array(3).fill(429)]);
    expect(statuses('mix-c')).toEqual(Array(8).fill(201));
    const counters = await sql<{ owner: string; active_slots: number }>(t.db, 'SELECT owner, active_slots FROM owner_counters WHERE owner = ANY($1) ORDER BY owner', [owners]);
    expect(counters).toEqual([
      { owner: 'mix-a', active_slots: 3 },
      { owner: 'mix-b', active_slots: 5 },
      { owner: 'mix-c', active_slots: 8 },
    ]);
    // tasks of different owners went in one transaction
    const [mixed] = await sql<{ owners: number }>(t.db, 'SELECT max(n)::int AS owners FROM (SELECT count(DISTINCT owner) AS n FROM tasks WHERE owner = ANY($1) GROUP BY xmin::text) x', [owners]);
    expect(mixed.owners).toBeGreaterThan(1);
    // each owner's jobs ranked by the slots that owner held before each: 0, -1, … once each
    for (const [owner, admitted] of [['mix-a', 3], ['mix-b', 5], ['mix-c', 8]] as const) {
      const priorities = await sql<{ priority: number }>(t.db, "SELECT j.priority FROM pgboss.job j JOIN tasks x ON x.id = (j.data->>'taskId')::uuid WHERE j.name = 'video.run' AND x.owner = $1 ORDER BY j.priority DESC", [owner]);
      expect(priorities.map((p) => p.priority)).toEqual(Array.from({ length: admitted }, (_, i) => (i === 0 ? 0 : -i)));
    }
  });

  it("an end of several owners' tasks locks their counters in the order of their names, as an admission does", async () => {
    // the counter rows stored z before a (a scan meets z first), one task each
    const owners = ['order-zz', 'order-aa'];
    for (const owner of owners) await sql(t.db, 'INSERT INTO owner_counters (owner, active_slots, credits_month, credits_used) VALUES ($1, 1, $2, 0)', [owner, new Date().toISOString().slice(0, 7)]);
    const ids: string[] = [];
    for (const owner of owners) {
      const [row] = await sql<{ id: string }>(t.db, "INSERT INTO tasks (id, kind, owner, params, job_id, deadline_at) VALUES (gen_random_uuid(), 'video', $1, '{}', gen_random_uuid(), now() + interval '1 hour') RETURNING id", [owner]);
      ids.push(row.id);
    }
    const s = new Statement();
    const release = `WITH ${LimitsRepository.releaseCtes(s, `SELECT kind, owner, slots, credits, created_at FROM tasks WHERE id = ANY(${s.param(ids)}::uuid[])`, false, new Date().toISOString().slice(0, 7)).join(',\n')} SELECT * FROM settled`;
    const [holder, ender, prober] = [new pg.Client({ connectionString: t.db.url }), new pg.Client({ connectionString: t.db.url }), new pg.Client({ connectionString: t.db.url })];
    await Promise.all([holder, ender, prober].map((c) => c.connect()));
    try {
      // another statement holds order-aa's row: the end waits for it before it takes order-zz's
      await holder.query('BEGIN');
      await holder.query("SELECT 1 FROM owner_counters WHERE owner = 'order-aa' FOR UPDATE");
      await ender.query('BEGIN');
      const ending = ender.query(release, s.values);
      await pollUntil(async () => (await sql<{ n: number }>(t.db, "SELECT count(*)::int AS n FROM pg_locks WHERE NOT granted AND pid = $1", [(ender as unknown as { processID: number }).processID]))[0].n, (n) => n > 0, { timeoutMs: 10_000, what: 'the end waiting for order-aa' });
      // so order-zz's row is free meanwhile (taken first, it would be held while the end waits: a cycle with an admission of both)
      await prober.query('BEGIN');
      await expect(prober.query("SELECT 1 FROM owner_counters WHERE owner = 'order-zz' FOR UPDATE NOWAIT")).resolves.toBeDefined();
      await prober.query('ROLLBACK');
      await holder.query('COMMIT');
      expect((await ending).rows.map((r: { owner: string }) => r.owner).sort()).toEqual(['order-aa', 'order-zz']);
      await ender.query('COMMIT');
      expect(await sql(t.db, 'SELECT owner, active_slots FROM owner_counters WHERE owner = ANY($1) ORDER BY owner', [owners])).toEqual([
        { owner: 'order-aa', active_slots: 0 },
        { owner: 'order-zz', active_slots: 0 },
      ]);
    } finally {
      await Promise.all([holder, ender, prober].map((c) => c.end()));
    }
  });

  it('answers a duplicate external_task_id 409 to the one that has it; the others of its group are accepted', async () => {
    const key = await t.createKey('dups');
    const image = (await png(320, 320)).toString('base64');
    const body = (external: string) => ({ image, up_expansion_ratio: 0.1, bottom_expansion_ratio: 0.1, left_expansion_ratio: 0.1, right_expansion_ratio: 0.1, external_task_id: external });
    const answers = await Promise.all(['same', 'other-1', 'same', 'other-2', 'same'].map((external) => api(t.url, 'POST', EXPAND, { key, body: body(external) })));
    expect(answers.map((a) => a.status).sort()).toEqual([200, 200, 200, 409, 409]);
    expect(answers.filter((a) => a.status === 409).map((a) => a.body.message)).toEqual(Array(2).fill('external_task_id "same" is already used by another of your tasks'));
    const rows = await sql<{ external_id: string; inputs: number }>(t.db, "SELECT external_id, (SELECT count(*)::int FROM expand_inputs WHERE task_id = t.id) AS inputs FROM tasks t WHERE owner = 'dups' ORDER BY external_id");
    expect(rows).toEqual([
      { external_id: 'other-1', inputs: 1 },
      { external_id: 'other-2', inputs: 1 },
      { external_id: 'same', inputs: 1 },
    ]);
    const [counter] = await sql<{ active_slots: number }>(t.db, "SELECT active_slots FROM owner_counters WHERE owner = 'dups'");
    expect(counter.active_slots).toBe(3);
  });

  it('stores the detail rows of the admitted only (a refused expand leaves no input image behind)', async () => {
    const key = await t.createKey('details');
    await api(t.url, 'PUT', '/admin/owners/details/limits', { key: ADMIN, body: { max_concurrent_tasks: 4 } });
    const image = (await png(320, 320)).toString('base64');
    const answers = await Promise.all(
      Array.from({ length: 6 }, () => api(t.url, 'POST', EXPAND, { key, body: { image, up_expansion_ratio: 0.1, bottom_expansion_ratio: 0.1, left_expansion_ratio: 0.1, right_expansion_ratio: 0.1, n: 2 } })),
    );
    expect(answers.map((a) => a.status).sort()).toEqual([200, 200, 429, 429, 429, 429]);
    const [stored] = await sql<{ tasks: number; inputs: number }>(
      t.db,
      "SELECT count(*)::int AS tasks, (SELECT count(*)::int FROM expand_inputs i JOIN tasks x ON x.id = i.task_id WHERE x.owner = 'details') AS inputs FROM tasks WHERE owner = 'details'",
    );
    expect(stored).toEqual({ tasks: 2, inputs: 2 });
  });

  it("rebuilds a missing counter row from the task table, for a report and for an admission (leaving out what it admits)", async () => {
    const key = await t.createKey('rebuild');
    await api(t.url, 'PUT', '/admin/owners/rebuild/limits', { key: ADMIN, body: { max_concurrent_tasks: 100, monthly_credits: 1000 } });
    const ids = [];
    for (let i = 0; i < 3; i++) ids.push((await api(t.url, 'POST', VIDEO, { key, body: { prompt: `rebuild ${i}` } })).body.id as string);
    // one of them failed (its credits were given back), and the counters are lost (an unlogged table after a crash, say)
    await sql(t.db, "UPDATE tasks SET state = 'failed', finished_at = now() WHERE id = $1", [ids[0]]);
    await sql(t.db, "DELETE FROM owner_counters WHERE owner = 'rebuild'");
    const report = await api(t.url, 'GET', '/admin/owners/rebuild/limits', { key: ADMIN });
    expect([report.body.usage.active_slots, report.body.usage.credits_used]).toEqual([2, 10]);
    await sql(t.db, "DELETE FROM owner_counters WHERE owner = 'rebuild'");
    expect((await api(t.url, 'POST', VIDEO, { key, body: { prompt: 'after the loss' } })).status).toBe(201);
    expect(await sql(t.db, "SELECT active_slots, credits_used FROM owner_counters WHERE owner = 'rebuild'")).toEqual([{ active_slots: 3, credits_used: 15 }]);
  });
});
