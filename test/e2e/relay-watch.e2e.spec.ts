import { createHmac } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { POLL_LEASE_S } from '../../src/modules/upstream-watch/upstream-poller.js';
import { AppSecretsRepository } from '../../src/infra/prisma/app-secrets.repository.js';
import { Child } from '../support/child-process.js';
import type { FakeUpstream } from '../support/fake-upstreams.js';
import { startFakeKling } from '../support/vendors/kling/kling.fake.js';
import { freePort } from '../support/free-port.js';
import { png } from '../support/images.js';
import { pollUntil } from '../support/poll.js';
import { api, createKeyThrough, createTestDatabase, queryDb, startTestApp, type TestApp } from '../support/test-app.js';

const EXPAND = '/video-a/v1/images/editing/expand';
const RATIOS = { up_expansion_ratio: 0.1, bottom_expansion_ratio: 0.1, left_expansion_ratio: 0.1, right_expansion_ratio: 0.1 };
const ADMIN = 'admin-secret-0123456789';
const SECRET_KEY = 'a'.repeat(64);
const KLING: [string, string] = ['ak-watch-0000001', 'sk-watch-secret-0001'];
/** A killed instance's batch is taken again once its lease (POLL_LEASE_S, or until the task's next poll) has run out. */
const POLL_LEASE_MS = POLL_LEASE_S * 1000;
/**
 * Tasks in flight on the two instances: several batches each (a batch is at most RELAY_CONCURRENCY × 2, 64 by
 * default), so both take batches from the same due tasks at once. What thousands in flight cost is measured by
 * `npm run bench -- inflight` (1,000 and 10,000 tasks), not here.
 */
const IN_FLIGHT = 250;

/** Counts of the tasks' states. */
async function states(db: { url: string; name: string; drop(): Promise<void> }, ids: string[]): Promise<Record<string, number>> {
  const rows = await queryDb<{ state: string; n: number }>(db, 'SELECT state::text, count(*)::int AS n FROM tasks WHERE id = ANY($1::uuid[]) GROUP BY state', [ids]);
  return Object.fromEntries(rows.map((r) => [r.state, r.n]));
}

describe('waiting on upstreams: watched in batches by every instance, not re-queued', () => {
  it(`${IN_FLIGHT} tasks in flight on two instances, one killed while polling: each ends once, no task is polled by both at once, none is lost`, async () => {
    const other: [string, string] = ['ak-watch-0000002', 'sk-watch-secret-0002'];
    const kling = await startFakeKling(KLING[0], KLING[1], [other]);
    kling.knobs.hold = true;
    // each poll is answered after 200 ms: two pollers asking about one task at once would overlap at the fake
    kling.knobs.queryDelayMs = 200;
    const db = await createTestDatabase({ migrated: true });
    const dir = await mkdtemp(path.join(tmpdir(), 'mgw-watch-'));
    // each instance signs with an account of its own, so the fake tells their polls apart
    const common = {
      DATABASE_URL: db.url,
      EXPAND_PROVIDER: 'relay',
      RELAY_EXPAND_URL: kling.url,
      OUTBOUND_ALLOW_HOSTS: '127.0.0.1',
      RELAY_POLL_MS: '1000',
      LOG_LEVEL: 'warn',
      DEFAULT_REQUESTS_PER_MINUTE: '1000000',
      ADMIN_API_KEY: ADMIN,
      // the sample below is the service's own under its public base: handed on as it is, never fetched
      PUBLIC_BASE_URL: 'https://gateway.example',
    };
    const start = async (name: string, [access, secret]: [string, string]) => {
      const port = await freePort();
      const child = Child.start('dist/main.js', [], { ...common, PORT: String(port), DATA_DIR: path.join(dir, name), RELAY_KLING_ACCESS_KEY: access, RELAY_KLING_SECRET_KEY: secret });
      await child.waitFor(/listening on/, 90_000);
      return { child, url: `http://127.0.0.1:${port}` };
    };
    const [a, b] = await Promise.all([start('a', KLING), start('b', other)]);
    try {
      const key = await createKeyThrough(a.url, ADMIN, 'watch');
      // an image URL: the relay passes it on to Kling, so accepting the tasks decodes no image
      const image = 'https://gateway.example/samples/photo.png';
      const ids: string[] = [];
      let next = 0;
      await Promise.all(
        Array.from({ length: 16 }, async () => {
          while (next < IN_FLIGHT) {
            const i = next++;
            const res = await api(i % 2 ? a.url : b.url, 'POST', EXPAND, { key, body: { image, ...RATIOS, n: 1 }, unchecked: true });
            expect(res.status).toBe(200);
            ids.push(res.body.data.task_id as string);
          }
        }),
      );
      await pollUntil(async () => kling.created.size, (n) => n === IN_FLIGHT, { timeoutMs: 120_000, intervalMs: 500, what: `the ${IN_FLIGHT} creates` });
      // both instances poll; kill A while its polls are in flight: the upstream stops answering A's
      // account, so A holds the batch those polls belong to until it dies
      await pollUntil(async () => new Set(kling.queries!.map((q) => q.account)).size, (n) => n === 2, { timeoutMs: 60_000, what: 'both instances to poll' });
      const held = () => queryDb<{ n: number }>(db, 'SELECT count(*)::int AS n FROM task_watches WHERE lease_owner LIKE $1', [`poll-${a.child.process.pid}-%`]);
      kling.knobs.stallAccount = KLING[0];
      await pollUntil(async () => kling.stalled!.length, (n) => n > 0, { timeoutMs: 60_000, what: 'a poll of A to be in flight' });
      expect((await held())[0].n).toBeGreaterThan(0);
      a.child.process.kill('SIGKILL');
      await a.child.exited;
      kling.knobs.stallAccount = undefined;
      expect((await held())[0].n).toBeGreaterThan(0);
      // B takes A's batch once its lease has run out, and goes on polling everything
      await pollUntil(held, (rows) => rows[0].n === 0, { timeoutMs: POLL_LEASE_MS + 60_000, what: "A's batch to be taken again" });
      // the upstream finishes them all: each succeeds once, through B
      kling.knobs.hold = false;
      await pollUntil(() => states(db, ids), (s) => s.succeeded === IN_FLIGHT, { timeoutMs: 240_000, intervalMs: 1000, what: 'every task to succeed' });
      const [media] = await queryDb<{ files: number; tasks: number }>(db, "SELECT count(*)::int AS files, count(DISTINCT task_id)::int AS tasks FROM media WHERE role = 'image' AND task_id = ANY($1::uuid[])", [ids]);
      expect(media).toEqual({ files: IN_FLIGHT, tasks: IN_FLIGHT });
      // each created upstream exactly once
      expect(new Set([...kling.created.values()].map((t) => t.body.external_task_id)).size).toBe(IN_FLIGHT);
      // never two polls of one task at once: no query arrived while another of the same task was being answered
      expect(kling.overlaps).toEqual([]);
      expect(kling.queries!.length).toBeGreaterThan(2 * IN_FLIGHT);
      // waiting tasks are rows of task_watches, not jobs: nothing was queued per poll
      const [jobs] = await queryDb<{ n: number }>(db, "SELECT (SELECT count(*) FROM pgboss.job WHERE name = 'expand.run') + (SELECT count(*) FROM pgboss.archive WHERE name = 'expand.run') AS n");
      expect(Number(jobs.n)).toBeLessThan(IN_FLIGHT * 3);
    } finally {
      await a.child.stop('SIGKILL').catch(() => undefined);
      await b.child.stop('SIGTERM').catch(() => b.child.stop('SIGKILL'));
      await kling.close();
      await db.drop();
      await rm(dir, { recursive: true, force: true });
    }
  }, 600_000);
});

/** Kling's fake and an app relaying expand to it, asking it to call back, with the safety poll `pollS` seconds away. */
async function startCallingBack(pollS: number): Promise<{ kling: FakeUpstream; t: TestApp }> {
  const kling = await startFakeKling(KLING[0], KLING[1]);
  // the base upstreams would reach; the test calls the route on the app itself
  const t = await startTestApp({
    EXPAND_PROVIDER: 'relay',
    RELAY_EXPAND_URL: kling.url,
    RELAY_KLING_ACCESS_KEY: KLING[0],
    RELAY_KLING_SECRET_KEY: KLING[1],
    OUTBOUND_ALLOW_HOSTS: '127.0.0.1',
    RELAY_POLL_MS: '100',
    UPSTREAM_CALLBACK_BASE_URL: 'https://gateway.example',
    UPSTREAM_CALLBACK_POLL_S: String(pollS),
    ADMIN_API_KEY: ADMIN,
  });
  return { kling, t };
}

describe('upstream callbacks', () => {
  let kling: FakeUpstream;
  let t: TestApp;
  let key: string;
  let image: string;
  beforeAll(async () => {
    ({ kling, t } = await startCallingBack(2));
    key = await t.createKey('team-callbacks');
    image = (await png(300, 300)).toString('base64');
  });
  afterAll(async () => {
    await t.close();
    await kling.close();
  });

  const callbacksMetric = async (outcome: string) => Number(new RegExp(`mgw_upstream_callbacks_total\\{outcome="${outcome}"\\} (\\d+)`).exec(await t.metrics())?.[1] ?? 0);
  const submit = async () => {
    const id = (await api(t.url, 'POST', EXPAND, { key, body: { image, ...RATIOS, n: 1 } })).body.data.task_id as string;
    await pollUntil(async () => [...kling.created.values()].find((c) => c.body.external_task_id === id), Boolean, { what: 'the create upstream' });
    return id;
  };
  const upstreamOf = (id: string) => [...kling.created.entries()].find(([, c]) => c.body.external_task_id === id)!;
  const queriesOf = (id: string) => kling.queries!.filter((q) => q.id === upstreamOf(id)[0]);
  /**
   * The task's queries that came before its safety poll could be due: that poll comes 2 s ±10 % after the task
   * began to wait, which is after its create reached the fake. Times the fake recorded, not a count read at some
   * moment: on a slow machine the safety poll may well have come by the time the test looks, and it is no early poll.
   */
  const earlyQueriesOf = (id: string) => queriesOf(id).filter((q) => q.at < upstreamOf(id)[1].at! + 1700);

  it('asks the upstream to call back on a route per task with an unguessable token; a callback makes the poll come now, and its content is not trusted', async () => {
    kling.knobs.hold = true;
    const id = await submit();
    const callbackUrl = String(upstreamOf(id)[1].body.callback_url);
    expect(callbackUrl).toMatch(new RegExp(`^https://gateway\\.example/upstream-callbacks/${id}/[A-Za-z0-9_-]{43}$`));
    const route = new URL(callbackUrl).pathname;
    // with a callback pending, polls are the safety net (2 s ±10 %), though RELAY_POLL_MS is 100
    const [watch] = await pollUntil(
      () => queryDb<{ callback_pending: boolean; in_s: number }>(t.db, 'SELECT callback_pending, extract(epoch FROM poll_at - created_at)::float8 AS in_s FROM task_watches WHERE task_id = $1', [id]),
      (rows) => rows.length === 1,
      { what: 'the task to be watched' },
    );
    expect(watch.callback_pending).toBe(true);
    expect(watch.in_s).toBeGreaterThanOrEqual(1.7);
    expect(earlyQueriesOf(id)).toEqual([]);
    // Kling calls back (saying it succeeded): the task's upstream is asked at once, and still says processing
    const before = await callbacksMetric('polled');
    const answer = await api(t.url, 'POST', route, { body: { task_id: upstreamOf(id)[0], task_status: 'succeed', task_result: { images: [{ index: 0, url: 'https://evil.example/x.png' }] } } });
    expect([answer.status, answer.body]).toEqual([200, { received: true }]);
    await pollUntil(async () => queriesOf(id).length, (n) => n >= 1, { timeoutMs: 5000, what: 'the poll the callback asked for' });
    expect(await callbacksMetric('polled')).toBe(before + 1);
    expect((await api(t.url, 'GET', `${EXPAND}/${id}`, { key })).body.data.task_status).toBe('processing');
    // it finishes when the upstream says so; then a replay of the callback changes nothing
    kling.knobs.hold = false;
    await api(t.url, 'POST', route, { body: {} });
    await pollUntil(() => api(t.url, 'GET', `${EXPAND}/${id}`, { key }), (r) => r.body.data.task_status === 'succeed', { what: 'the task to succeed' });
    const unknownBefore = await callbacksMetric('unknown');
    const polls = queriesOf(id).length;
    const replay = await api(t.url, 'POST', route, { body: { task_status: 'failed' } });
    expect(replay.status).toBe(200);
    expect(await callbacksMetric('unknown')).toBe(unknownBefore + 1);
    expect(queriesOf(id).length).toBe(polls);
    expect((await api(t.url, 'GET', `${EXPAND}/${id}`, { key })).body.data.task_status).toBe('succeed');
  });

  it('a forged token, or a token for another task, answers 404 and changes nothing; a task that does not exist changes nothing', async () => {
    kling.knobs.hold = true;
    const id = await submit();
    const route = new URL(String(upstreamOf(id)[1].body.callback_url)).pathname;
    const token = route.split('/')[3];
    const polledBefore = await callbacksMetric('polled');
    const forgedBefore = await callbacksMetric('forged');
    const forged = await api(t.url, 'POST', `/upstream-callbacks/${id}/${token.slice(0, -1)}${token.endsWith('A') ? 'B' : 'A'}`, { body: {} });
    expect([forged.status, forged.body.code]).toEqual([404, 1203]);
    const other = await submit();
    const crossed = await api(t.url, 'POST', `/upstream-callbacks/${other}/${token}`, { body: {} });
    expect(crossed.status).toBe(404);
    expect(await callbacksMetric('forged')).toBe(forgedBefore + 2);
    const bad = await api(t.url, 'POST', '/upstream-callbacks/not-a-task/x', { body: {} });
    expect(bad.status).toBe(400);
    // a valid token (the service's own key) for a task that does not exist: nothing to poll
    const value = await t.app.get(AppSecretsRepository).findOrCreate('upstream_callback_key');
    const ghost = '00000000-0000-4000-8000-000000000000';
    const ghostToken = createHmac('sha256', Buffer.from(value, 'base64url')).update(ghost).digest('base64url');
    const unknownBefore = await callbacksMetric('unknown');
    expect((await api(t.url, 'POST', `/upstream-callbacks/${ghost}/${ghostToken}`, { body: {} })).status).toBe(200);
    expect(await callbacksMetric('unknown')).toBe(unknownBefore + 1);
    // the watched tasks were not polled early by any of these: none asked for a poll, and none came before the safety poll
    expect(await callbacksMetric('polled')).toBe(polledBefore);
    expect([...earlyQueriesOf(id), ...earlyQueriesOf(other)]).toEqual([]);
    kling.knobs.hold = false;
  });

  it('a task whose callback never comes still ends: the safety net polls it (UPSTREAM_CALLBACK_POLL_S)', async () => {
    kling.knobs.hold = false;
    kling.knobs.pollsUntilDone = 2;
    const id = await submit();
    await pollUntil(() => api(t.url, 'GET', `${EXPAND}/${id}`, { key }), (r) => r.body.data.task_status === 'succeed', { timeoutMs: 20_000, what: 'the task to succeed without a callback' });
    // polled on the safety net's schedule (2 s, ±10 %), not RELAY_POLL_MS's 100 ms
    const times = queriesOf(id).map((q) => q.at);
    expect(times.length).toBeGreaterThanOrEqual(2);
    expect(times[1] - times[0]).toBeGreaterThanOrEqual(1700);
  });
});

describe('upstream callbacks, with the safety poll 300 s away', () => {
  let kling: FakeUpstream;
  let t: TestApp;
  let key: string;
  beforeAll(async () => {
    ({ kling, t } = await startCallingBack(300));
    key = await t.createKey('team-callbacks-300');
  });
  afterAll(async () => {
    await t.close();
    await kling.close();
  });

  // Before: the poll a first callback asked for held the task's lease until its next poll, 300 s away, and every later callback was
  // taken for one already due: a task Kling said had succeeded waited for the safety poll.
  it('a second callback, right after the poll the first asked for (during it or after it), is polled at once too', async () => {
    kling.knobs.hold = false;
    kling.knobs.pollsUntilDone = 2; // the first poll says processing, the second succeed
    const id = (await api(t.url, 'POST', EXPAND, { key, body: { image: (await png(300, 300)).toString('base64'), ...RATIOS, n: 1 } })).body.data.task_id as string;
    const [upstreamId, create] = (await pollUntil(async () => [...kling.created.entries()].find(([, c]) => c.body.external_task_id === id), Boolean, { what: 'the create upstream' }))!;
    const route = new URL(String(create.body.callback_url)).pathname;
    await pollUntil(() => queryDb(t.db, 'SELECT 1 FROM task_watches WHERE task_id = $1', [id]), (rows) => rows.length === 1, { what: 'the task to be watched' });
    const queries = () => kling.queries!.filter((q) => q.id === upstreamId).length;
    expect(queries()).toBe(0);
    expect((await api(t.url, 'POST', route, { body: { task_status: 'processing' } })).status).toBe(200);
    await pollUntil(async () => queries(), (n) => n >= 1, { timeoutMs: 5000, what: 'the poll the first callback asked for' });
    expect((await api(t.url, 'POST', route, { body: { task_status: 'succeed' } })).status).toBe(200);
    await pollUntil(() => api(t.url, 'GET', `${EXPAND}/${id}`, { key }), (r) => r.body.data.task_status === 'succeed', { timeoutMs: 8000, what: 'the task to succeed after the second callback' });
    // the two polls the callbacks asked for; the step stores the result the second read, without asking again
    expect(queries()).toBe(2);
  });

  // no poll for 300 s and no callback: the watch row stays as the create's step wrote it
  it("the create's step completes its job in the statement that has the task watched", async () => {
    kling.knobs.hold = false;
    const id = (await api(t.url, 'POST', EXPAND, { key, body: { image: (await png(300, 300)).toString('base64'), ...RATIOS, n: 1 } })).body.data.task_id as string;
    await pollUntil(() => queryDb(t.db, 'SELECT 1 FROM task_watches WHERE task_id = $1', [id]), (rows) => rows.length === 1, { what: 'the task to be watched' });
    const rows = await queryDb<{ state: string; same: boolean }>(t.db, 'SELECT j.state, j.xmin = w.xmin AS same FROM task_watches w JOIN tasks k ON k.id = w.task_id JOIN pgboss.job j ON j.id = k.job_id WHERE w.task_id = $1', [id]);
    expect(rows).toEqual([{ state: 'completed', same: true }]);
  });
});

describe('the lease a poll holds', () => {
  // Before: every poll held its task 12 s, and a task due again sooner was let go of by a second write after the
  // poll (two rows written per poll). Now the lease ends at the next poll time, and only a slow poll writes more.
  it('a poll that ends at once leaves its lease to end at the next poll time, unwritten; a slow one has it extended while in flight and is never asked about twice at once', async () => {
    const kling = await startFakeKling(...KLING);
    kling.knobs.hold = true;
    // polls 5 s apart: each lease ends at its task's next poll time
    const t = await startTestApp({ EXPAND_PROVIDER: 'relay', RELAY_EXPAND_URL: kling.url, RELAY_KLING_ACCESS_KEY: KLING[0], RELAY_KLING_SECRET_KEY: KLING[1], OUTBOUND_ALLOW_HOSTS: '127.0.0.1', RELAY_POLL_MS: '5000', ADMIN_API_KEY: ADMIN });
    try {
      const key = await t.createKey('team-lease');
      const id = (await api(t.url, 'POST', EXPAND, { key, body: { image: (await png(300, 300)).toString('base64'), ...RATIOS, n: 1 } })).body.data.task_id as string;
      const [upstreamId] = (await pollUntil(async () => [...kling.created.entries()].find(([, c]) => c.body.external_task_id === id), Boolean, { what: 'the create upstream' }))!;
      const queries = () => kling.queries!.filter((q) => q.id === upstreamId);
      const watch = async () => (await queryDb<{ lease: Date | null; next: Date; owner: string | null }>(t.db, 'SELECT lease_until AS lease, poll_at AS next, lease_owner AS owner FROM task_watches WHERE task_id = $1', [id]))[0];
      await pollUntil(async () => queries().length, (n) => n >= 1, { timeoutMs: 30_000, what: 'the first poll' });
      // polled, nothing new: the row as the take left it, held by the poller until its next poll time, not past it
      const fast = await watch();
      expect(fast.owner).toMatch(/^poll-/);
      expect(fast.lease!.getTime()).toBeLessThanOrEqual(fast.next.getTime());
      await pollUntil(async () => queries().length, (n) => n >= 2, { timeoutMs: 30_000, what: 'the second poll' });
      expect((await watch()).lease!.getTime()).toBeLessThanOrEqual((await watch()).next.getTime());

      // polls answered after 6 s, past their lease (5 s ±10 %): held on while in flight, not taken again
      kling.knobs.queryDelayMs = 6000;
      const before = queries().length;
      const extended = await pollUntil(watch, (w) => w.lease !== null && w.lease.getTime() > w.next.getTime() + 5000, { timeoutMs: 30_000, what: 'a slow poll to have its lease extended' });
      expect(extended.owner).toMatch(/^poll-/);
      await pollUntil(async () => queries().length, (n) => n >= before + 2, { timeoutMs: 60_000, what: 'two slow polls to end' });
      expect(kling.overlaps).toEqual([]);
    } finally {
      await t.close();
      await kling.close();
    }
  });
});

describe('caps and refusals on polls', () => {
  // five times the cap at once: every create races the others for the channel's slots, on both instances
  const SIMULTANEOUS = 100;
  it(`max_running holds across two instances under ${SIMULTANEOUS} simultaneous creates, without counting the channel's tasks`, async () => {
    const kling = await startFakeKling(KLING[0], KLING[1]);
    kling.knobs.pollsUntilDone = 1;
    const env = { EXPAND_PROVIDER: 'relay', OUTBOUND_ALLOW_HOSTS: '127.0.0.1', RELAY_POLL_MS: '50', ADMIN_API_KEY: ADMIN, CHANNEL_SECRET_KEY: SECRET_KEY, DEFAULT_REQUESTS_PER_MINUTE: '1000000', LOG_LEVEL: 'warn' };
    const a = await startTestApp(env);
    const b = await startTestApp(env, { db: a.db });
    try {
      const channel = (await api(a.url, 'POST', '/admin/channels', { key: ADMIN, body: { name: 'capped', operations: ['expand'], protocol: 'kling', base_url: kling.url, credentials: { access_key: KLING[0], secret_key: KLING[1] }, max_running: 20 } })).body;
      const key = await a.createKey('team-capped');
      const image = (await png(300, 300)).toString('base64');
      const ids = await Promise.all(Array.from({ length: SIMULTANEOUS }, async (_, i) => (await api(i % 2 ? a.url : b.url, 'POST', EXPAND, { key, body: { image, ...RATIOS, n: 1 } })).body.data.task_id as string));
      await pollUntil(
        async () => {
          const [row] = await queryDb<{ running_tasks: number }>(a.db, 'SELECT running_tasks FROM channels WHERE id = $1', [channel.id]);
          expect(row.running_tasks).toBeLessThanOrEqual(20);
          return states(a.db, ids);
        },
        (s) => s.succeeded === SIMULTANEOUS,
        { timeoutMs: 240_000, intervalMs: 200, what: `the ${SIMULTANEOUS} tasks to succeed` },
      );
      expect(kling.created.size).toBe(SIMULTANEOUS);
      // what the upstream saw: at no moment more than 20 tasks created and not yet answered as finished
      const finishedAt = new Map<string, number>();
      for (const q of kling.queries!) if (!q.processing && !finishedAt.has(q.id)) finishedAt.set(q.id, q.at);
      const events = [...kling.created.entries()].flatMap(([id, c]): [number, number][] => [[c.at!, 1], [finishedAt.get(id)!, -1]]).sort((x, y) => x[0] - y[0] || x[1] - y[1]);
      let open = 0;
      let most = 0;
      for (const [, step] of events) most = Math.max(most, (open += step));
      expect(most).toBeLessThanOrEqual(20);
      expect(most).toBeGreaterThanOrEqual(10);
      const [row] = await queryDb<{ running_tasks: number }>(a.db, 'SELECT running_tasks FROM channels WHERE id = $1', [channel.id]);
      expect(row.running_tasks).toBe(0);
    } finally {
      await b.close();
      await a.close();
      await kling.close();
    }
  }, 300_000);

  it("a slot freed by a task's end goes at once to the task that waited longest for it, not at its postponed time", async () => {
    const kling = await startFakeKling(KLING[0], KLING[1]);
    kling.knobs.hold = true; // a task runs upstream until the test ends it
    // RELAY_POLL_MS 2000: a task that finds every channel full is postponed 30 s (nothing sent meanwhile)
    const t = await startTestApp({ EXPAND_PROVIDER: 'relay', OUTBOUND_ALLOW_HOSTS: '127.0.0.1', RELAY_POLL_MS: '2000', ADMIN_API_KEY: ADMIN, CHANNEL_SECRET_KEY: SECRET_KEY });
    try {
      await api(t.url, 'POST', '/admin/channels', { key: ADMIN, body: { name: 'one-slot', operations: ['expand'], protocol: 'kling', base_url: kling.url, credentials: { access_key: KLING[0], secret_key: KLING[1] }, max_running: 1 } });
      const key = await t.createKey('team-one-slot');
      const image = (await png(300, 300)).toString('base64');
      const submit = async () => (await api(t.url, 'POST', EXPAND, { key, body: { image, ...RATIOS, n: 1 } })).body.data.task_id as string;
      await submit();
      await pollUntil(async () => kling.created.size, (n) => n === 1, { what: 'the first task to be created upstream' });
      const second = await submit();
      const postponed = async () => (await queryDb<{ later: boolean }>(t.db, `SELECT started_at > now() + interval '20 seconds' AS later FROM tasks WHERE id = $1`, [second]))[0]?.later;
      await pollUntil(postponed, (later) => later === true, { what: 'the second task to be postponed: the channel is full' });
      expect(kling.created.size).toBe(1);
      const freedAt = Date.now();
      await kling.finish!('kling-1');
      // the first task's end (its next poll, 2 s or so) gives the second its job at once, not 30 s on
      await pollUntil(async () => kling.created.size, (n) => n === 2, { timeoutMs: 15_000, what: 'the waiting task to be created once the slot freed' });
      expect(Date.now() - freedAt).toBeLessThan(15_000);
    } finally {
      await t.close();
      await kling.close();
    }
  }, 60_000);

  it("a 429 on polls slows that channel's polls (its Retry-After, on every instance) and counts toward its circuit", async () => {
    const kling = await startFakeKling(KLING[0], KLING[1]);
    kling.knobs.hold = true;
    const t = await startTestApp({ EXPAND_PROVIDER: 'relay', OUTBOUND_ALLOW_HOSTS: '127.0.0.1', RELAY_POLL_MS: '100', ADMIN_API_KEY: ADMIN, CHANNEL_SECRET_KEY: SECRET_KEY });
    try {
      const channel = (await api(t.url, 'POST', '/admin/channels', { key: ADMIN, body: { name: 'polled', operations: ['expand'], protocol: 'kling', base_url: kling.url, credentials: { access_key: KLING[0], secret_key: KLING[1] } } })).body;
      const key = await t.createKey('team-429');
      const image = (await png(300, 300)).toString('base64');
      const ids = await Promise.all(Array.from({ length: 10 }, async () => (await api(t.url, 'POST', EXPAND, { key, body: { image, ...RATIOS, n: 1 } })).body.data.task_id as string));
      await pollUntil(async () => kling.queries!.length, (n) => n >= 10, { what: 'the tasks to be polled' });
      // the upstream starts refusing polls, asking for 3 s
      const gets = () => kling.server.requests.filter((r) => r.method === 'GET' && r.url.includes('/expand/'));
      // before the refusal, whenever the test sees it: the pause runs from the refusal
      const refusedFrom = Date.now();
      kling.knobs.pollBusy = { count: 1, retryAfter: '3' };
      await pollUntil(async () => kling.knobs.pollBusy!.count, (n) => n === 0, { what: 'a poll to be refused' });
      const after = gets().length;
      // the pause and the circuit are two writes after the refused answer: read once both have landed (a read
      // between them saw the circuit closed once, under load). The circuit's opening is read from the log, a fact
      // that stays: its state is a moment's, closed again once the pause is over and a poll answers (the test may
      // look that late on a loaded machine).
      const opened = () => t.logs.lines.filter((l) => l.msg === 'channel circuit opened' && l.channel === 'polled').map((l) => [l.open_s, l.reason]);
      const paused = (
        await pollUntil(
          () => queryDb<{ until: Date | null }>(t.db, 'SELECT polls_paused_until AS until FROM channels WHERE id = $1', [channel.id]),
          (rows) => rows[0].until !== null && opened().length > 0,
          { timeoutMs: 10_000, what: 'the pause and the circuit to be written' },
        )
      )[0] as { until: Date };
      expect(paused.until.getTime()).toBeGreaterThan(refusedFrom + 1500);
      // counted toward the circuit: Retry-After opened it for that long
      expect(opened()).toEqual([[3, 'Retry-After']]);
      // no poll of that channel until the pause ends (but those of the refused poll's round already sent):
      // at RELAY_POLL_MS 100, ten young tasks would otherwise be polled about a hundred times in 3 s
      await pollUntil(async () => Date.now(), (now) => now >= paused.until.getTime() - 200, { timeoutMs: 10_000, what: 'the pause to come near its end' });
      expect(gets().length - after).toBeLessThanOrEqual(10);
      // then polls resume, and the tasks end
      kling.knobs.hold = false;
      await pollUntil(() => states(t.db, ids), (s) => s.succeeded === 10, { timeoutMs: 30_000, what: 'the tasks to succeed once polls resume' });
      expect(Number(/mgw_upstream_polls_total\{channel="polled",operation="expand",outcome="busy"\} (\d+)/.exec(await t.metrics())?.[1])).toBeGreaterThanOrEqual(1);
    } finally {
      await t.close();
      await kling.close();
    }
  }, 120_000);
});
