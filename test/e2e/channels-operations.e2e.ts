import type { FakeUpstream } from '../support/fake-upstreams.js';
import { startFakeKling } from '../support/vendors/kling/kling.fake.js';
import { startFakeLuma } from '../support/vendors/luma/luma.fake.js';
import { type FakeMusicAggregator, startFakeMusicAggregator } from '../support/vendors/suno-aggregator/suno-aggregator.fake.js';
import { sendBytes, startServer, type TestServer } from '../support/http-server.js';
import { png } from '../support/images.js';
import { wav } from '../support/media.js';
import { pollUntil } from '../support/poll.js';
import { api, queryDb, startTestApp, type TestApp } from '../support/test-app.js';

const ADMIN = 'admin-secret-0123456789';
const SECRET_KEY = 'b'.repeat(64);
const GEN = '/video-b/v1/generations';
const EXPAND = '/video-a/v1/images/editing/expand';
const RATIOS = { up_expansion_ratio: 0.25, bottom_expansion_ratio: 0.25, left_expansion_ratio: 0, right_expansion_ratio: 0 };
const FAST = { RELAY_POLL_MS: '50', OUTBOUND_ALLOW_HOSTS: '127.0.0.1', ADMIN_API_KEY: ADMIN, CHANNEL_SECRET_KEY: SECRET_KEY };
const KEYS = { lumaBusy: 'luma-key-busy-0001', lumaGood: 'luma-key-good-0002', sunoA: 'suno-key-a-000003', sunoB: 'suno-key-b-000004' };

type Attempt = { outcome: string; channel: string; latency_ms: number | null; message?: string | null };

/**
 * Reads until `done`, noting when the last read that still missed it was sent: a view at most 2 s old means
 * no read sent 2 s after the change misses it. Measured by when each read left, not when its answer came
 * back, so a loaded machine's slow answers do not count against the instance's cache.
 */
async function staleUntil<T>(read: () => Promise<T>, done: (value: T) => boolean, what: string): Promise<T & { lastStaleSentAt: number }> {
  let lastStaleSentAt = 0;
  const value = await pollUntil(
    async () => {
      const sentAt = Date.now();
      const answer = await read();
      if (!done(answer)) lastStaleSentAt = sentAt;
      return answer;
    },
    done,
    { what, timeoutMs: 10_000, intervalMs: 50 },
  );
  return Object.assign(value as object, { lastStaleSentAt }) as T & { lastStaleSentAt: number };
}

describe('channels for video, audio and music: failover, and follow-ups on the channel that holds what they follow', () => {
  let lumaBusy: FakeUpstream;
  let lumaGood: FakeUpstream;
  let sunoA: FakeMusicAggregator;
  let sunoB: FakeMusicAggregator;
  let files: TestServer;
  let t: TestApp;
  let key: string;
  beforeAll(async () => {
    [lumaBusy, lumaGood, sunoA, sunoB] = await Promise.all([startFakeLuma(KEYS.lumaBusy), startFakeLuma(KEYS.lumaGood), startFakeMusicAggregator(KEYS.sunoA, 2), startFakeMusicAggregator(KEYS.sunoB, 2)]);
    lumaBusy.knobs.createBusy = 1_000_000;
    lumaGood.knobs.pollsUntilDone = 2;
    files = await startServer((_req, res) => sendBytes(res, 'audio/wav', wav(6, 44100)));
    // relay with no RELAY_*_URL: every channel comes from the admin API
    t = await startTestApp({ ...FAST, ALLOW_PRIVATE_URLS: 'true', VIDEO_PROVIDER: 'relay', AUDIO_PROVIDER: 'relay', MUSIC_PROVIDER: 'relay' }); // the callers' files are on loopback too
    key = await t.createKey('team-ops');
  });
  afterAll(async () => {
    await t.close();
    await Promise.all([lumaBusy, lumaGood, sunoA, sunoB, files].map((s) => s.close()));
  });

  const admin = (method: string, path: string, body?: unknown) => api(t.url, method, path, { key: ADMIN, body });
  const addChannel = async (body: Record<string, unknown>) => {
    const res = await admin('POST', '/admin/channels', body);
    expect(res.status).toBe(201);
    return res.body.id as string;
  };
  const attemptsOf = async (id: string) => (await admin('GET', `/admin/tasks/${id}/attempts`)).body as Attempt[];
  const generation = async (body: Record<string, unknown>) => {
    const created = await api(t.url, 'POST', GEN, { key, body });
    expect(created.status).toBe(201);
    return (await pollUntil(() => api(t.url, 'GET', `${GEN}/${created.body.id}`, { key }), (r) => ['completed', 'failed'].includes(r.body.state), { what: 'the generation' })).body;
  };
  const submitMusic = async (path: string, body: unknown): Promise<string> => {
    const res = await api(t.url, 'POST', path, { key, body });
    expect([res.status, res.body.code]).toEqual([200, 'success']);
    return res.body.data;
  };
  const musicEnded = (id: string) =>
    pollUntil(async () => (await api(t.url, 'GET', `/music-a/fetch/${id}`, { key })).body.data, (d) => d.status === 'SUCCESS' || d.status === 'FAILURE', { timeoutMs: 30_000, what: `task ${id} to end` });

  let lumaGoodId: string;

  it('video: a Luma channel answering 429 is passed over; a keyframe naming an earlier generation goes to its channel, even disabled', async () => {
    await addChannel({ name: 'luma-busy', operations: ['video'], protocol: 'luma', base_url: lumaBusy.url, credentials: { api_key: KEYS.lumaBusy }, priority: 10 });
    lumaGoodId = await addChannel({ name: 'luma-good', operations: ['video'], protocol: 'luma', base_url: lumaGood.url, credentials: { api_key: KEYS.lumaGood } });
    const first = await generation({ prompt: 'a fox' });
    expect(first.state).toBe('completed');
    expect([lumaBusy.created.size, lumaGood.created.size]).toEqual([0, 1]);
    expect((await attemptsOf(first.id)).map((a) => [a.outcome, a.channel])).toEqual([
      ['busy', 'luma-busy'],
      ['accepted', 'luma-good'],
    ]);
    // the account that made the first generation alone knows its id: the extension goes there, though it is now disabled
    expect((await admin('POST', `/admin/channels/${lumaGoodId}/disable`)).body.status).toBe('disabled');
    const second = await generation({ prompt: 'further', keyframes: { frame0: { type: 'generation', id: first.id } } });
    expect(second.state).toBe('completed');
    expect(lumaGood.created.size).toBe(2);
    expect([...lumaGood.created.values()].at(-1)!.body.keyframes).toEqual({ frame0: { type: 'generation', id: 'luma-1' } });
    expect(lumaBusy.created.size).toBe(0);
    expect(lumaBusy.authFailures.concat(lumaGood.authFailures)).toEqual([]);
    await admin('POST', `/admin/channels/${lumaGoodId}/enable`);
  });

  it('audio and music: an upload and a song go to the suno channel of highest priority; a continuation of its clip stays there once it is disabled', async () => {
    const idA = await addChannel({ name: 'suno-a', operations: ['audio', 'music'], protocol: 'suno', base_url: `${sunoA.url}/suno`, credentials: { api_key: KEYS.sunoA }, priority: 10 });
    await addChannel({ name: 'suno-b', operations: ['audio', 'music'], protocol: 'suno', base_url: `${sunoB.url}/suno`, credentials: { api_key: KEYS.sunoB } });
    const upload = await submitMusic('/music-a/uploads/audio-url', { url: `${files.url}/clip.wav` });
    expect((await musicEnded(upload)).status).toBe('SUCCESS');
    const song = await musicEnded(await submitMusic('/music-a/submit/music', { prompt: 'waves', tags: 'ambient' }));
    expect(song.status).toBe('SUCCESS');
    expect([sunoA.created.size, sunoA.music.size, sunoB.created.size, sunoB.music.size]).toEqual([1, 1, 0, 0]);

    expect((await admin('POST', `/admin/channels/${idA}/disable`)).body.status).toBe('disabled');
    const fromUpload = await musicEnded(await submitMusic('/music-a/submit/music', { continue_clip_id: upload, continue_at: 3 }));
    const fromSong = await musicEnded(await submitMusic('/music-a/submit/music', { continue_clip_id: song.data[1].id, continue_at: 1 }));
    expect([fromUpload.status, fromSong.status]).toEqual(['SUCCESS', 'SUCCESS']);
    const sentToA = [...sunoA.music.values()].map((m) => m.body.continue_clip_id);
    expect(sentToA).toEqual([undefined, 'up-upload-1', 'up-clip-1-1']);
    // a new song now goes to the enabled channel
    expect((await musicEnded(await submitMusic('/music-a/submit/music', { prompt: 'new' }))).status).toBe('SUCCESS');
    expect([sunoA.music.size, sunoB.music.size]).toEqual([3, 1]);
    expect(sunoA.authFailures.concat(sunoB.authFailures)).toEqual([]);
  });

  it('answers each channel with its health over the last 5 minutes, and exports per-channel metrics without a credential', async () => {
    const list = (await admin('GET', '/admin/channels')).body as { name: string; health: Record<string, unknown> }[];
    const byName = Object.fromEntries(list.map((c) => [c.name, c.health]));
    expect(byName['luma-good']).toEqual(
      expect.objectContaining({ state: 'closed', consecutive_failures: 0, requests_5m: 2, success_rate_5m: 1, p50_latency_ms_5m: expect.any(Number), running_tasks: 0, last_error: null }),
    );
    expect(byName['luma-busy']).toEqual(expect.objectContaining({ requests_5m: 1, success_rate_5m: 0, last_error: expect.stringMatching(/busy/), last_error_at: expect.any(String) }));
    expect(byName['suno-b']).toEqual(expect.objectContaining({ requests_5m: 1, success_rate_5m: 1 }));
    const metrics = await t.metrics();
    expect(metrics).toMatch(/mgw_channel_requests_total\{channel="luma-good",operation="video",outcome="accepted"\} 2/);
    expect(metrics).toMatch(/mgw_channel_requests_total\{channel="luma-busy",operation="video",outcome="busy"\} 1/);
    expect(metrics).toMatch(/mgw_channel_request_duration_seconds_count\{channel="suno-a",operation="music"\} 3/);
    expect(metrics).toMatch(/mgw_channel_circuit_state\{channel="luma-good"\} 0/);
    expect(metrics).toMatch(/mgw_channel_enabled\{channel="suno-a"\} 0/);
    expect(metrics).toMatch(/mgw_channel_running_tasks\{channel="suno-b"\} 0/);
    const everything = [metrics, JSON.stringify(list), JSON.stringify(t.logs.lines)].join('\n');
    for (const secret of Object.values(KEYS)) expect(everything).not.toContain(secret);
  });

  it('tests a channel with a cheap call of its protocol: Luma credits, an aggregator fetch of nothing', async () => {
    const luma = await admin('POST', `/admin/channels/${lumaGoodId}/test`);
    expect([luma.status, luma.body.ok, luma.body.status_code]).toEqual([200, true, 200]);
    expect(lumaGood.server.requests.at(-1)).toEqual(expect.objectContaining({ method: 'GET', url: '/credits' }));
    const wrong = await addChannel({ name: 'suno-wrong-key', operations: ['music'], protocol: 'suno', base_url: `${sunoB.url}/suno`, credentials: { api_key: 'not-the-key-0000' } });
    const refused = await admin('POST', `/admin/channels/${wrong}/test`);
    expect([refused.body.ok, refused.body.status_code, refused.body.channel.status]).toEqual([false, 401, 'auto_disabled']);
    const suno = (await admin('GET', '/admin/channels')).body.find((c: { name: string }) => c.name === 'suno-b');
    const passed = await admin('POST', `/admin/channels/${suno.id}/test`);
    expect([passed.body.ok, passed.body.status_code]).toEqual([true, 404]);
  });

  it('music whose create answer was lost (the aggregator made it, then reset the connection) is never sent there again: a new song goes on to the other channel, a continuation fails', async () => {
    const channels = (await admin('GET', '/admin/channels')).body as { id: string; name: string }[];
    const idA = channels.find((c) => c.name === 'suno-a')!.id;
    expect((await admin('POST', `/admin/channels/${idA}/enable`)).body.status).toBe('enabled');
    const [a, b] = [sunoA.music.size, sunoB.music.size];
    sunoA.knobs.resetAfterCreate = 1;
    const song = await musicEnded(await submitMusic('/music-a/submit/music', { prompt: 'lost at sea' }));
    expect(song.status).toBe('SUCCESS');
    // made once on each account: the aggregator cannot be asked for a task by our id, so suno-a's (an orphan) is not looked for
    expect([sunoA.music.size, sunoB.music.size]).toEqual([a + 1, b + 1]);
    expect((await attemptsOf(song.task_id)).map((x) => [x.outcome, x.channel])).toEqual([
      ['ambiguous', 'suno-a'],
      ['abandoned', 'suno-a'],
      ['accepted', 'suno-b'],
    ]);
    // a continuation of a clip suno-a holds can go nowhere else: it fails with the gateway's reason, sent once
    const held = await musicEnded(await submitMusic('/music-a/submit/music', { prompt: 'on the rocks' }));
    expect(held.status).toBe('SUCCESS');
    expect(sunoA.music.size).toBe(a + 2);
    sunoA.knobs.resetAfterCreate = 1;
    const more = await musicEnded(await submitMusic('/music-a/submit/music', { continue_clip_id: held.data[0].id, continue_at: 1 }));
    expect([more.status, more.fail_reason]).toEqual(['FAILURE', expect.stringMatching(/^the gateway could not reach an upstream/)]);
    expect([sunoA.music.size, sunoB.music.size]).toEqual([a + 3, b + 1]);
    expect((await attemptsOf(more.task_id)).map((x) => [x.outcome, x.channel, x.message])).toEqual([
      ['ambiguous', 'suno-a', expect.any(String)],
      ['gateway_error', 'suno-a', expect.stringMatching(/^the upstream never answered the create request .*it was not sent again, to avoid a second \(billed\) music task$/)],
    ]);
  });
});

describe('periodic channel tests (CHANNEL_TEST_INTERVAL_S)', () => {
  it('re-enable an auto-disabled channel once its upstream accepts its keys again, never one an admin disabled', async () => {
    const kling = await startFakeKling('ak-periodic-0001', 'sk-periodic-secret-0001');
    const t = await startTestApp({ ...FAST, EXPAND_PROVIDER: 'relay', CHANNEL_TEST_INTERVAL_S: '1' });
    try {
      const add = async (name: string) =>
        (await api(t.url, 'POST', '/admin/channels', { key: ADMIN, body: { name, operations: ['expand'], protocol: 'kling', base_url: kling.url, credentials: { access_key: 'ak-periodic-0001', secret_key: 'sk-periodic-secret-0001' } } })).body.id as string;
      const auto = await add('periodic-auto');
      const manual = await add('periodic-manual');
      expect((await api(t.url, 'POST', `/admin/channels/${manual}/disable`, { key: ADMIN })).status).toBe(200);
      kling.knobs.rejectAuth = true;
      const status = async (id: string) => (await api(t.url, 'GET', `/admin/channels/${id}`, { key: ADMIN })).body;
      const tested = await api(t.url, 'POST', `/admin/channels/${auto}/test`, { key: ADMIN });
      expect(tested.body.channel.status).toBe('auto_disabled');
      // still refused: the periodic tests keep it auto-disabled
      await pollUntil(() => queryDb<{ n: number }>(t.db, `SELECT count(*)::int AS n FROM task_attempts WHERE channel_id = $1 AND task_id IS NULL`, [auto]), (r) => r[0].n >= 2, { what: 'a periodic test', timeoutMs: 15_000 });
      expect((await status(auto)).status).toBe('auto_disabled');
      kling.knobs.rejectAuth = false;
      const back = await pollUntil(() => status(auto), (c) => c.status === 'enabled', { what: 'the periodic test to re-enable it', timeoutMs: 15_000 });
      expect(back.status_reason).toBeNull();
      expect(t.logs.lines.some((l) => l.msg === 'channel re-enabled: its test passed' && l.level === 'warn')).toBe(true);
      expect((await status(manual)).status).toBe('disabled');
      expect((await queryDb<{ n: number }>(t.db, `SELECT count(*)::int AS n FROM task_attempts WHERE channel_id = $1`, [manual]))[0].n).toBe(0);
      const image = (await png(300, 300)).toString('base64');
      const teamKey = await t.createKey('team-periodic');
      const task = await api(t.url, 'POST', EXPAND, { key: teamKey, body: { image, ...RATIOS, n: 1 } });
      const done = await pollUntil(() => api(t.url, 'GET', `${EXPAND}/${task.body.data.task_id}`, { key: teamKey }), (r) => ['succeed', 'failed'].includes(r.body.data.task_status), { what: 'the task' });
      expect(done.body.data.task_status).toBe('succeed');
    } finally {
      await t.close();
      await kling.close();
    }
  }, 60_000);
});

describe('two instances on one database', () => {
  it('agree on a channel’s circuit and status within 2 s, and route by them', async () => {
    const flaky = await startFakeKling('ak-flaky-00001', 'sk-flaky-secret-00001');
    flaky.knobs.createBusy = 1_000_000;
    flaky.knobs.busyAnswer = { status: 429, code: 1302 };
    const good = await startFakeKling('ak-good2-00002', 'sk-good2-secret-00002');
    const env = { ...FAST, EXPAND_PROVIDER: 'relay', CHANNEL_FAILURE_THRESHOLD: '2', CHANNEL_CIRCUIT_OPEN_S: '600' };
    const one = await startTestApp(env);
    const two = await startTestApp(env, { db: one.db });
    try {
      const admin = (t: TestApp, method: string, path: string, body?: unknown) => api(t.url, method, path, { key: ADMIN, body });
      const flakyId = (await admin(one, 'POST', '/admin/channels', { name: 'flaky', operations: ['expand'], protocol: 'kling', base_url: flaky.url, credentials: { access_key: 'ak-flaky-00001', secret_key: 'sk-flaky-secret-00001' } })).body.id;
      const image = (await png(300, 300)).toString('base64');
      const teamKey = await one.createKey('team-two');
      const submit = async (t: TestApp) => (await api(t.url, 'POST', EXPAND, { key: teamKey, body: { image, ...RATIOS, n: 1 } })).body.data.task_id as string;
      // tasks on instance one wait for the busy channel until its circuit opens
      await submit(one);
      await submit(one);
      const openOnOne = await pollUntil(() => admin(one, 'GET', `/admin/channels/${flakyId}`), (r) => r.body.health.state === 'open', { what: 'the circuit to open', timeoutMs: 20_000 });
      const seenAt = Date.now();
      const openOnTwo = await staleUntil(() => admin(two, 'GET', `/admin/channels/${flakyId}`), (r) => r.body.health.state === 'open', 'instance two to see it open');
      expect(openOnTwo.lastStaleSentAt - seenAt).toBeLessThan(2_000);
      expect(openOnTwo.body.health.open_until).toBe(openOnOne.body.health.open_until);
      // while it is open, instance two sends it nothing
      const creates = flaky.server.requests.filter((r) => r.method === 'POST').length;
      const goodId = (await admin(two, 'POST', '/admin/channels', { name: 'good', operations: ['expand'], protocol: 'kling', base_url: good.url, credentials: { access_key: 'ak-good2-00002', secret_key: 'sk-good2-secret-00002' } })).body.id;
      const onTwo = await submit(two);
      await pollUntil(() => api(two.url, 'GET', `${EXPAND}/${onTwo}`, { key: teamKey }), (r) => r.body.data.task_status === 'succeed', { what: 'the task on instance two' });
      expect(flaky.server.requests.filter((r) => r.method === 'POST').length).toBe(creates);
      // a status an admin changes on one instance is what the other answers and routes by
      expect((await admin(two, 'POST', `/admin/channels/${goodId}/disable`)).body.status).toBe('disabled');
      const disabledAt = Date.now();
      const disabledOnOne = await staleUntil(() => admin(one, 'GET', `/admin/channels/${goodId}`), (r) => r.body.status === 'disabled', 'instance one to see it disabled');
      expect(disabledOnOne.lastStaleSentAt - disabledAt).toBeLessThan(2_000);
      const goodCreates = good.created.size;
      const waiting = await submit(one);
      await pollUntil(() => queryDb<{ state: string }>(one.db, 'SELECT state FROM tasks WHERE id = $1', [waiting]), (r) => r[0].state === 'running', { what: 'the task to be tried' });
      expect(good.created.size).toBe(goodCreates);
      await admin(one, 'POST', `/admin/channels/${goodId}/enable`);
      await pollUntil(() => api(one.url, 'GET', `${EXPAND}/${waiting}`, { key: teamKey }), (r) => r.body.data.task_status === 'succeed', { what: 'the waiting task once a channel is enabled' });
    } finally {
      await two.close();
      await one.close();
      await flaky.close();
      await good.close();
    }
  }, 90_000);
});
