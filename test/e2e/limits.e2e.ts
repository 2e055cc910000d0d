import { png } from '../support/images.js';
import { pollUntil } from '../support/poll.js';
import { sendJson, startServer, type TestServer } from '../support/http-server.js';
import { api, type ApiResponse, createTestDatabase, queryDb, startTestApp, type TestApp, type TestDatabase } from '../support/test-app.js';
import { TaskSweeper } from '../../src/common/tasks/task-sweeper.js';

const ADMIN = 'admin-secret-0123456789abcdef';
const EXPAND = '/video-a/v1/images/editing/expand';
const GEN = '/video-b/v1/generations';
const RATIOS = { up_expansion_ratio: 0.1, bottom_expansion_ratio: 0.1, left_expansion_ratio: 0, right_expansion_ratio: 0 };

let image: string;
beforeAll(async () => {
  image = (await png(300, 300)).toString('base64');
});

/** Two instances on one database, as a deployment runs them. */
async function startPair(env: Record<string, string>): Promise<{ db: TestDatabase; a: TestApp; b: TestApp; close(): Promise<void> }> {
  const db = await createTestDatabase({ migrated: true });
  const a = await startTestApp({ ADMIN_API_KEY: ADMIN, ...env }, { db });
  const b = await startTestApp({ ADMIN_API_KEY: ADMIN, ...env }, { db });
  return {
    db,
    a,
    b,
    close: async () => {
      await Promise.all([a.close(), b.close()]);
      await db.drop();
    },
  };
}

const setLimits = (t: TestApp, owner: string, limits: Record<string, number | null>) => api(t.url, 'PUT', `/admin/owners/${owner}/limits`, { key: ADMIN, body: limits });
const expandTask = (t: TestApp, key: string, n: number, extra: Record<string, unknown> = {}) => api(t.url, 'POST', EXPAND, { key, body: { image, ...RATIOS, n, ...extra } });
const finished = (t: TestApp, key: string, id: string) =>
  pollUntil(() => api(t.url, 'GET', `${EXPAND}/${id}`, { key }), (r) => ['succeed', 'failed'].includes(r.body.data.task_status), { timeoutMs: 60_000, what: `task ${id} to end` });
const balance = async (t: TestApp, key: string) => (await api(t.url, 'GET', '/video-b/v1/credits', { key })).body.credit_balance as number;

function expectRefusal(res: ApiResponse, code: number, message: RegExp): void {
  expect([res.status, res.body.code]).toEqual([429, code]);
  expect(res.body.message).toMatch(message);
  expect(Number(res.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
}

describe('per-owner limits, shared by two instances', () => {
  /** Requests the rate test's last poll saw refused, before the lifted limit reached the other instance. */
  let refusedWhileLifting = 0;
  let pair: Awaited<ReturnType<typeof startPair>>;
  let files: TestServer;
  const held: Array<() => void> = [];
  const answerHeld = () => held.splice(0).forEach((answer) => answer());
  beforeAll(async () => {
    pair = await startPair({ SANDBOX_DELAY_MS: '1500', ALLOW_PRIVATE_URLS: 'true' });
    // a file server that has nothing, and answers only when the test lets it: a task that fails on it stays pending until then
    files = await startServer((_req, res) => {
      held.push(() => sendJson(res, 404, { error: 'no such file' }));
    });
  });
  afterAll(async () => {
    await pair.close();
    answerHeld();
    await files.close();
  });

  it('rate: 60 requests a minute across both instances and two keys; the rest get 429 1302 with Retry-After and the draft headers', async () => {
    const { a, b } = pair;
    expect((await setLimits(a, 'rate-o', { requests_per_minute: 60 })).body).toEqual(expect.objectContaining({ owner: 'rate-o', requests_per_minute: 60 }));
    const keys = [await a.createKey('rate-o'), await b.createKey('rate-o')];
    const answers: ApiResponse[] = [];
    for (let batch = 0; batch < 10; batch++) {
      answers.push(...(await Promise.all(Array.from({ length: 10 }, (_, i) => api([a, b][i % 2].url, 'GET', '/usage', { key: keys[(i >> 1) % 2] })))));
    }
    const ok = answers.filter((r) => r.status === 200);
    const limited = answers.filter((r) => r.status === 429);
    expect([ok.length, limited.length]).toEqual([60, 40]);
    for (const r of limited) {
      expectRefusal(r, 1302, /your limit is 60 per minute/);
      expect(Number(r.headers.get('retry-after'))).toBeLessThanOrEqual(60);
      expect(r.headers.get('ratelimit')).toMatch(/^"per-owner";r=0;t=\d+$/);
    }
    // what is left, as each instance sees it, stays within the limit and reaches 0
    const remaining = ok.map((r) => Number(/;r=(\d+);/.exec(r.headers.get('ratelimit') ?? '')?.[1]));
    expect(Math.max(...remaining)).toBeLessThanOrEqual(59);
    expect(Math.min(...remaining)).toBe(0);
    expect(ok.every((r) => r.headers.get('ratelimit-policy') === '"per-owner";q=60;w=60')).toBe(true);

    // another owner is not touched, and without a limit gets no rate headers
    const other = await a.createKey('rate-other');
    const free = await api(b.url, 'GET', '/usage', { key: other });
    expect([free.status, free.headers.get('ratelimit')]).toEqual([200, null]);
    // the admin reads the window: the 60 let through, and the refusals the database saw
    const report = await api(a.url, 'GET', '/admin/owners/rate-o/limits', { key: ADMIN });
    expect(report.body.usage.requests_this_minute).toBeGreaterThan(60);
    // lifting the limit reaches every instance at once (a notification; at the latest within a second)
    await setLimits(b, 'rate-o', { requests_per_minute: null });
    const lifted = async () => {
      const res = await api(a.url, 'GET', '/usage', { key: keys[0] });
      if (res.status === 429) refusedWhileLifting++;
      return res;
    };
    await pollUntil(lifted, (r) => r.status === 200, { timeoutMs: 1500, intervalMs: 20, what: 'the lifted limit on the other instance' });
  });

  it('concurrency: two expand tasks of n 2 fill 4 slots; a third is refused 1303 until one ends', async () => {
    const { a, b } = pair;
    await setLimits(a, 'conc-o', { max_concurrent_tasks: 4 });
    const key = await a.createKey('conc-o');
    // both wait on the held file server, so neither ends before the test lets it, however slow the machine
    const first = await expandTask(a, key, 2, { image: `${files.url}/held-1.png` });
    const second = await expandTask(b, key, 2, { image: `${files.url}/held-2.png` });
    expect([first.status, second.status]).toEqual([200, 200]);
    expectRefusal(await expandTask(a, key, 1), 1303, /your limit is 4 slots, 4 are held by unfinished tasks and this one needs 1/);
    expectRefusal(await api(b.url, 'POST', GEN, { key, body: { prompt: 'a fox' } }), 1303, /limit is 4 slots/);
    // more images than the limit itself: never admitted, so a 400 naming n, not a 429 to retry
    const never = await expandTask(b, key, 5);
    expect([never.status, never.body.code, never.body.message, never.headers.get('retry-after')]).toEqual([400, 1201, expect.stringMatching(/^n: this task needs 5 slots \(one per image\) and your limit is 4 tasks at once, so it is never admitted/), null]);
    expect((await api(b.url, 'GET', '/admin/owners/conc-o/limits', { key: ADMIN })).body.usage.active_slots).toBe(4);

    // one of them ends (its image is missing); its 2 slots are free again
    await pollUntil(async () => held.length, (n) => n >= 2, { what: 'the worker to ask for both held images' });
    held.shift()?.();
    const ended = await pollUntil(
      () => Promise.all([first, second].map((t) => api(a.url, 'GET', `${EXPAND}/${t.body.data.task_id}`, { key }))),
      (rs) => rs.some((r) => r.body.data.task_status === 'failed'),
      { timeoutMs: 60_000, what: 'one held task to end' },
    );
    expect(ended.filter((r) => ['succeed', 'failed'].includes(r.body.data.task_status))).toHaveLength(1);
    const third = await expandTask(b, key, 2);
    expect(third.status).toBe(200);
    answerHeld();
    await finished(a, key, first.body.data.task_id);
    await finished(a, key, second.body.data.task_id);
    await finished(a, key, third.body.data.task_id);
    expect((await api(b.url, 'GET', '/admin/owners/conc-o/limits', { key: ADMIN })).body.usage.active_slots).toBe(0);
  });

  it('concurrency: the last slot goes to exactly one of many racing submissions on both instances', async () => {
    const { a, b } = pair;
    await setLimits(a, 'race-o', { max_concurrent_tasks: 3 });
    const key = await a.createKey('race-o');
    // the two tasks holding slots wait on the held file server: neither can end (and free a slot) during the race, however slow the machine
    const holders = [await expandTask(a, key, 1, { image: `${files.url}/held-a.png` }), await expandTask(b, key, 1, { image: `${files.url}/held-b.png` })];
    expect(holders.map((r) => r.status)).toEqual([200, 200]);
    const racing = await Promise.all(Array.from({ length: 12 }, (_, i) => expandTask([a, b][i % 2], key, 1)));
    expect(racing.filter((r) => r.status === 200)).toHaveLength(1);
    for (const r of racing.filter((x) => x.status !== 200)) expectRefusal(r, 1303, /limit is 3 slots/);
    // let the holders fail; their slots come back
    await pollUntil(async () => held.length, (n) => n >= 2, { what: 'the worker to ask for both held images' });
    answerHeld();
    for (const h of holders) expect((await finished(a, key, h.body.data.task_id)).body.data.task_status).toBe('failed');
  });

  it('credits: each task is charged its price at acceptance, a failed one gets it back once, and what cannot be covered is refused 1102', async () => {
    const { a, b, db } = pair;
    await setLimits(a, 'credit-o', { monthly_credits: 10 });
    const key = await b.createKey('credit-o');
    expect(await balance(a, key)).toBe(10);

    const ok = await expandTask(a, key, 2);
    expect(await balance(b, key)).toBe(8); // 1 credit per image
    const bad = await expandTask(b, key, 3, { image: `${files.url}/missing.png` });
    expect(await balance(a, key)).toBe(5);
    await pollUntil(async () => held.length, (n) => n >= 1, { what: 'the worker to ask for the missing image' });
    answerHeld();
    expect((await finished(a, key, ok.body.data.task_id)).body.data).toEqual(expect.objectContaining({ task_status: 'succeed', final_unit_deduction: '2' }));
    expect((await finished(b, key, bad.body.data.task_id)).body.data).toEqual(expect.objectContaining({ task_status: 'failed', final_unit_deduction: '0' }));
    expect(await balance(a, key)).toBe(8); // the failed task's 3 credits came back

    // a 9 s video costs 9: more than the 8 left
    expectRefusal(await api(a.url, 'POST', GEN, { key, body: { prompt: 'long', duration: '9s' } }), 1102, /costs 9 credits and 8 of your 10 for \d{4}-\d{2} are left/);
    // on an OpenAI door, a refusal until next month is not to be retried by OpenAI's SDKs (they would at once)
    const openaiDoor = await api(a.url, 'POST', '/openai/v1/videos', { key, body: { prompt: 'long', seconds: '12' } });
    expect([openaiDoor.status, openaiDoor.body.error?.code, openaiDoor.headers.get('x-should-retry'), Number(openaiDoor.headers.get('retry-after')) > 60]).toEqual([429, 'insufficient_quota', 'false', true]);
    const video = await api(b.url, 'POST', GEN, { key, body: { prompt: 'short', duration: '5s' } });
    expect(video.status).toBe(201);
    expect(await balance(a, key)).toBe(3);
    // deleting a generation that has not finished gives back its credits; it stays in the usage
    expect((await api(a.url, 'DELETE', `${GEN}/${video.body.id}`, { key })).status).toBe(204);
    expect(await balance(b, key)).toBe(8);

    const audio = await api(a.url, 'POST', '/music-a/uploads/audio-url', { key, body: { url: `${files.url}/missing.mp3` } });
    expect(audio.status).toBe(200);
    expect(await balance(a, key)).toBe(7);
    await pollUntil(async () => held.length, (n) => n >= 1, { what: 'the worker to ask for the missing clip' });
    answerHeld();
    await pollUntil(() => api(a.url, 'GET', `/music-a/uploads/${audio.body.data}`, { key }), (r) => r.body.data.status === 'failed', { what: 'the upload to fail' });
    expect(await balance(b, key)).toBe(8);

    const usage = await api(b.url, 'GET', '/usage', { key });
    expect(usage.body.credits).toEqual({ monthly_credits: 10, used: 2, remaining: 8 });
    expect(usage.body.operations).toEqual({
      expand: { accepted: 2, succeeded: 1, failed: 1, credits_charged: 5, credits_refunded: 3 },
      video: { accepted: 1, succeeded: 0, failed: 1, credits_charged: 5, credits_refunded: 5 },
      audio: { accepted: 1, succeeded: 0, failed: 1, credits_charged: 1, credits_refunded: 1 },
      music: { accepted: 0, succeeded: 0, failed: 0, credits_charged: 0, credits_refunded: 0 },
      concat: { accepted: 0, succeeded: 0, failed: 0, credits_charged: 0, credits_refunded: 0 },
      image: { accepted: 0, succeeded: 0, failed: 0, credits_charged: 0, credits_refunded: 0 },
      speech: { accepted: 0, succeeded: 0, failed: 0, credits_charged: 0, credits_refunded: 0 },
      lyrics: { accepted: 0, succeeded: 0, failed: 0, credits_charged: 0, credits_refunded: 0 },
      stems: { accepted: 0, succeeded: 0, failed: 0, credits_charged: 0, credits_refunded: 0 },
      wav: { accepted: 0, succeeded: 0, failed: 0, credits_charged: 0, credits_refunded: 0 },
    });
    const today = new Date().toISOString().slice(0, 10);
    const byDay = await api(a.url, 'GET', `/admin/usage?from=${today}&to=${today}&owner=credit-o`, { key: ADMIN });
    expect(byDay.body.days).toEqual(
      expect.arrayContaining([expect.objectContaining({ day: today, owner: 'credit-o', operation: 'expand', accepted: 2, succeeded: 1, failed: 1, credits_charged: 5, credits_refunded: 3 })]),
    );
    expect(byDay.body.days).toHaveLength(3);
    const [counters] = await queryDb<{ active_slots: number; credits_used: number }>(db, "SELECT active_slots, credits_used FROM owner_counters WHERE owner = 'credit-o'");
    expect(counters).toEqual({ active_slots: 0, credits_used: 2 });
  });

  it('admins set limits by the rules: bad values are refused naming the field, owners as in the rest of the API', async () => {
    const { a } = pair;
    const bad = await setLimits(a, 'o', { requests_per_minute: -1 });
    expect([bad.status, bad.body.code, bad.body.message]).toEqual([400, 1201, expect.stringMatching(/requests_per_minute must be 0 or more/)]);
    const text = await api(a.url, 'PUT', '/admin/owners/o/limits', { key: ADMIN, body: { max_concurrent_tasks: 'four' } });
    expect(text.body.message).toMatch(/max_concurrent_tasks must be a whole number/);
    const key = await a.createKey('o');
    expect((await api(a.url, 'PUT', '/admin/owners/o/limits', { key, body: {} })).status).toBe(403);
    const defaults = await api(a.url, 'GET', '/admin/owners/nobody-yet/limits', { key: ADMIN });
    expect(defaults.body).toEqual(expect.objectContaining({ owner: 'nobody-yet', requests_per_minute: null, max_concurrent_tasks: null, monthly_credits: null, defaults: ['requests_per_minute', 'max_concurrent_tasks', 'monthly_credits'] }));
    const unlimited = await api(a.url, 'GET', '/video-b/v1/credits', { key });
    expect(unlimited.body).toEqual({ credit_balance: Number.MAX_SAFE_INTEGER, unlimited: true });
  });

  it('metrics: accepted, finished, refused by code, queue wait and credits, per owner and operation', async () => {
    const text = (await pair.a.metrics()) + (await pair.b.metrics());
    const sum = (pattern: RegExp) => [...text.matchAll(new RegExp(pattern.source, 'gm'))].reduce((total, m) => total + Number(m[1]), 0);
    expect(sum(/^mgw_tasks_accepted_total\{owner="credit-o",operation="expand"\} (\d+)/)).toBe(2);
    expect(sum(/^mgw_credits_charged_total\{owner="credit-o",operation="expand"\} (\d+)/)).toBe(5);
    expect(sum(/^mgw_credits_refunded_total\{owner="credit-o",operation="expand"\} (\d+)/)).toBe(3);
    expect(sum(/^mgw_tasks_finished_total\{owner="credit-o",operation="expand",state="failed"\} (\d+)/)).toBe(1);
    // the 40 of the rate test, and those its last requests met until the lifted limit reached the other instance
    expect(sum(/^mgw_limit_refusals_total\{owner="rate-o",code="1302"\} (\d+)/)).toBe(40 + refusedWhileLifting);
    // the Luma door's 9 s video and the OpenAI door's 12 s one
    expect(sum(/^mgw_limit_refusals_total\{owner="credit-o",code="1102"\} (\d+)/)).toBe(2);
    expect(sum(/^mgw_task_queue_wait_seconds_count\{owner="credit-o",operation="expand"\} (\d+)/)).toBe(2);
    expect(text).toMatch(/^# TYPE mgw_tasks_running gauge$/m);
  });
});

describe('refunds under racing workers and sweepers', () => {
  it('a task that fails gives its credits back exactly once, however many instances try to end it', async () => {
    const pair = await startPair({ SANDBOX_DELAY_MS: '2500', EXPAND_TIMEOUT_S: '1', WORKER_CONCURRENCY: '4' });
    try {
      const { a, b, db } = pair;
      await setLimits(a, 'refund-o', { monthly_credits: 100 });
      const key = await a.createKey('refund-o');
      // kept: a video (5 credits) that runs to the end
      const video = await api(a.url, 'POST', GEN, { key, body: { prompt: 'kept' } });
      const ids: string[] = [];
      for (let i = 0; i < 6; i++) ids.push((await expandTask([a, b][i % 2], key, 1)).body.data.task_id);
      // each was charged (the balance itself may already have some back: a task may time out before the last is sent)
      const charged = async () => {
        const text = (await a.metrics()) + (await b.metrics());
        return [...text.matchAll(/^mgw_credits_charged_total\{owner="refund-o",operation="\w+"\} (\d+)/gm)].reduce((total, m) => total + Number(m[1]), 0);
      };
      expect(await charged()).toBe(5 + 6);
      // both instances' sweepers end the overdue tasks, and the test pushes in a few more sweeps at once
      const sweep = (t: TestApp) => t.app.get(TaskSweeper).sweep();
      await pollUntil(
        async () => {
          await Promise.all([sweep(a), sweep(b), sweep(a), sweep(b)]);
          return queryDb<{ n: number }>(db, "SELECT count(*)::int AS n FROM tasks WHERE state = 'failed'");
        },
        (rows) => rows[0].n === 6,
        { timeoutMs: 30_000, what: 'the six tasks to time out' },
      );
      await pollUntil(() => api(a.url, 'GET', `${GEN}/${video.body.id}`, { key }), (r) => r.body.state === 'completed', { timeoutMs: 60_000, what: 'the video' });
      // each worker gives up on its step at the deadline and fails the task, unless a sweep did first: the refund is made once either way
      // (how many steps ran depends on the machine: a task a sweep failed before any worker claimed it runs none; so
      // the test waits for every step to be over on both instances, whichever ended its task)
      const running = async () => {
        const text = (await a.metrics()) + (await b.metrics());
        return [...text.matchAll(/^mgw_tasks_running\{owner="refund-o",operation="expand"\} (\d+)/gm)].reduce((total, m) => total + Number(m[1]), 0);
      };
      await pollUntil(running, (n) => n === 0, { timeoutMs: 30_000, what: 'the workers to be done with their steps' });
      expect(await balance(b, key)).toBe(95);
      const [counters] = await queryDb<{ active_slots: number; credits_used: number }>(db, "SELECT active_slots, credits_used FROM owner_counters WHERE owner = 'refund-o'");
      expect(counters).toEqual({ active_slots: 0, credits_used: 5 });
    } finally {
      await pair.close();
    }
  });
});

describe('fair scheduling', () => {
  it("owner B's single task finishes before owner A's 10th, behind A's backlog of 200", async () => {
    const pair = await startPair({ SANDBOX_DELAY_MS: '400', WORKER_CONCURRENCY: '2' });
    try {
      const { a, b, db } = pair;
      const keyA = await a.createKey('fair-a');
      const keyB = await b.createKey('fair-b');
      for (let batch = 0; batch < 10; batch++) {
        const answers = await Promise.all(Array.from({ length: 20 }, (_, i) => expandTask([a, b][i % 2], keyA, 1)));
        expect(answers.every((r) => r.status === 200)).toBe(true);
      }
      const taskB = (await expandTask(a, keyB, 1)).body.data.task_id as string;
      await finished(b, keyB, taskB);
      // measured from B's row (its insert, not the moment the test sent it: on a loaded machine the request alone can
      // outlast a 400 ms task, and the slots that free meanwhile rightly take A's tasks, B not being there yet)
      const [{ created_at: createdB, finished_at: doneB }] = await queryDb<{ created_at: Date; finished_at: Date }>(db, 'SELECT created_at, finished_at FROM tasks WHERE id = $1', [taskB]);
      const [{ n: aAfterB }] = await queryDb<{ n: number }>(db, "SELECT count(*)::int AS n FROM tasks WHERE owner = 'fair-a' AND finished_at > $1 AND finished_at <= $2", [createdB, doneB]);
      const [{ n: aStartedBetween }] = await queryDb<{ n: number }>(
        db,
        "SELECT count(*)::int AS n FROM tasks WHERE owner = 'fair-a' AND started_at > $1 AND started_at < (SELECT started_at FROM tasks WHERE id = $2)",
        [createdB, taskB],
      );
      const [{ n: aLeft }] = await queryDb<{ n: number }>(db, "SELECT count(*)::int AS n FROM tasks WHERE owner = 'fair-a' AND state <> 'succeeded'");
      // the backlog was still there, and at most one task per worker slot (2 instances × 2) went ahead of B
      expect(aLeft).toBeGreaterThan(100);
      expect(aAfterB).toBeLessThan(10);
      expect(aStartedBetween).toBeLessThanOrEqual(4);
    } finally {
      await pair.close();
    }
  });
});

describe('upstream caps', () => {
  it('EXPAND_MAX_RUNNING holds across instances: work beyond it waits in the queue and none of it fails', async () => {
    // a deadline well above one task's run, even on a loaded machine, and below what the tasks take one after another
    const DEADLINE_S = 4;
    const pair = await startPair({ SANDBOX_DELAY_MS: '500', EXPAND_MAX_RUNNING: '1', EXPAND_TIMEOUT_S: String(DEADLINE_S), WORKER_CONCURRENCY: '3' });
    try {
      const { a, b, db } = pair;
      const key = await a.createKey('cap-o');
      // sent at once: accepted within moments of each other
      const ids = await Promise.all(Array.from({ length: 10 }, async (_, i) => (await expandTask([a, b][i % 2], key, 1)).body.data.task_id as string));
      // 10 tasks of 0.5 s one at a time take longer than the 4 s deadline: waiting in the queue does not count
      for (const id of ids) expect((await finished(a, key, id)).body.data.task_status).toBe('succeed');
      const spans = await queryDb<{ created_at: Date; started_at: Date; finished_at: Date }>(db, 'SELECT created_at, started_at, finished_at FROM tasks ORDER BY started_at');
      for (let i = 1; i < spans.length; i++) expect(spans[i].started_at.getTime()).toBeGreaterThanOrEqual(spans[i - 1].finished_at.getTime());
      // the last to run succeeded although more than its deadline had passed since it was accepted
      expect(Math.max(...spans.map((t) => t.finished_at.getTime() - t.created_at.getTime()))).toBeGreaterThan(DEADLINE_S * 1000);
      // a video is not held back by the expand cap
      const video = await api(b.url, 'POST', GEN, { key, body: { prompt: 'free' } });
      expect(video.status).toBe(201);
    } finally {
      await pair.close();
    }
  });
});
