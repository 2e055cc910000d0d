import PgBoss from 'pg-boss';
import { GracefulShutdown } from '../../src/common/tasks/graceful-shutdown.js';
import { TASK_KIND_MODULES } from '../../src/modules/task-kinds.js';
import { EchoModule, hangMarker } from '../support/echo-kind.js';
import { pollUntil } from '../support/poll.js';
import { processesWith } from '../support/processes.js';
import { api, createTestDatabase, queryDb as sql, startTestApp, type TestApp } from '../support/test-app.js';
import { startReceiver } from '../support/webhook-receiver.js';

const ADMIN = 'admin-secret-0123456789abcdef';
const KINDS = [...TASK_KIND_MODULES, EchoModule];
const OWNER = 'team-echo';

/**
 * A kind is one definition: `echo` is defined under test/ only (test/support/echo-kind.ts) and plugged
 * into the real engine beside the registry's kinds. Everything the lifecycle does, it gets without a line
 * of its own: admission, the job, claim, step, the final state, the callback written in the state
 * change's transaction, slots and credits given back, the sweeper, usage, metrics and OpenAPI.
 */
describe('a task kind defined outside src/, through the real engine', () => {
  let t: TestApp;
  let key: string;
  let receiver: Awaited<ReturnType<typeof startReceiver>>;

  beforeAll(async () => {
    receiver = await startReceiver();
    t = await startTestApp({ ADMIN_API_KEY: ADMIN, ALLOW_PRIVATE_URLS: 'true', PRICE_ECHO_UNIT: '3' }, { kinds: KINDS });
    key = await t.createKey(OWNER);
    await api(t.url, 'PUT', `/admin/owners/${OWNER}/limits`, { key: ADMIN, body: { max_concurrent_tasks: 20, monthly_credits: 1000 } });
  });
  afterAll(async () => {
    letNotificationsThrough();
    await t.close();
    await receiver.close();
  });

  const submit = (body: Record<string, unknown>) => api(t.url, 'POST', '/echo/tasks', { key, body });
  const finished = (id: string) => pollUntil(() => api(t.url, 'GET', `/echo/tasks/${id}`, { key }), (r) => ['done', 'broken'].includes(r.body.state), { what: `echo task ${id} to end` });
  const counters = async () => (await sql<{ active_slots: number; credits_used: number }>(t.db, 'SELECT active_slots, credits_used FROM owner_counters WHERE owner = $1', [OWNER]))[0];
  /** The transaction that last wrote each row (PostgreSQL's xmin): rows written by one transaction share it. */
  const writtenBy = async (query: string, params: unknown[]) => (await sql<{ x: string }>(t.db, `SELECT xmin::text AS x FROM ${query}`, params)).map((r) => r.x);

  it('accepts a task priced by its kind, runs it to its success state and stores its result', async () => {
    const res = await submit({ outcome: 'succeed', units: 2 });
    expect(res.status).toBe(201);
    expect(res.body).toEqual({ id: expect.any(String), state: 'waiting', echoed: null, message: null });
    const [row] = await sql<{ kind: string; slots: number; credits: number; job: string }>(t.db, 'SELECT kind, slots, credits, (SELECT name FROM pgboss.job WHERE id = job_id) AS job FROM tasks WHERE id = $1', [res.body.id]);
    expect(row).toEqual({ kind: 'echo', slots: 2, credits: 6, job: 'echo.run' });

    const done = await finished(res.body.id);
    expect(done.body).toEqual({ id: res.body.id, state: 'done', echoed: 2, message: null });
    const [ran] = await sql<{ state: string; attempts: number; started: boolean; finished: boolean }>(t.db, 'SELECT state, attempts, started_at IS NOT NULL AS started, finished_at IS NOT NULL AS finished FROM tasks WHERE id = $1', [res.body.id]);
    expect(ran).toEqual({ state: 'succeeded', attempts: 1, started: true, finished: true });
  });

  // A receiver that answers no notification until the test lets it: the task's next notification waits for the
  // one before (their order is kept), so its row stays as the state change wrote it, and can be compared with the
  // task's, however slow the machine (a receiver that answered after a delay only made that likely).
  let holding = true;
  const unanswered: (() => void)[] = [];
  const holdNotifications = () => void (holding = true);
  const letNotificationsThrough = () => {
    holding = false;
    for (const answer of unanswered.splice(0)) answer();
  };
  beforeAll(() =>
    receiver.behave('/slow', (_n, res) => {
      const answer = () => void res.writeHead(200).end();
      if (holding) unanswered.push(answer);
      else answer();
    }),
  );

  it('writes each notification in the transaction of the state change it announces, in its own state names', async () => {
    holdNotifications();
    const before = await counters();
    const res = await submit({ outcome: 'succeed', units: 1, callback_url: `${receiver.url}/slow` });
    await finished(res.body.id);
    // the final state, its notification and the owner's slot given back: one transaction
    const [task] = await writtenBy('tasks WHERE id = $1', [res.body.id]);
    expect(await writtenBy("callback_deliveries WHERE task_id = $1 AND status = 'done'", [res.body.id])).toEqual([task]);
    expect(await writtenBy('owner_counters WHERE owner = $1', [OWNER])).toEqual([task]);
    expect(await counters()).toEqual({ active_slots: before.active_slots, credits_used: before.credits_used + 3 });

    letNotificationsThrough();
    const sent = await pollUntil(async () => receiver.received.filter((r) => r.json?.id === res.body.id), (r) => r.length === 2, { what: 'both notifications' });
    expect(sent.map((r) => [r.headers['webhook-id'] !== undefined, r.json])).toEqual([
      [true, { id: res.body.id, state: 'working', echoed: null, message: null }],
      [true, { id: res.body.id, state: 'done', echoed: 1, message: null }],
    ]);
  });

  it('gives back the slots and credits of a task that fails, in the statement or transaction that fails it (without and with a callback)', async () => {
    holdNotifications();
    for (const callback of [undefined, `${receiver.url}/slow`]) {
      const before = await counters();
      const res = await submit({ outcome: 'fail', units: 3, ...(callback ? { callback_url: callback } : {}) });
      // it held 3 slots and was charged 9 credits (the worker of this instance may already have failed it)
      expect(await sql(t.db, 'SELECT slots, credits FROM tasks WHERE id = $1', [res.body.id])).toEqual([{ slots: 3, credits: 9 }]);
      const ended = await finished(res.body.id);
      expect(ended.body).toEqual({ id: res.body.id, state: 'broken', echoed: null, message: 'asked to fail after 3 unit(s)' });
      expect(await counters()).toEqual(before);
      const [task] = await writtenBy('tasks WHERE id = $1', [res.body.id]);
      expect(await writtenBy('owner_counters WHERE owner = $1', [OWNER])).toEqual([task]);
      if (callback) expect(await writtenBy("callback_deliveries WHERE task_id = $1 AND status = 'broken'", [res.body.id])).toEqual([task]);
    }
    letNotificationsThrough();
  });

  it('counts the kind in usage, metrics and the OpenAPI document, as the registry lists it', async () => {
    const usage = await api(t.url, 'GET', '/usage', { key });
    expect(usage.body.operations.echo).toEqual({ accepted: 4, succeeded: 2, failed: 2, credits_charged: 27, credits_refunded: 18 });
    expect(Object.keys(usage.body.operations)).toEqual(KINDS.map((k) => k.kind.definition.name));
    const metrics = await t.metrics();
    expect(metrics).toMatch(/mgw_tasks_finished_total\{owner="team-echo",operation="echo",state="failed"\} 2/);
    const doc = await api(t.url, 'GET', '/docs-json');
    expect(doc.body.components.schemas.UsageDto.properties.operations.required).toEqual(KINDS.map((k) => k.kind.definition.name));
    // music and concat share one tag
    expect(doc.body.tags.map((tag: { name: string }) => tag.name).slice(0, 8)).toEqual(['image expand', 'video generation', 'audio', 'music', 'image generation', 'speech', 'lyrics', 'echo']);
  });

  // after the usage test above, whose totals these tasks would change
  it("completes the task's job in the statement or transaction that ends the task (succeeded and failed, without and with a callback)", async () => {
    holdNotifications();
    for (const outcome of ['succeed', 'fail']) {
      for (const callback of [undefined, `${receiver.url}/slow`]) {
        const what = `${outcome}${callback ? ', with a callback' : ''}`;
        const res = await submit({ outcome, units: 1, ...(callback ? { callback_url: callback } : {}) });
        await finished(res.body.id);
        const [task] = await writtenBy('tasks WHERE id = $1', [res.body.id]);
        const jobs = await sql<{ state: string; x: string }>(t.db, 'SELECT j.state, j.xmin::text AS x FROM pgboss.job j JOIN tasks t ON j.id = t.job_id WHERE t.id = $1', [res.body.id]);
        expect([what, jobs]).toEqual([what, [{ state: 'completed', x: task }]]);
      }
    }
    letNotificationsThrough();
  });

  it("recovers a task whose job died before any worker claimed it, through the engine's sweeper", async () => {
    const db = await createTestDatabase({ migrated: true });
    const front = await startTestApp({ ROLE: 'api' }, { db, kinds: KINDS });
    let worker: TestApp | undefined;
    try {
      const frontKey = await front.createKey(OWNER);
      const res = await api(front.url, 'POST', '/echo/tasks', { key: frontKey, body: { outcome: 'succeed', units: 1 } });
      const [{ job_id: jobId }] = await sql<{ job_id: string }>(db, 'SELECT job_id FROM tasks WHERE id = $1', [res.body.id]);
      await sql(db, 'DELETE FROM pgboss.job WHERE id = $1', [jobId]);
      const boss = new PgBoss({ connectionString: db.url, schema: 'pgboss', supervise: false, schedule: false });
      await boss.start();
      expect(await boss.fetch('echo.run')).toEqual([]);
      await boss.stop({ graceful: false, close: true });

      worker = await startTestApp({ ROLE: 'worker', WORKER_LEASE_S: '3' }, { db, kinds: KINDS });
      const done = await pollUntil(() => api(front.url, 'GET', `/echo/tasks/${res.body.id}`, { key: frontKey }), (r) => r.body.state === 'done', { timeoutMs: 9000, what: 'the orphaned echo task' });
      expect(done.body.echoed).toBe(1);
      expect(worker.logs.lines.some((l) => /1 echo task\(s\) re-queued: their job was taken/.test(String(l.msg)))).toBe(true);
    } finally {
      await worker?.close();
      await front.close();
      await db.drop();
    }
  }, 60_000);
});

describe('a step that never returns', () => {
  let t: TestApp;
  let key: string;
  beforeAll(async () => {
    // one worker slot and a 3 s deadline: a hanging step would hold the only slot forever
    t = await startTestApp({ ECHO_TIMEOUT_S: '3', WORKER_CONCURRENCY: '1' }, { kinds: KINDS });
    key = await t.createKey(OWNER);
  });
  afterAll(() => t.close());

  it('fails on its deadline, its child process killed and its slot freed for the next task', async () => {
    const hang = await api(t.url, 'POST', '/echo/tasks', { key, body: { outcome: 'hang', units: 1 } });
    expect(hang.status).toBe(201);
    const marker = hangMarker(hang.body.id);
    const [pid] = await pollUntil(() => processesWith(marker), (pids) => pids.length === 1, { what: "the hanging step's ffmpeg to start" });
    // queued behind it: it runs only once the hanging step has let go of the only slot
    const next = await api(t.url, 'POST', '/echo/tasks', { key, body: { outcome: 'succeed', units: 1 } });

    const ended = await pollUntil(() => api(t.url, 'GET', `/echo/tasks/${hang.body.id}`, { key }), (r) => r.body.state !== 'working' && r.body.state !== 'waiting', { timeoutMs: 30_000, what: 'the hanging task to end' });
    expect(ended.body).toMatchObject({ state: 'broken', message: 'timed out: the echo did not finish within 3 s' });
    expect(await pollUntil(() => processesWith(marker), (pids) => pids.length === 0, { what: `ffmpeg ${pid} to be gone` })).toEqual([]);
    const done = await pollUntil(() => api(t.url, 'GET', `/echo/tasks/${next.body.id}`, { key }), (r) => r.body.state === 'done', { timeoutMs: 30_000, what: 'the next task' });
    expect(done.body.echoed).toBe(1);
    const [{ slots }] = await sql<{ slots: number }>(t.db, 'SELECT active_slots AS slots FROM owner_counters WHERE owner = $1', [OWNER]);
    expect(slots).toBe(0);
  });
});

describe('a step whose claim is gone', () => {
  let t: TestApp;
  let key: string;
  beforeAll(async () => {
    // one worker slot, a deadline far off and a beat a second: only the lost claim can stop this step soon
    t = await startTestApp({ ECHO_TIMEOUT_S: '120', WORKER_CONCURRENCY: '1', WORKER_LEASE_S: '3' }, { kinds: KINDS });
    key = await t.createKey(OWNER);
  });
  afterAll(() => t.close());

  it("stops at its next beat once another claim has the task: its child process killed, the other claim's row untouched, its slot freed", async () => {
    const hang = await api(t.url, 'POST', '/echo/tasks', { key, body: { outcome: 'hang', units: 1 } });
    const marker = hangMarker(hang.body.id);
    const [pid] = await pollUntil(() => processesWith(marker), (pids) => pids.length === 1, { what: "the hanging step's ffmpeg to start" });
    // what the sweeper and another worker's claim do once a lease ran out (the step still running, as after a stall)
    const [taken] = await sql<{ attempts: number }>(t.db, "UPDATE tasks SET lease_owner = 'w-next', lease_until = now() + interval '1 hour', attempts = attempts + 1 WHERE id = $1 RETURNING attempts", [hang.body.id]);
    expect(await pollUntil(() => processesWith(marker), (pids) => pids.length === 0, { timeoutMs: 10_000, what: `ffmpeg ${pid} to be killed by the beat` })).toEqual([]);
    await pollUntil(async () => t.logs.lines.some((l) => String(l.msg).includes(`task ${hang.body.id} is no longer held by this worker`)), Boolean, { what: 'the stopped step to say why' });
    const [row] = await sql<{ state: string; lease_owner: string; attempts: number }>(t.db, 'SELECT state::text, lease_owner, attempts FROM tasks WHERE id = $1', [hang.body.id]);
    expect(row).toEqual({ state: 'running', lease_owner: 'w-next', attempts: taken.attempts });
    // the only worker slot is free again
    const next = await api(t.url, 'POST', '/echo/tasks', { key, body: { outcome: 'succeed', units: 2 } });
    expect((await pollUntil(() => api(t.url, 'GET', `/echo/tasks/${next.body.id}`, { key }), (r) => r.body.state === 'done', { what: 'the next task' })).body.echoed).toBe(2);
  });
});

describe('a step still running at shutdown', () => {
  it("is handed back with its task, and its child process does not outlive the drain", async () => {
    // a deadline far beyond the drain: only the shutdown can end this step here
    const t = await startTestApp({ ECHO_TIMEOUT_S: '120', WORKER_CONCURRENCY: '1' }, { kinds: KINDS });
    try {
      const key = await t.createKey(OWNER);
      const hang = await api(t.url, 'POST', '/echo/tasks', { key, body: { outcome: 'hang', units: 1 } });
      const marker = hangMarker(hang.body.id);
      const [pid] = await pollUntil(() => processesWith(marker), (pids) => pids.length === 1, { what: "the hanging step's ffmpeg to start" });
      // what SIGTERM runs (main.ts) before the application closes
      await t.app.get(GracefulShutdown).drain(4);
      // killed at the drain's end (its exit is reaped a moment later)
      expect(await pollUntil(() => processesWith(marker), (pids) => pids.length === 0, { timeoutMs: 5000, what: `ffmpeg ${pid} to be gone` })).toEqual([]);
      const [row] = await sql<{ state: string; lease_owner: string }>(t.db, 'SELECT state::text, lease_owner FROM tasks WHERE id = $1', [hang.body.id]);
      // handed back: still running, held by no live worker, for another instance to take at once
      expect(row).toEqual({ state: 'running', lease_owner: '~abandoned' });
      expect(t.logs.lines.some((l) => /stopped the 1 step\(s\) still running; their tasks were handed back/.test(String(l.msg)))).toBe(true);
    } finally {
      await t.close();
    }
  }, 60_000);
});
