import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { deadEndWords } from '../../src/modules/channels/channel-routing.js';
import { Child } from '../support/child-process.js';
import type { FakeUpstream } from '../support/fake-upstreams.js';
import { startFakeKling } from '../support/vendors/kling/kling.fake.js';
import { freePort } from '../support/free-port.js';
import { png } from '../support/images.js';
import { pollUntil } from '../support/poll.js';
import { api, createTestDatabase, queryDb, startTestApp, type TestApp } from '../support/test-app.js';
import { VENDORS } from '../../src/vendors/registry.js';

const ADMIN = 'admin-secret-0123456789';
const SECRET_KEY = 'a'.repeat(64);
const EXPAND = '/video-a/v1/images/editing/expand';
const RATIOS = { up_expansion_ratio: 0.25, bottom_expansion_ratio: 0.25, left_expansion_ratio: 0, right_expansion_ratio: 0 };

/** Adds a Kling-protocol channel for expand through the admin API. */
const addKling = (t: TestApp, name: string, url: string, [access, secret]: [string, string], priority = 0) =>
  api(t.url, 'POST', '/admin/channels', { key: ADMIN, body: { name, operations: ['expand'], protocol: 'kling', base_url: url, credentials: { access_key: access, secret_key: secret }, priority } });

/** Submits one expand task, waits for it to succeed, and answers the channel that holds it. */
async function runExpand(t: TestApp, key: string, image: string): Promise<string> {
  const id = (await api(t.url, 'POST', EXPAND, { key, body: { image, ...RATIOS, n: 1 } })).body.data.task_id as string;
  await pollUntil(() => api(t.url, 'GET', `${EXPAND}/${id}`, { key }), (r) => r.body.data.task_status === 'succeed', { what: `task ${id}` });
  return (await queryDb<{ channel_id: string }>(t.db, 'SELECT channel_id FROM tasks WHERE id = $1', [id]))[0].channel_id;
}
const FAST = { RELAY_POLL_MS: '50', OUTBOUND_ALLOW_HOSTS: '127.0.0.1', ADMIN_API_KEY: ADMIN };
const SECRETS = { a: ['ak-account-a-0001', 'sk-account-a-secret-1111'], b: ['ak-account-b-0002', 'sk-account-b-secret-2222'] };

describe('upstream channels: stored, managed by admins, credentials write-only, tasks routed and kept', () => {
  let a: FakeUpstream;
  let b: FakeUpstream;
  let t: TestApp;
  let key: string;
  let image: string;
  beforeAll(async () => {
    a = await startFakeKling(SECRETS.a[0], SECRETS.a[1]);
    b = await startFakeKling(SECRETS.b[0], SECRETS.b[1]);
    // relay with no RELAY_EXPAND_URL: the channels come from the admin API alone
    t = await startTestApp({ ...FAST, EXPAND_PROVIDER: 'relay', CHANNEL_SECRET_KEY: SECRET_KEY });
    key = await t.createKey('team-ch');
    image = (await png(300, 300)).toString('base64');
  });
  afterAll(async () => {
    await t.close();
    await a.close();
    await b.close();
  });

  const admin = (method: string, path: string, body?: unknown) => api(t.url, method, path, { key: ADMIN, body });
  const channel = (name: string, upstream: FakeUpstream, [access, secret]: string[], extra: Record<string, unknown> = {}) =>
    admin('POST', '/admin/channels', { name, operations: ['expand'], protocol: 'kling', base_url: upstream.url, credentials: { access_key: access, secret_key: secret }, ...extra });
  const submit = async () => {
    const res = await api(t.url, 'POST', EXPAND, { key, body: { image, ...RATIOS, n: 1 } });
    expect(res.status).toBe(200);
    return res.body.data.task_id as string;
  };
  const read = async (id: string) => (await api(t.url, 'GET', `${EXPAND}/${id}`, { key })).body.data;
  const ended = (id: string) => pollUntil(() => read(id), (d) => ['succeed', 'failed'].includes(d.task_status), { what: `task ${id}` });

  let idA: string;
  let idB: string;

  it('fails a task at once, saying why, while no channel can make it; runs the next once one is added', async () => {
    const early = await ended(await submit());
    expect([early.task_status, early.task_status_msg]).toEqual(['failed', deadEndWords('expand', 'task', 'none')]);
    const created = await channel('account-a', a, SECRETS.a, { priority: 10 });
    expect(created.status).toBe(201);
    idA = created.body.id;
    expect((await ended(await submit())).task_status).toBe('succeed');
    expect(a.created.size).toBe(1);
  });

  it('answers a channel with its credentials as their last 4 characters only; stores them sealed', async () => {
    const created = await channel('account-b', b, SECRETS.b, { weight: 50, max_running: 3 });
    expect(created.status).toBe(201);
    idB = created.body.id;
    expect(created.body).toEqual(
      expect.objectContaining({ name: 'account-b', operations: ['expand'], protocol: 'kling', base_url: b.url, weight: 50, priority: 0, max_running: 3, status: 'enabled', status_reason: null, source: 'admin', running_tasks: 0 }),
    );
    expect(created.body.credentials).toEqual({ access_key: '…0002', secret_key: '…2222' });
    const [row] = await queryDb<{ credentials: Buffer }>(t.db, 'SELECT credentials FROM channels WHERE id = $1', [idB]);
    for (const secret of SECRETS.b) expect(row.credentials.includes(Buffer.from(secret))).toBe(false);
    const list = await admin('GET', '/admin/channels');
    expect(list.body.map((c: { name: string }) => c.name)).toEqual(['account-a', 'account-b']); // priority first
    expect(JSON.stringify(list.body)).not.toMatch(/sk-account|ak-account/);
  });

  it('sends new tasks to the highest priority; a disabled channel finishes the tasks it holds, with its credentials, and new ones go elsewhere', async () => {
    a.knobs.pollsUntilDone = 1_000_000; // a's tasks stay processing until released
    const held = await submit();
    await pollUntil(() => Promise.resolve(a.created.size), (n) => n === 2, { what: 'the task to reach account-a' });
    expect((await admin('POST', `/admin/channels/${idA}/disable`)).body).toEqual(expect.objectContaining({ status: 'disabled', status_reason: 'disabled by an admin', running_tasks: 1 }));
    // disabled again: the same answer, and no second warning for a state that did not change
    expect((await admin('POST', `/admin/channels/${idA}/disable`)).body).toEqual(expect.objectContaining({ status: 'disabled', status_reason: 'disabled by an admin' }));
    expect(t.logs.lines.filter((l) => l.msg === 'channel disabled by an admin' && l.channel_id === idA)).toHaveLength(1);
    const deleting = await admin('DELETE', `/admin/channels/${idA}`);
    expect([deleting.status, deleting.body.code]).toEqual([409, 1204]);
    // its address and keys cannot change under the task it holds
    const moving = await admin('PATCH', `/admin/channels/${idA}`, { base_url: b.url });
    expect([moving.status, moving.body.message]).toEqual([409, expect.stringMatching(/holds 1 unfinished task/)]);
    const moved = await submit();
    expect((await ended(moved)).task_status).toBe('succeed');
    expect(b.created.size).toBe(1);
    a.knobs.pollsUntilDone = 1;
    expect((await ended(held)).task_status).toBe('succeed');
    expect(a.authFailures).toEqual([]);
    expect(a.created.size).toBe(2); // polled on a, never sent to b
    const [{ channel_id }] = await queryDb<{ channel_id: string }>(t.db, 'SELECT channel_id FROM tasks WHERE id = $1', [held]);
    expect(channel_id).toBe(idA);
    expect((await admin('DELETE', `/admin/channels/${idA}`)).status).toBe(200);
    expect((await admin('GET', `/admin/channels/${idA}`)).status).toBe(404);
  });

  it("within one priority: by weight (weight 0 only when no other can take it), and never past a channel's max_running", async () => {
    const zero = await admin('POST', '/admin/channels', { name: 'account-b-zero', operations: ['expand'], protocol: 'kling', base_url: b.url, credentials: { access_key: SECRETS.b[0], secret_key: SECRETS.b[1] }, weight: 0 });
    expect(zero.status).toBe(201);
    const before = b.created.size;
    b.knobs.pollsUntilDone = 1_000_000; // tasks stay running upstream: account-b (max_running 3) fills up
    const first = [await submit(), await submit(), await submit()];
    await pollUntil(() => Promise.resolve(b.created.size), (n) => n === before + 3, { what: 'three tasks upstream' });
    const overflow = await submit();
    await pollUntil(() => Promise.resolve(b.created.size), (n) => n === before + 4, { what: 'the fourth task upstream' });
    b.knobs.pollsUntilDone = 1;
    for (const id of [...first, overflow]) expect((await ended(id)).task_status).toBe('succeed');
    const channelOf = async (id: string) => (await queryDb<{ channel_id: string }>(t.db, 'SELECT channel_id FROM tasks WHERE id = $1', [id]))[0].channel_id;
    for (const id of first) expect(await channelOf(id)).toBe(idB);
    expect(await channelOf(overflow)).toBe(zero.body.id);
    // with room again, weight 0 is not chosen
    const later = await submit();
    expect((await ended(later)).task_status).toBe('succeed');
    expect(await channelOf(later)).toBe(idB);
    expect((await admin('DELETE', `/admin/channels/${zero.body.id}`)).status).toBe(200);
  });

  it('refuses bad channels naming the field, and a normal key', async () => {
    const bad = async (body: Record<string, unknown>, message: RegExp) => {
      const res = await admin('POST', '/admin/channels', { name: 'x', operations: ['expand'], protocol: 'kling', base_url: a.url, credentials: { access_key: 'k', secret_key: 's' }, ...body });
      expect([res.status, res.body.message]).toEqual([400, expect.stringMatching(message)]);
    };
    await bad({ weight: 1001 }, /^weight must be an integer from 0 to 1000/);
    await bad({ weight: -1 }, /^weight must be an integer from 0 to 1000/);
    await bad({ protocol: 'midjourney' }, new RegExp(`^protocol must be one of ${VENDORS.map((v) => v.protocol).join(', ')}$`));
    await bad({ operations: ['painting'] }, /^operations must hold only expand, video, audio, music, image/);
    await bad({ operations: ['audio'] }, /^operations: a kling channel takes only expand, video and image \(not audio\)/);
    await bad({ protocol: 'runway', operations: ['expand'], credentials: { api_key: 'k' } }, /^operations: a runway channel takes only video \(not expand\)/);
    // an expand channel lists its vendor's one model, priced per image
    await bad({ models: [{ name: 'm', vendor_model: 'kling-v2-1' }] }, /^models\[0\]\.vendor_model must be kling-expand, the kling expand model \(not kling-v2-1\)/);
    await bad({ models: [{ name: 'm', vendor_model: 'kling-expand', price: { per_second: { '720p': 1 } } }] }, /^models\[0\]\.price: an expand model is priced per_image/);
    await bad({ models: [{ name: 'm', vendor_model: 'kling-expand' }, { name: 'n', vendor_model: 'kling-expand' }] }, /^models: a kling expand channel serves one model/);
    await bad({ operations: ['audio'], protocol: 'suno', credentials: { api_key: 'k-123456789012' }, models: [{ name: 'm', vendor_model: 'x' }] }, /^models: only a channel that takes video, music, image, speech, stems or expand lists models/);
    await bad({ stall_after_s: 0 }, /^stall_after_s must be an integer from 1 to 86400, or null/);
    await bad({ stall_after_s: 86401 }, /^stall_after_s must be an integer from 1 to 86400, or null/);
    await bad({ operations: ['video'], models: [{ name: 'm', vendor_model: 'gen4.5' }] }, /^models\[0\]\.vendor_model must be one of the kling models: kling-v1, kling-v1-5, kling-v1-6, .* \(not gen4\.5\)/);
    await bad({ operations: ['video'], models: [{ name: 'm', vendor_model: 'kling-v2-1' }, { name: 'm', vendor_model: 'kling-v1-6' }] }, /^models\[1\]\.name: m is listed twice/);
    await bad({ operations: ['video'], models: [{ name: 'bad name', vendor_model: 'kling-v2-1' }] }, /models\[0\]\.name must be 1 to 64 characters/);
    await bad({ protocol: 'suno', operations: ['audio', 'video'], credentials: { api_key: 'k' } }, /^operations: a suno channel takes only audio, music and lyrics \(not video\)/);
    await bad({ protocol: 'gateway', operations: ['expand', 'music'], credentials: { api_key: 'k' } }, /^operations: one gateway channel has one base URL/);
    await bad({ protocol: 'luma', operations: ['video'], credentials: { access_key: 'a', secret_key: 'b' } }, /^credentials: a luma channel needs credentials.api_key/);
    await bad({ operations: [] }, /^operations must name at least one/);
    await bad({ credentials: { api_key: 'k' } }, /^credentials: a kling channel needs credentials.access_key and credentials.secret_key/);
    await bad({ protocol: 'gateway', credentials: { access_key: 'a', secret_key: 'b' } }, /^credentials: a gateway channel needs credentials.api_key/);
    await bad({ base_url: 'ftp://x' }, /^base_url must be/);
    await bad({ max_running: 0 }, /^max_running must be an integer from 1 to 100000/);
    const dup = await channel('account-b', b, SECRETS.b);
    expect([dup.status, dup.body.message]).toEqual([409, expect.stringContaining('"account-b" exists already')]);
    expect((await api(t.url, 'GET', '/admin/channels', { key })).status).toBe(403);
    const patched = await admin('PATCH', `/admin/channels/${idB}`, { weight: 7, max_running: null });
    expect([patched.status, patched.body.weight, patched.body.max_running]).toEqual([200, 7, null]);
    for (const field of ['weight', 'priority', 'name', 'protocol', 'base_url', 'operations', 'credentials']) {
      const nulled = await admin('PATCH', `/admin/channels/${idB}`, { [field]: null });
      expect([field, nulled.status, nulled.body.message]).toEqual([field, 400, expect.stringMatching(new RegExp(`${field} must not be null`))]);
    }
    await bad({ name: 'expand (RELAY_EXPAND_URL)' }, /^name must not contain "\(RELAY_"/);
    // a body that is not JSON is refused without quoting it back (it may hold a secret)
    const broken = await api(t.url, 'POST', '/admin/channels', { key: ADMIN, rawBody: '{"name":"x","credentials":{"secret_key":SK-9876543210zyxw}}', headers: { 'content-type': 'application/json' } });
    expect([broken.status, broken.text.includes('9876543210')]).toEqual([400, false]);
    const badPatch = await admin('PATCH', `/admin/channels/${idB}`, { weight: 2000 });
    expect([badPatch.status, badPatch.body.message]).toEqual([400, expect.stringMatching(/^weight must be an integer from 0 to 1000/)]);
    const badKeys = await admin('PATCH', `/admin/channels/${idB}`, { credentials: { api_key: 'only-a-bearer-key' } });
    expect([badKeys.status, badKeys.body.message]).toEqual([400, expect.stringMatching(/^credentials: a kling channel needs/)]);
  });

  it('never writes a credential into a log line', () => {
    const text = JSON.stringify(t.logs.lines);
    for (const secret of [...SECRETS.a, ...SECRETS.b]) expect(text).not.toContain(secret);
    expect(text).toMatch(/channel created/);
  });
});

describe('channels and the configuration', () => {
  it('shows RELAY_EXPAND_URL as a channel of the configuration, with the variables that hold its keys', async () => {
    const kling = await startFakeKling('ak-config', 'sk-config-secret');
    const t = await startTestApp({ ...FAST, EXPAND_PROVIDER: 'relay', RELAY_EXPAND_URL: kling.url, RELAY_KLING_ACCESS_KEY: 'ak-config', RELAY_KLING_SECRET_KEY: 'sk-config-secret' });
    try {
      const list = await api(t.url, 'GET', '/admin/channels', { key: ADMIN });
      expect(list.body).toEqual([
        expect.objectContaining({ name: 'expand (RELAY_EXPAND_URL)', source: 'config', protocol: 'kling', base_url: kling.url, status: 'enabled', credentials: { access_key: 'RELAY_KLING_ACCESS_KEY', secret_key: 'RELAY_KLING_SECRET_KEY' } }),
      ]);
      // an admin's channel beside it: its credentials are stored sealed, never as they were given
      const stored = await api(t.url, 'POST', '/admin/channels', { key: ADMIN, body: { name: 'n', operations: ['expand'], protocol: 'gateway', base_url: kling.url, credentials: { api_key: 'k-123456789012' } } });
      expect(stored.status).toBe(201);
      const [row] = await queryDb<{ credentials: Buffer }>(t.db, 'SELECT credentials FROM channels WHERE id = $1', [stored.body.id]);
      expect(row.credentials.includes(Buffer.from('k-123456789012'))).toBe(false);
    } finally {
      await t.close();
      await kling.close();
    }
  });

  it('refuses to start with stored channels and no key that opens them', async () => {
    const db = await createTestDatabase({ migrated: true });
    const first = await startTestApp({ ...FAST, CHANNEL_SECRET_KEY: SECRET_KEY }, { db });
    expect((await api(first.url, 'POST', '/admin/channels', { key: ADMIN, body: { name: 'n', operations: ['expand'], protocol: 'gateway', base_url: 'https://example.com', credentials: { api_key: 'k-123456789012' } } })).status).toBe(201);
    await first.close();
    // the real entry point, as an operator starts it, without CHANNEL_SECRET_KEY (a key of its own made in its DATA_DIR): it exits with the reason
    const service = Child.start('dist/main.js', [], { DATABASE_URL: db.url, PORT: '0', DATA_DIR: await mkdtemp(path.join(tmpdir(), 'mgw-ch-')), LOG_LEVEL: 'info', CHANNEL_SECRET_KEY: '' });
    const exit = await Promise.race([service.exited, new Promise<never>((_, reject) => setTimeout(() => reject(new Error(`still running:\n${service.output}`)), 60_000).unref())]);
    expect(exit.code).toBe(1);
    expect(service.output).toMatch(/\d+ stored secret\(s\) do not open with the key in \S+sealing\.key \(CHANNEL_SECRET_KEY is not set\) \(.*the credentials of channel [0-9a-f-]{36}/);
    // …nor with a key that does not open them
    const wrongKey = Child.start('dist/main.js', [], { DATABASE_URL: db.url, PORT: '0', DATA_DIR: await mkdtemp(path.join(tmpdir(), 'mgw-ch-')), CHANNEL_SECRET_KEY: 'b'.repeat(64) });
    const wrongExit = await Promise.race([wrongKey.exited, new Promise<never>((_, reject) => setTimeout(() => reject(new Error(`still running:\n${wrongKey.output}`)), 60_000).unref())]);
    expect(wrongExit.code).toBe(1);
    expect(wrongKey.output).toMatch(/\d+ stored secret\(s\) do not open with CHANNEL_SECRET_KEY \(.*the credentials of channel [0-9a-f-]{36}/);
    await db.drop();
  });
});

describe('dead credentials', () => {
  it('auto-disables a channel whose upstream answers 401, sends its task to another, and re-enables it by a passing test once its keys are accepted', async () => {
    const revoked = await startFakeKling('ak-revoked-000001', 'sk-revoked-secret-01');
    revoked.knobs.rejectAuth = true;
    const spare = await startFakeKling('ak-spare-000002', 'sk-spare-secret-0002');
    const t = await startTestApp({ ...FAST, EXPAND_PROVIDER: 'relay', CHANNEL_SECRET_KEY: SECRET_KEY });
    try {
      const first = (await addKling(t, 'revoked', revoked.url, ['ak-revoked-000001', 'sk-revoked-secret-01'], 10)).body;
      const spareCh = (await addKling(t, 'spare', spare.url, ['ak-spare-000002', 'sk-spare-secret-0002'], 0)).body;
      const key = await t.createKey('team-dead');
      const res = await api(t.url, 'POST', EXPAND, { key, body: { image: (await png(300, 300)).toString('base64'), ...RATIOS, n: 1 } });
      const id = res.body.data.task_id as string;
      const done = await pollUntil(() => api(t.url, 'GET', `${EXPAND}/${id}`, { key }), (r) => ['succeed', 'failed'].includes(r.body.data.task_status), { what: 'the task' });
      expect(done.body.data.task_status).toBe('succeed');
      expect((await queryDb<{ channel_id: string }>(t.db, 'SELECT channel_id FROM tasks WHERE id = $1', [id]))[0].channel_id).toBe(spareCh.id);
      const dead = (await api(t.url, 'GET', `/admin/channels/${first.id}`, { key: ADMIN })).body;
      expect([dead.status, dead.status_reason]).toEqual(['auto_disabled', "the upstream refused the account's credentials: Authentication failed"]);
      // a test while the keys are still refused keeps it disabled
      const failing = await api(t.url, 'POST', `/admin/channels/${first.id}/test`, { key: ADMIN });
      expect([failing.status, failing.body.ok, failing.body.status_code, failing.body.channel.status]).toEqual([200, false, 401, 'auto_disabled']);
      // the upstream accepts the keys again: a test brings the channel back
      revoked.knobs.rejectAuth = false;
      const passing = await api(t.url, 'POST', `/admin/channels/${first.id}/test`, { key: ADMIN });
      expect([passing.body.ok, passing.body.status_code, passing.body.channel.status, passing.body.channel.status_reason]).toEqual([true, 200, 'enabled', null]);
      // a channel an admin disabled is not brought back by a test
      await api(t.url, 'POST', `/admin/channels/${spareCh.id}/disable`, { key: ADMIN });
      const adminDisabled = await api(t.url, 'POST', `/admin/channels/${spareCh.id}/test`, { key: ADMIN });
      expect([adminDisabled.body.ok, adminDisabled.body.channel.status]).toEqual([true, 'disabled']);
      expect(JSON.stringify(t.logs.lines)).not.toMatch(/sk-(revoked|spare)-secret/);
    } finally {
      await t.close();
      await revoked.close();
      await spare.close();
    }
  });
});

describe('circuit breaking', () => {
  it('opens after CHANNEL_FAILURE_THRESHOLD failures (tasks pass it by without a request), lets one probe through once open time is over, and closes when it answers', async () => {
    const flaky = await startFakeKling('ak-flaky-000001', 'sk-flaky-secret-001');
    flaky.knobs.createBusy = 1_000_000;
    flaky.knobs.busyAnswer = { status: 200, code: 1303 };
    const good = await startFakeKling('ak-good2-000002', 'sk-good2-secret-02');
    const t = await startTestApp({ ...FAST, EXPAND_PROVIDER: 'relay', CHANNEL_SECRET_KEY: SECRET_KEY, CHANNEL_FAILURE_THRESHOLD: '2', CHANNEL_CIRCUIT_OPEN_S: '60' });
    try {
      const flakyCh = (await addKling(t, 'flaky', flaky.url, ['ak-flaky-000001', 'sk-flaky-secret-001'], 10)).body;
      const goodCh = (await addKling(t, 'good2', good.url, ['ak-good2-000002', 'sk-good2-secret-02'], 0)).body;
      const key = await t.createKey('team-circuit');
      const image = (await png(300, 300)).toString('base64');
      const run = () => runExpand(t, key, image);
      const channel = async () => (await api(t.url, 'GET', `/admin/channels/${flakyCh.id}`, { key: ADMIN })).body;
      const flakyPosts = () => flaky.server.requests.filter((r) => r.method === 'POST').length;
      expect(await run()).toBe(goodCh.id);
      const once = await channel(); // one failure: below the threshold
      expect([once.circuit_state, once.consecutive_failures]).toEqual(['closed', 1]);
      expect(await run()).toBe(goodCh.id);
      const open = await channel();
      expect([open.circuit_state, open.consecutive_failures, typeof open.circuit_open_until]).toEqual(['open', 0, 'string']);
      // open for CHANNEL_CIRCUIT_OPEN_S (long enough that the next task surely runs within it, however loaded the machine)
      expect(new Date(open.circuit_open_until).getTime()).toBeGreaterThan(Date.now() + 40_000);
      expect(t.logs.lines.some((l) => l.msg === 'channel circuit opened' && l.channel_id === flakyCh.id)).toBe(true);
      // while open, tasks pass it by without sending it anything
      const before = flakyPosts();
      expect(await run()).toBe(goodCh.id);
      expect(flakyPosts()).toBe(before);
      // the upstream recovers; once the open time is over, one task probes it and closes the circuit
      flaky.knobs.createBusy = 0;
      // the open time passes (moved to now rather than waited for)
      await queryDb(t.db, 'UPDATE channels SET circuit_open_until = now() WHERE id = $1', [flakyCh.id]);
      expect(await run()).toBe(flakyCh.id);
      const closed = await channel();
      expect([closed.circuit_state, closed.consecutive_failures, closed.circuit_open_until]).toEqual(['closed', 0, null]);
      expect(t.logs.lines.some((l) => l.msg === 'channel circuit closed' && l.channel_id === flakyCh.id)).toBe(true);
    } finally {
      await t.close();
      await flaky.close();
      await good.close();
    }
  });

  it("opens at once for an upstream's Retry-After, for that long (no failure counted), and one task probes it after", async () => {
    const told = await startFakeKling('ak-told-000001', 'sk-told-secret-0001');
    told.knobs.createBusy = 1_000_000;
    // 120 s: longer than any run below can take, however loaded the machine; the time is then made to pass
    // (below) rather than waited for, so that nothing here depends on how fast a task runs
    told.knobs.busyAnswer = { status: 429, code: 1303, retryAfter: '120' };
    const good = await startFakeKling('ak-good3-000002', 'sk-good3-secret-02');
    const t = await startTestApp({ ...FAST, EXPAND_PROVIDER: 'relay', CHANNEL_SECRET_KEY: SECRET_KEY });
    try {
      const toldCh = (await addKling(t, 'told', told.url, ['ak-told-000001', 'sk-told-secret-0001'], 10)).body;
      const goodCh = (await addKling(t, 'good3', good.url, ['ak-good3-000002', 'sk-good3-secret-02'], 0)).body;
      const key = await t.createKey('team-retry-after');
      const image = (await png(300, 300)).toString('base64');
      const run = () => runExpand(t, key, image);
      const channel = async () => (await api(t.url, 'GET', `/admin/channels/${toldCh.id}`, { key: ADMIN })).body;
      const toldPosts = () => told.server.requests.filter((r) => r.method === 'POST').length;
      const before = Date.now();
      expect(await run()).toBe(goodCh.id);
      const open = await channel();
      expect([open.circuit_state, open.consecutive_failures, open.health.state]).toEqual(['open', 0, 'open']);
      // for the 120 s it asked, give or take the time the request took: not the 30 s of CHANNEL_CIRCUIT_OPEN_S
      const openFor = new Date(open.circuit_open_until).getTime() - before;
      expect(openFor).toBeGreaterThan(119_000);
      expect(openFor).toBeLessThan(120_000 + (Date.now() - before));
      expect(t.logs.lines.find((l) => l.msg === 'channel circuit opened' && l.channel_id === toldCh.id)).toEqual(expect.objectContaining({ level: 'warn', open_s: 120, reason: 'Retry-After' }));
      expect(t.logs.lines.find((l) => l.msg === 'a channel did not take a task; trying another' && l.channel_id === toldCh.id)).toEqual(expect.objectContaining({ status: 429, upstream_code: 1303, retry_after_s: 120 }));
      // while open, tasks pass it by
      const posts = toldPosts();
      expect(await run()).toBe(goodCh.id);
      expect(toldPosts()).toBe(posts);
      // (the run above must have ended inside the open period for that to prove anything)
      expect(Date.now()).toBeLessThan(new Date(open.circuit_open_until).getTime());
      // once the time is over (made over: the open period ends a second ago, as the database's clock tells), one
      // task probes it; it has recovered and closes
      told.knobs.createBusy = 0;
      await queryDb(t.db, "UPDATE channels SET circuit_open_until = now() - interval '1 second' WHERE id = $1::uuid", [toldCh.id]);
      expect(new Date((await channel()).circuit_open_until).getTime()).toBeLessThanOrEqual(Date.now());
      expect(await run()).toBe(toldCh.id);
      expect((await channel()).circuit_state).toBe('closed');
    } finally {
      await t.close();
      await told.close();
      await good.close();
    }
  });
  it('with nowhere else to go, 20 waiting tasks do not each knock: the channel gets its threshold, then one probe per open period, and each task is created once when it recovers', async () => {
    const solo = await startFakeKling('ak-solo-000001', 'sk-solo-secret-0001');
    solo.knobs.createBusy = 1_000_000;
    solo.knobs.busyAnswer = { status: 200, code: 1303 };
    const t = await startTestApp({ ...FAST, EXPAND_PROVIDER: 'relay', CHANNEL_SECRET_KEY: SECRET_KEY, CHANNEL_CIRCUIT_OPEN_S: '1', RELAY_CONCURRENCY: '4' });
    try {
      const created = await addKling(t, 'solo', solo.url, ['ak-solo-000001', 'sk-solo-secret-0001']);
      const key = await t.createKey('team-solo');
      const image = (await png(300, 300)).toString('base64');
      const ids = await Promise.all(Array.from({ length: 20 }, async () => (await api(t.url, 'POST', EXPAND, { key, body: { image, ...RATIOS, n: 1 } })).body.data.task_id as string));
      const openings = async () => (await queryDb<{ openings: number }>(t.db, 'SELECT openings FROM channels WHERE id = $1', [created.body.id]))[0].openings;
      // opened at the threshold (5), then two probes failed (open 1 s, then 2 s): about 3 s of 20 tasks waiting
      await pollUntil(openings, (n) => n >= 3, { what: 'the circuit to open and two probes to fail', timeoutMs: 20_000 });
      const posts = solo.server.requests.filter((r) => r.method === 'POST').length;
      expect(posts).toBeGreaterThanOrEqual(5 + 2);
      expect(posts).toBeLessThanOrEqual(5 + 4 + 2); // the threshold, the creates in flight when it opened (RELAY_CONCURRENCY), two probes
      solo.knobs.createBusy = 0;
      await pollUntil(
        () => queryDb<{ state: string; n: number }>(t.db, 'SELECT state, count(*)::int AS n FROM tasks WHERE id = ANY($1::uuid[]) GROUP BY state', [ids]),
        (rows) => rows.length === 1 && rows[0].state === 'succeeded',
        { timeoutMs: 60_000, what: 'the 20 tasks to succeed once the channel recovers' },
      );
      expect([...solo.created.values()].map((c) => c.body.external_task_id).sort()).toEqual([...ids].sort());
    } finally {
      await t.close();
      await solo.close();
    }
  }, 90_000);
});

describe('a task no channel can take', () => {
  it('fails at once, long before EXPAND_TIMEOUT_S: words the team can act on, the detail for admins', async () => {
    // an hour's deadline: the task cannot end by it within this test
    const t = await startTestApp({ ...FAST, EXPAND_PROVIDER: 'relay', EXPAND_TIMEOUT_S: '3600' });
    try {
      expect(t.logs.lines.some((l) => String(l.msg).startsWith('no enabled channel for expand: its tasks fail at once'))).toBe(true);
      const key = await t.createKey('team-none');
      const res = await api(t.url, 'POST', EXPAND, { key, body: { image: (await png(300, 300)).toString('base64'), ...RATIOS, n: 1 } });
      const id = res.body.data.task_id as string;
      const done = await pollUntil(() => api(t.url, 'GET', `${EXPAND}/${id}`, { key }), (r) => r.body.data.task_status === 'failed', { timeoutMs: 20_000, what: 'the task to fail' });
      expect(done.body.data.task_status_msg).toBe('no channel of the gateway can make this task as asked; its credits were given back');
      const attempts = (await api(t.url, 'GET', `/admin/tasks/${id}/attempts`, { key: ADMIN })).body;
      expect(attempts).toEqual([expect.objectContaining({ outcome: 'gateway_error', channel: null, latency_ms: null, message: 'no channel of expand can make the task: none exists, or none of them has a model that makes it' })]);
      // one step: it never waited for a channel
      const [row] = await queryDb<{ attempts: number }>(t.db, 'SELECT attempts FROM tasks WHERE id = $1', [id]);
      expect(row.attempts).toBe(1);
    } finally {
      await t.close();
    }
  });
});

describe('failover between channels: a busy or unreachable account is passed over, never sent the same task twice', () => {
  it('runs 30 tasks on the working channel while one answers 1303 and one refuses connections; their circuits open instead of being knocked on', async () => {
    const busy = await startFakeKling('ak-busy-000001', 'sk-busy-secret-000001');
    busy.knobs.createBusy = 1_000_000;
    busy.knobs.busyAnswer = { status: 200, code: 1303 };
    const good = await startFakeKling('ak-good-000002', 'sk-good-secret-000002');
    const closedPort = await freePort(); // nothing listens there: connections are refused before anything is sent
    const t = await startTestApp({ ...FAST, EXPAND_PROVIDER: 'relay', CHANNEL_SECRET_KEY: SECRET_KEY });
    try {
      const busyCh = (await addKling(t, 'busy', busy.url, ['ak-busy-000001', 'sk-busy-secret-000001'])).body;
      const downCh = (await addKling(t, 'down', `http://127.0.0.1:${closedPort}`, ['ak-down-000003', 'sk-down-secret-000003'])).body;
      const goodCh = (await addKling(t, 'good', good.url, ['ak-good-000002', 'sk-good-secret-000002'])).body;
      const key = await t.createKey('team-failover');
      const image = (await png(300, 300)).toString('base64');
      const ids = await Promise.all(
        Array.from({ length: 30 }, async () => (await api(t.url, 'POST', EXPAND, { key, body: { image, ...RATIOS, n: 1 } })).body.data.task_id as string),
      );
      const done = await pollUntil(
        () => queryDb<{ state: string; n: number }>(t.db, 'SELECT state, count(*)::int AS n FROM tasks WHERE id = ANY($1::uuid[]) GROUP BY state', [ids]),
        (rows) => rows.length === 1 && rows[0].state === 'succeeded',
        { timeoutMs: 60_000, what: 'the 30 tasks to succeed' },
      );
      expect(done).toEqual([{ state: 'succeeded', n: 30 }]);
      // each task created exactly once, on the working channel, and held by it
      const external = [...good.created.values()].map((c) => c.body.external_task_id);
      expect(external.sort()).toEqual([...ids].sort());
      expect(busy.created.size).toBe(0);
      const holders = await queryDb<{ channel_id: string }>(t.db, 'SELECT DISTINCT channel_id FROM tasks WHERE id = ANY($1::uuid[])', [ids]);
      expect(holders).toEqual([{ channel_id: goodCh.id }]);
      // the refusing channels' circuits opened instead of receiving a create per task and per retry
      const busyCreates = busy.server.requests.filter((r) => r.method === 'POST').length;
      expect(busyCreates).toBeGreaterThan(0);
      expect(busyCreates).toBeLessThan(30);
      const channels = (await api(t.url, 'GET', '/admin/channels', { key: ADMIN })).body as { id: string; last_error: string | null }[];
      expect(channels.find((c) => c.id === busyCh.id)?.last_error).toMatch(/busy/);
      expect(channels.find((c) => c.id === downCh.id)?.last_error).toMatch(/did not answer|ECONNREFUSED/);
      // both refusing channels' circuits opened (CHANNEL_FAILURE_THRESHOLD 5), the working one's never did
      const openings = await queryDb<{ id: string; openings: number }>(t.db, 'SELECT id, openings FROM channels WHERE id = ANY($1::uuid[])', [[busyCh.id, downCh.id, goodCh.id]]);
      const opened = Object.fromEntries(openings.map((o) => [o.id, o.openings]));
      expect([opened[busyCh.id] > 0, opened[downCh.id] > 0, opened[goodCh.id]]).toEqual([true, true, 0]);
      expect(t.logs.lines.filter((l) => l.msg === 'channel circuit opened' && l.level === 'warn').map((l) => l.channel)).toEqual(expect.arrayContaining(['busy', 'down']));
      // health: the working channel answered every create it was sent, the busy one none
      const health = Object.fromEntries(channels.map((c) => [c.id, (c as unknown as { health: Record<string, unknown> }).health]));
      expect(health[goodCh.id]).toEqual(expect.objectContaining({ state: 'closed', requests_5m: 30, success_rate_5m: 1, p50_latency_ms_5m: expect.any(Number) }));
      expect(health[busyCh.id]).toEqual(expect.objectContaining({ success_rate_5m: 0, last_error: expect.stringMatching(/busy/) }));
      // each task's attempts are kept for admins: where it went, in order, and what came of it
      const attempts = await Promise.all(ids.map(async (id) => (await api(t.url, 'GET', `/admin/tasks/${id}/attempts`, { key: ADMIN })).body as { outcome: string; channel: string }[]));
      for (const list of attempts) expect(list.at(-1)).toEqual(expect.objectContaining({ outcome: 'accepted', channel: 'good' }));
      const passedOver = attempts.flat().filter((a) => a.outcome !== 'accepted');
      expect(passedOver.length).toBeGreaterThan(0);
      for (const a of passedOver) expect([['busy', 'busy'], ['unreachable', 'down']]).toContainEqual([a.outcome, a.channel]);
      expect((await api(t.url, 'GET', '/admin/tasks/00000000-0000-4000-8000-000000000000/attempts', { key: ADMIN })).status).toBe(404);
      expect((await api(t.url, 'GET', `/admin/tasks/${ids[0]}/attempts`, { key })).status).toBe(403);
      // each refusal is logged with the channel and the task, never a credential
      const refusals = t.logs.lines.filter((l) => l.msg === 'a channel did not take a task; trying another');
      expect(refusals.length).toBeGreaterThan(0);
      expect(refusals[0]).toEqual(expect.objectContaining({ channel_id: expect.any(String), task_id: expect.any(String), retry_after_s: null }));
      expect(refusals.find((l) => l.channel === 'busy')).toEqual(expect.objectContaining({ outcome: 'busy', status: 200, upstream_code: 1303, retry_after_s: null }));
      expect(refusals.find((l) => l.channel === 'down')).toEqual(expect.objectContaining({ outcome: 'unreachable', status: null, reason: expect.stringMatching(/ECONNREFUSED|did not answer/) }));
      expect(JSON.stringify(t.logs.lines)).not.toMatch(/sk-(busy|good|down)-secret/);
    } finally {
      await t.close();
      await busy.close();
      await good.close();
    }
  }, 120_000);
});

