import path from 'node:path';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { CallbackSender } from '../../src/modules/callbacks/callback-sender.processor.js';
import { Child } from '../support/child-process.js';
import { freePort } from '../support/free-port.js';
import { HostTable } from '../support/host-table.js';
import { png } from '../support/images.js';
import { pollUntil } from '../support/poll.js';
import { api, createKeyThrough, createTestDatabase, queryDb, startTestApp, type TestApp } from '../support/test-app.js';
import { type Received, startReceiver, verify } from '../support/webhook-receiver.js';

const ADMIN = 'admin-secret-0123456789';
const EXPAND = '/video-a/v1/images/editing/expand';
const GEN = '/video-b/v1/generations';
// a limit no loopback receiver comes near on a loaded machine (tests count attempts); the slow receiver outlasts it
const FAST = { ADMIN_API_KEY: ADMIN, ALLOW_PRIVATE_URLS: 'true', CALLBACK_RETRY_SCHEDULE_S: '0.2,0.4,0.6', CALLBACK_TIMEOUT_MS: '2000' };

let image: string;
beforeAll(async () => {
  image = (await png(300, 300)).toString('base64');
});
const expandBody = (callback_url: string, extra: Record<string, unknown> = {}) => ({ image, up_expansion_ratio: 0.2, bottom_expansion_ratio: 0, left_expansion_ratio: 0, right_expansion_ratio: 0, callback_url, ...extra });

async function secretOf(t: TestApp, owner: string): Promise<string> {
  return (await api(t.url, 'GET', `/admin/owners/${owner}/webhook-secret`, { key: ADMIN })).body.secret;
}

async function deliveriesOf(t: TestApp, key: string, route: string): Promise<any[]> {
  const res = await api(t.url, 'GET', route, { key });
  return res.body.data ?? res.body.deliveries;
}

async function settled(t: TestApp, key: string, route: string, count: number): Promise<any[]> {
  return pollUntil(() => deliveriesOf(t, key, route), (d) => d.length === count && d.every((x) => x.state !== 'pending'), { timeoutMs: 30_000, what: `${count} notifications to settle` });
}

describe('callbacks', () => {
  let t: TestApp;
  let key: string;
  let receiver: Awaited<ReturnType<typeof startReceiver>>;

  beforeAll(async () => {
    receiver = await startReceiver();
    t = await startTestApp(FAST);
    key = await t.createKey('hooks');
  });
  afterAll(async () => {
    await t.close();
    await receiver.close();
  });
  const at = (p: string) => receiver.received.filter((r) => r.path === p);

  it("sends one signed POST per expand status, processing then succeed, each Kling's bare task record: the query answer's data", async () => {
    const created = await api(t.url, 'POST', EXPAND, { key, body: expandBody(`${receiver.url}/expand-ok`, { external_task_id: 'cb-1' }) });
    const id = created.body.data.task_id;
    const deliveries = await settled(t, key, `${EXPAND}/${id}/callbacks`, 2);
    expect(deliveries.map((d) => [d.status, d.state, d.attempts])).toEqual([
      ['processing', 'delivered', 1],
      ['succeed', 'delivered', 1],
    ]);
    const got = at('/expand-ok');
    expect(got.map((r) => r.json.task_status)).toEqual(['processing', 'succeed']);
    const secret = await secretOf(t, 'hooks');
    expect(secret).toMatch(/^whsec_[A-Za-z0-9+/=]+$/);
    for (const r of got) {
      expect(() => verify(secret, r)).not.toThrow();
      expect(r.headers['content-type']).toBe('application/json');
      // a Kling receiver reads the record at the top: no envelope around it
      const finalKeys = r.json.task_status === 'succeed' ? ['final_unit_deduction'] : [];
      expect(Object.keys(r.json).sort()).toEqual(['created_at', ...finalKeys, 'task_id', 'task_info', 'task_result', 'task_status', 'task_status_msg', 'updated_at', 'watermark_info']);
      expect(r.json.task_id).toBe(id);
    }
    expect(new Set(got.map((r) => r.headers['webhook-id'])).size).toBe(2);
    expect(got.map((r) => r.headers['webhook-id'])).toEqual(deliveries.map((d) => d.id));
    const query = (await api(t.url, 'GET', `${EXPAND}/${id}`, { key })).body.data;
    const final = got[1].json;
    expect(Object.keys(final).sort()).toEqual(Object.keys(query).sort());
    expect({ ...final, task_result: null }).toEqual({ ...query, task_result: null });
    expect(final.task_result.images).toHaveLength(1);
    const stored = await fetch(final.task_result.images[0].url);
    await stored.arrayBuffer(); // read: an unread body holds its connection, and the app's close waits for it
    expect(stored.status).toBe(200);
    expect(() => verify('whsec_' + Buffer.alloc(24, 1).toString('base64'), got[0])).toThrow();
  });

  it('retries a receiver that fails twice, with the same webhook-id, until it takes it', async () => {
    receiver.behave('/flaky', (n, res) => void res.writeHead(n <= 2 ? 500 : 200).end());
    const id = (await api(t.url, 'POST', EXPAND, { key, body: expandBody(`${receiver.url}/flaky`) })).body.data.task_id;
    const deliveries = await settled(t, key, `${EXPAND}/${id}/callbacks`, 2);
    expect(deliveries.map((d) => [d.status, d.state])).toEqual([
      ['processing', 'delivered'],
      ['succeed', 'delivered'],
    ]);
    expect(deliveries[0].attempt_log.map((a: { status_code: number }) => a.status_code)).toEqual([500, 500, 200]);
    expect(deliveries[0].attempt_log[0]).toEqual({ attempted_at: expect.any(String), status_code: 500, duration_ms: expect.any(Number), error: 'HTTP 500' });
    const got = at('/flaky');
    expect(got.map((r) => r.headers['webhook-id'])).toEqual([deliveries[0].id, deliveries[0].id, deliveries[0].id, deliveries[1].id]);
    // order: the later status only after the earlier one was delivered
    expect(got.map((r) => r.json.task_status)).toEqual(['processing', 'processing', 'processing', 'succeed']);
  });

  it('keeps retrying a receiver that is down for a while', async () => {
    const port = await freePort();
    const id = (await api(t.url, 'POST', EXPAND, { key, body: expandBody(`http://127.0.0.1:${port}/late`) })).body.data.task_id;
    await pollUntil(() => deliveriesOf(t, key, `${EXPAND}/${id}/callbacks`), (d) => d[0]?.attempts >= 2, { what: 'two failed attempts' });
    const late = await startReceiver(port);
    try {
      const deliveries = await settled(t, key, `${EXPAND}/${id}/callbacks`, 2);
      expect(deliveries.map((d) => d.state)).toEqual(['delivered', 'delivered']);
      expect(deliveries[0].attempt_log[0]).toEqual(expect.objectContaining({ status_code: null, error: expect.stringMatching(/ECONNREFUSED/) }));
      expect(late.received.map((r) => r.json.task_status)).toEqual(['processing', 'succeed']);
    } finally {
      await late.close();
    }
  });

  it('stops on a 410, and still delivers the later status', async () => {
    receiver.behave('/gone', (n, res) => void res.writeHead(n === 1 ? 410 : 200).end());
    const id = (await api(t.url, 'POST', EXPAND, { key, body: expandBody(`${receiver.url}/gone`) })).body.data.task_id;
    const deliveries = await settled(t, key, `${EXPAND}/${id}/callbacks`, 2);
    expect(deliveries.map((d) => [d.status, d.state, d.attempts])).toEqual([
      ['processing', 'failed', 1],
      ['succeed', 'delivered', 1],
    ]);
  });

  it('times out a receiver slower than the limit and tries again', async () => {
    receiver.behave('/slow', async (n, res) => {
      if (n === 1) await new Promise((r) => setTimeout(r, 4000));
      res.writeHead(200).end();
    });
    const id = (await api(t.url, 'POST', EXPAND, { key, body: expandBody(`${receiver.url}/slow`) })).body.data.task_id;
    const deliveries = await settled(t, key, `${EXPAND}/${id}/callbacks`, 2);
    expect(deliveries[0].state).toBe('delivered');
    expect(deliveries[0].attempt_log[0]).toEqual(expect.objectContaining({ status_code: null, error: expect.stringMatching(/time/) }));
    expect(deliveries[0].attempt_log[0].duration_ms).toBeLessThan(3900);
  });

  it('does not follow a redirect', async () => {
    receiver.behave('/moved', (n, res) => void res.writeHead(n <= 1 ? 302 : 200, n <= 1 ? { location: '/elsewhere' } : {}).end());
    const id = (await api(t.url, 'POST', EXPAND, { key, body: expandBody(`${receiver.url}/moved`) })).body.data.task_id;
    const deliveries = await settled(t, key, `${EXPAND}/${id}/callbacks`, 2);
    expect(deliveries[0].attempt_log[0]).toEqual(expect.objectContaining({ status_code: 302, error: 'HTTP 302 (redirects are not followed)' }));
    expect(at('/elsewhere')).toEqual([]);
  });

  it('rotations of one owner at once each succeed, one after the other: the first makes the secret, each next demotes the one before', async () => {
    // Before: two first rotations both created the row (a unique violation: 500, found by a fuzz run), and two
    // later ones both demoted the same secret
    for (const owner of ['rotating-new', 'rotating-new']) {
      const answers = await Promise.all(Array.from({ length: 6 }, () => api(t.url, 'POST', `/admin/owners/${owner}/webhook-secret/rotate`, { key: ADMIN })));
      expect(answers.map((a) => a.status)).toEqual(Array(6).fill(200));
      const secrets = new Set(answers.map((a) => a.body.secret as string));
      expect(secrets.size).toBe(6);
      // queued: each answer's previous secret is another answer's secret, but for the first's (none, or the secret before)
      const demoted = answers.map((a) => a.body.previous_secret as string | null).filter((p) => p !== null && secrets.has(p));
      expect(new Set(demoted).size).toBe(5);
    }
  });

  it('signs with both secrets during a rotation, each verifying', async () => {
    const old = await secretOf(t, 'hooks');
    const rotated = await api(t.url, 'POST', '/admin/owners/hooks/webhook-secret/rotate', { key: ADMIN });
    expect(rotated.status).toBe(200);
    expect(rotated.body).toEqual(expect.objectContaining({ owner: 'hooks', previous_secret: old, previous_expires_at: expect.any(String) }));
    expect(rotated.body.secret).not.toBe(old);
    const id = (await api(t.url, 'POST', EXPAND, { key, body: expandBody(`${receiver.url}/rotated`) })).body.data.task_id;
    await settled(t, key, `${EXPAND}/${id}/callbacks`, 2);
    for (const r of at('/rotated')) {
      expect(String(r.headers['webhook-signature']).split(' ')).toHaveLength(2);
      expect(() => verify(old, r)).not.toThrow();
      expect(() => verify(rotated.body.secret, r)).not.toThrow();
    }
  });

  it('notifies a video generation of dreaming and completed, as Luma does', async () => {
    const created = await api(t.url, 'POST', GEN, { key, body: { prompt: 'hooked', callback_url: `${receiver.url}/video` } });
    const deliveries = await settled(t, key, `${GEN}/${created.body.id}/callbacks`, 2);
    expect(deliveries.map((d) => [d.status, d.state])).toEqual([
      ['dreaming', 'delivered'],
      ['completed', 'delivered'],
    ]);
    const got = at('/video');
    expect(got.map((r) => r.json.state)).toEqual(['dreaming', 'completed']);
    expect(got[1].json).toEqual(expect.objectContaining({ id: created.body.id, generation_type: 'video', assets: { video: expect.any(String), image: expect.any(String) }, request: expect.any(Object), media_request: expect.any(Object) }));
    // the links in a callback use the same base as those the caller reads
    const read = await api(t.url, 'GET', `${GEN}/${created.body.id}`, { key });
    expect(new URL(got[1].json.assets.video).origin).toBe(new URL(read.body.assets.video).origin);
    expect(new URL(got[1].json.assets.video).origin).toBe(t.url);
    const secret = await secretOf(t, 'hooks');
    for (const r of got) expect(() => verify(secret, r)).not.toThrow();
  });

  it('shows a task\'s deliveries only to its owner, and lets an admin redeliver one with the same webhook-id', async () => {
    const id = (await api(t.url, 'POST', EXPAND, { key, body: expandBody(`${receiver.url}/again`) })).body.data.task_id;
    const [first] = await settled(t, key, `${EXPAND}/${id}/callbacks`, 2);
    const other = await t.createKey('someone-else');
    expect((await api(t.url, 'GET', `${EXPAND}/${id}/callbacks`, { key: other })).status).toBe(404);
    expect((await api(t.url, 'POST', `/admin/deliveries/${first.id}/redeliver`, { key })).status).toBe(403);
    const redelivered = await api(t.url, 'POST', `/admin/deliveries/${first.id}/redeliver`, { key: ADMIN });
    expect(redelivered.status).toBe(202);
    expect(redelivered.body).toEqual(expect.objectContaining({ id: first.id, state: 'pending', attempts: 0 }));
    await pollUntil(async () => at('/again').filter((r) => r.headers['webhook-id'] === first.id).length, (n) => n === 2, { what: 'the redelivery' });
    const again = at('/again').filter((r) => r.headers['webhook-id'] === first.id);
    expect(again[1].body).toBe(again[0].body);
    expect((await api(t.url, 'POST', '/admin/deliveries/6f1c2d3e-4a5b-4c6d-8e7f-9a0b1c2d3e4f/redeliver', { key: ADMIN })).status).toBe(404);
  });

  it('never sends the same attempt twice when two senders race', async () => {
    receiver.behave('/race', async (_n, res) => {
      await new Promise((r) => setTimeout(r, 300));
      res.writeHead(200).end();
    });
    const second = await startTestApp(FAST, { db: t.db });
    try {
      const id = (await api(t.url, 'POST', EXPAND, { key, body: expandBody(`${receiver.url}/race`) })).body.data.task_id;
      const [first] = await settled(t, key, `${EXPAND}/${id}/callbacks`, 2);
      await api(t.url, 'POST', `/admin/deliveries/${first.id}/redeliver`, { key: ADMIN });
      await Promise.all([t.app.get(CallbackSender).deliver(first.id), second.app.get(CallbackSender).deliver(first.id), t.app.get(CallbackSender).deliver(first.id)]);
      await settled(t, key, `${EXPAND}/${id}/callbacks`, 2);
      const sends = at('/race').filter((r) => r.headers['webhook-id'] === first.id);
      expect(sends).toHaveLength(2); // the first delivery and one redelivery, not more
    } finally {
      await second.close();
    }
  });
});

describe('callbacks to a refused target', () => {
  it('fail without ever reaching it when private targets are not allowed', async () => {
    const receiver = await startReceiver();
    // hooks.test resolves to loopback (the test's resolver): nothing in the URL says so, its delivery does
    const t = await startTestApp({ ADMIN_API_KEY: ADMIN }, { hostResolver: new HostTable({ 'hooks.test': '127.0.0.1' }) });
    try {
      const key = await t.createKey('strict');
      // a loopback address in the URL itself is refused at once, naming the field
      const literal = await api(t.url, 'POST', EXPAND, { key, body: expandBody(`${receiver.url}/private`) });
      expect([literal.status, literal.body.message]).toEqual([400, expect.stringMatching(/^callback_url must be a public http\(s\) URL: 127\.0\.0\.1 is a loopback address/)]);
      const id = (await api(t.url, 'POST', EXPAND, { key, body: expandBody(`http://hooks.test:${receiver.server.port}/private`) })).body.data.task_id;
      const deliveries = await settled(t, key, `${EXPAND}/${id}/callbacks`, 2);
      expect(deliveries.map((d) => [d.state, d.attempts])).toEqual([
        ['failed', 1],
        ['failed', 1],
      ]);
      expect(deliveries[0].last_error).toBe('the host hooks.test resolves to a loopback address: only public addresses are fetched (private targets are refused)');
      expect(receiver.received).toEqual([]);
      const metrics = await t.metrics();
      expect(metrics).toMatch(/mgw_callback_deliveries_failed_total\{reason="refused"\} 2/);
    } finally {
      await t.close();
      await receiver.close();
    }
  });
});

describe('giving up', () => {
  it('marks a notification failed after the last attempt, with a metric and a log line', async () => {
    const receiver = await startReceiver();
    receiver.behave('/down', (_n, res) => void res.writeHead(503).end());
    // give-up 2 s after the cycle starts, retries 0.3 s apart: the first attempt may come up to 1.6 s late
    // (a loaded machine) and there is still a second one
    const t = await startTestApp({ ...FAST, CALLBACK_GIVE_UP_AFTER_S: '2', CALLBACK_RETRY_SCHEDULE_S: '0.3' });
    try {
      const key = await t.createKey('giveup');
      const id = (await api(t.url, 'POST', EXPAND, { key, body: expandBody(`${receiver.url}/down`) })).body.data.task_id;
      const deliveries = await settled(t, key, `${EXPAND}/${id}/callbacks`, 2);
      expect(deliveries[0].state).toBe('failed');
      expect(deliveries[0].attempts).toBeGreaterThanOrEqual(2);
      expect(deliveries[0].last_error).toMatch(/^gave up after \d+ attempts: HTTP 503/);
      expect(await t.metrics()).toMatch(/mgw_callback_deliveries_failed_total\{reason="gave_up"\} 2/);
      expect(t.logs.lines.some((l) => String(l.msg).startsWith('callback failed after') && l.level === 'error')).toBe(true);
    } finally {
      await t.close();
      await receiver.close();
    }
  });

  it('honours Retry-After on a 429', async () => {
    const receiver = await startReceiver();
    receiver.behave('/busy', (n, res) => void res.writeHead(n === 1 ? 429 : 200, n === 1 ? { 'retry-after': '2' } : {}).end());
    const t = await startTestApp(FAST);
    try {
      const key = await t.createKey('busy');
      const id = (await api(t.url, 'POST', EXPAND, { key, body: expandBody(`${receiver.url}/busy`) })).body.data.task_id;
      await settled(t, key, `${EXPAND}/${id}/callbacks`, 2);
      const got = receiver.received.filter((r) => r.path === '/busy');
      expect(got[1].at - got[0].at).toBeGreaterThanOrEqual(1900); // not the 0.2 s of the schedule
    } finally {
      await t.close();
      await receiver.close();
    }
  });
});

describe('a crash after the status change', () => {
  /**
   * The crash is real (SIGKILL of the service's own process); the process that delivers afterwards is any other
   * instance on the database: here one in the test's process, so the test starts one process, not three.
   */
  it('still delivers: the notification waits in the database for the next process', async () => {
    const db = await createTestDatabase({ migrated: true });
    const [port, hookPort] = [await freePort(), await freePort()];
    const dataDir = await mkdtemp(path.join(tmpdir(), 'mgw-cbcrash-'));
    const env = { ADMIN_API_KEY: ADMIN, ALLOW_PRIVATE_URLS: 'true', CALLBACK_RETRY_SCHEDULE_S: '0.5', LOG_LEVEL: 'info' };
    const base = `http://127.0.0.1:${port}`;
    const first = Child.start('dist/main.js', [], { ...env, DATABASE_URL: db.url, PORT: String(port), DATA_DIR: dataDir });
    let second: TestApp | undefined;
    let receiver: Awaited<ReturnType<typeof startReceiver>> | undefined;
    try {
      await first.waitFor(/listening/);
      const key = await createKeyThrough(base, ADMIN, 'crash');
      const id = (await api(base, 'POST', EXPAND, { key, body: expandBody(`http://127.0.0.1:${hookPort}/after-crash`) })).body.data.task_id;
      // the receiver is down: the task ends and both notifications wait, undelivered
      await pollUntil(() => queryDb<{ n: number }>(db, "SELECT count(*)::int AS n FROM callback_deliveries WHERE task_id = $1 AND state = 'pending'", [id]), (rows) => rows[0].n === 2, { what: 'two pending notifications' });
      await pollUntil(() => queryDb<{ state: string }>(db, 'SELECT state FROM tasks WHERE id = $1', [id]), (rows) => rows[0].state === 'succeeded', { what: 'the task to succeed' });
      await first.stop('SIGKILL');

      receiver = await startReceiver(hookPort);
      second = await startTestApp(env, { db });
      await pollUntil(async () => receiver!.received.length, (n) => n === 2, { timeoutMs: 30_000, what: 'the notifications after the restart' });
      expect(receiver.received.map((r: Received) => r.json.task_status)).toEqual(['processing', 'succeed']);
    } finally {
      await first.stop('SIGKILL').catch(() => undefined);
      await second?.close();
      await receiver?.close();
      await db.drop();
      await rm(dataDir, { recursive: true, force: true });
    }
  });
});
