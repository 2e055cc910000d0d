import { type FakeMusicAggregator, startFakeMusicAggregator } from '../support/vendors/suno-aggregator/suno-aggregator.fake.js';
import { pollUntil } from '../support/poll.js';
import { startTcpProxy, type TcpProxy } from '../support/tcp-proxy.js';
import { api, startTestApp, type TestApp } from '../support/test-app.js';
import { startReceiver } from '../support/webhook-receiver.js';

const ADMIN = 'admin-secret-lyrics-0123456789';
const KEY = 'agg-lyrics-key-0123';

/** The tasks' record, fetched until it ends. */
function ender(t: TestApp, key: string) {
  return (id: string) =>
    pollUntil(async () => (await api(t.url, 'GET', `/music-a/fetch/${id}`, { key })).body.data, (d) => d?.status === 'SUCCESS' || d?.status === 'FAILURE', { timeoutMs: 30_000, what: `lyrics task ${id} to end` });
}

describe('lyrics: written offline by the sandbox, through the Suno-style door', () => {
  let t: TestApp;
  let key: string;
  beforeAll(async () => {
    t = await startTestApp({ PROVIDER: 'sandbox', ALLOW_PRIVATE_URLS: 'true' });
    key = await t.createKey('team-lyrics');
  });
  afterAll(() => t.close());

  const submit = (body: unknown) => api(t.url, 'POST', '/music-a/submit/lyrics', { key, body });

  it("answers new-api's submit, then the task as new-api words it: action LYRICS, its title and lyrics in data, with sections and the prompt's words", async () => {
    const res = await submit({ prompt: '  a summer road trip along the coast with old friends  ' });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ code: 'success', message: '', data: expect.stringMatching(/^[0-9a-f-]{36}$/) });
    const task = await ender(t, key)(res.body.data);
    expect(task).toEqual(
      expect.objectContaining({ task_id: res.body.data, action: 'LYRICS', status: 'SUCCESS', fail_reason: '', progress: '100%', data: { id: res.body.data, text: expect.any(String), title: expect.any(String), status: 'complete' } }),
    );
    expect(task.data.text.match(/^\[[A-Za-z]+\]$/gm)).toEqual(expect.arrayContaining(['[Verse]', '[Chorus]', '[Bridge]']));
    for (const word of ['summer', 'road', 'trip', 'coast', 'friends']) expect(task.data.text).toContain(word);
    expect(task.data.title.length).toBeGreaterThan(0);
    // the same prompt, the same lyrics (the prompt's spaces around it are not part of it); several at once in the asked order
    const again = await ender(t, key)((await submit({ prompt: 'a summer road trip along the coast with old friends' })).body.data);
    expect([again.data.title, again.data.text]).toEqual([task.data.title, task.data.text]);
    const many = await api(t.url, 'POST', '/music-a/fetch', { key, body: { ids: [again.task_id, task.task_id] } });
    expect(many.body.data.map((d: any) => [d.task_id, d.action])).toEqual([
      [again.task_id, 'LYRICS'],
      [task.task_id, 'LYRICS'],
    ]);
    // the cross-operation view knows it as a lyrics task, its versions its result
    const view = await api(t.url, 'GET', `/tasks/${task.task_id}`, { key });
    expect([view.status, view.body.kind]).toEqual([200, 'lyrics']);
  });

  it('takes a prompt of 3,000 characters; refuses an empty one, one of 3,001 and an unknown mv with 400 naming the field', async () => {
    const longest = 'la '.repeat(1000).trim().padEnd(3000, 'x');
    expect([...longest].length).toBe(3000);
    const ok = await submit({ prompt: longest });
    expect([ok.status, ok.body.code]).toEqual([200, 'success']);
    // 3,000 once trimmed: the spaces around it are not counted
    expect((await submit({ prompt: `  ${longest}\n` })).status).toBe(200);
    const cases: [unknown, RegExp][] = [
      [{}, /^prompt is required/],
      [{ prompt: '' }, /^prompt must not be empty/],
      [{ prompt: '   \n ' }, /^prompt must not be empty/],
      [{ prompt: 42 }, /^prompt must be a string/],
      [{ prompt: `${longest}x` }, /^prompt must be at most 3000 characters long \(got 3001\)/],
      [{ prompt: 'rain', mv: 'chirp-v4' }, /^mv: no configured lyrics model is named chirp-v4 \(the models: suno_lyrics/],
      [{ prompt: 'rain', mv: 'no such model!' }, /^mv must be a model name/],
    ];
    for (const [body, message] of cases) {
      const res = await submit(body);
      expect([JSON.stringify(body).slice(0, 40), res.status, res.body.code, res.body.message, typeof res.body.request_id]).toEqual([JSON.stringify(body).slice(0, 40), 400, 'invalid_parameter', expect.stringMatching(message), 'string']);
    }
    // the model named by its name is taken
    expect((await submit({ prompt: 'rain', mv: 'suno_lyrics' })).status).toBe(200);
  });

  it("calls back with the task's record, as its fetch answers it", async () => {
    const receiver = await startReceiver();
    try {
      const id = (await submit({ prompt: 'neon city lights', notify_hook: `${receiver.url}/hook` })).body.data;
      await pollUntil(async () => receiver.received.filter((r) => r.json?.task_id === id).map((r) => r.json.status), (s) => s.includes('SUCCESS'), { what: 'the SUCCESS callback' });
      const success = receiver.received.find((r) => r.json?.task_id === id && r.json.status === 'SUCCESS')!;
      expect([success.json.action, success.json.data.status, success.json.data.text]).toEqual(['LYRICS', 'complete', expect.stringContaining('neon')]);
    } finally {
      await receiver.close();
    }
  });

  it('GET /models lists the lyrics models with their prompt limit and versions', async () => {
    const res = await api(t.url, 'GET', '/models', { key });
    expect(res.body.models.filter((m: any) => m.operation === 'lyrics')).toEqual(
      expect.arrayContaining([{ name: 'suno_lyrics', operation: 'lyrics', vendor: 'suno', vendor_model: 'suno_lyrics', max_prompt_chars: 3000, versions: 1, credits_per_task: 1 }]),
    );
  });
});

describe('lyrics relayed to Suno-style aggregators in new-api\'s words', () => {
  let t: TestApp;
  let key: string;
  let first: FakeMusicAggregator;
  let second: FakeMusicAggregator;
  const channels: Record<string, string> = {};
  beforeAll(async () => {
    [first, second] = await Promise.all([startFakeMusicAggregator(KEY), startFakeMusicAggregator(KEY)]);
    t = await startTestApp({ LYRICS_PROVIDER: 'relay', ADMIN_API_KEY: ADMIN, CHANNEL_SECRET_KEY: 'c'.repeat(64), OUTBOUND_ALLOW_HOSTS: '127.0.0.1', ALLOW_PRIVATE_URLS: 'true', RELAY_POLL_MS: '50', LYRICS_TIMEOUT_S: '60' });
    key = await t.createKey('team-lyrics-relay');
    for (const [name, agg, priority] of [['first', first, 10], ['second', second, 0]] as const) {
      const res = await api(t.url, 'POST', '/admin/channels', { key: ADMIN, body: { name, protocol: 'suno', operations: ['lyrics'], base_url: `${agg.url}/suno`, credentials: { api_key: KEY }, priority } });
      expect([name, res.status, res.body.message]).toEqual([name, 201, undefined]);
      channels[name] = res.body.id as string;
    }
  }, 60_000);
  afterAll(async () => {
    await t.close();
    await Promise.all([first.close(), second.close()]);
  });

  const submit = async (body: unknown): Promise<string> => {
    const res = await api(t.url, 'POST', '/music-a/submit/lyrics', { key, body });
    expect([res.status, res.body.code]).toEqual([200, 'success']);
    return res.body.data;
  };
  const used = async () => (await api(t.url, 'GET', '/admin/owners/team-lyrics-relay/limits', { key: ADMIN })).body.usage.credits_used as number;

  it("sends new-api's submit (the prompt), watches the task to SUCCESS and keeps its lyrics, no upstream id shown", async () => {
    first.batchFetch = true;
    const id = await submit({ prompt: 'lighthouse keeper' });
    const task = await ender(t, key)(id);
    expect([task.status, task.data.title, task.data.text]).toEqual(['SUCCESS', 'Upstream: lighthouse keeper', expect.stringContaining('[Chorus]\nlighthouse keeper')]);
    const [upstreamId, sent] = [...first.lyrics.entries()].at(-1)!;
    expect(sent.body).toEqual({ prompt: 'lighthouse keeper' });
    expect(JSON.stringify(task)).not.toContain(upstreamId);
    expect(first.authFailures).toEqual([]);
    // asked about through its batch fetch (POST /fetch {ids}), which it answers
    expect(first.batchFetches).toBeGreaterThan(0);
    first.batchFetch = false;
  });

  it('a channel whose aggregator fails the task: the second channel writes it, one charge, both attempts shown', async () => {
    first.lyricsEnding = { kind: 'failure', reason: 'upstream lyrics service error' };
    const before = await used();
    const id = await submit({ prompt: 'harbour lights at dawn' });
    const task = await ender(t, key)(id);
    first.lyricsEnding = { kind: 'success' };
    expect([task.status, task.data.text]).toEqual(['SUCCESS', expect.stringContaining('harbour lights at dawn')]);
    expect([...first.lyrics.values()].at(-1)!.body).toEqual({ prompt: 'harbour lights at dawn' });
    expect([...second.lyrics.values()].at(-1)!.body).toEqual({ prompt: 'harbour lights at dawn' });
    const attempts = (await api(t.url, 'GET', `/admin/tasks/${id}/attempts`, { key: ADMIN })).body as { channel: string; outcome: string }[];
    expect(attempts.map((a) => [a.channel, a.outcome])).toEqual([
      ['first', 'accepted'],
      ['first', 'abandoned'],
      ['second', 'accepted'],
    ]);
    expect((await used()) - before).toBe(1);
  });

  it("with every channel failing it, ends FAILURE with the upstream's words", async () => {
    first.lyricsEnding = { kind: 'failure', reason: 'prompt rejected by the lyrics service' };
    second.lyricsEnding = { kind: 'failure', reason: 'prompt rejected by the lyrics service' };
    try {
      const task = await ender(t, key)(await submit({ prompt: 'nothing good' }));
      expect([task.status, task.fail_reason, task.data.status]).toEqual(['FAILURE', expect.stringContaining('prompt rejected by the lyrics service'), 'error']);
      expect(JSON.stringify(task)).not.toMatch(/up-lyr/);
    } finally {
      first.lyricsEnding = { kind: 'success' };
      second.lyricsEnding = { kind: 'success' };
    }
  });
});

describe('lyrics called back by the aggregator (notify_hook)', () => {
  let t: TestApp;
  let key: string;
  let agg: FakeMusicAggregator;
  let proxy: TcpProxy;
  beforeAll(async () => {
    agg = await startFakeMusicAggregator(KEY);
    // the aggregator reaches the gateway on loopback: its port is known once it listens, so it is given a proxy's, in front of it
    const gateway = { host: '127.0.0.1', port: 0 };
    proxy = await startTcpProxy(gateway);
    // the safety poll (600 s) is far beyond the test's deadline: only the callback can end the task in time
    t = await startTestApp({ LYRICS_PROVIDER: 'relay', RELAY_LYRICS_URL: `${agg.url}/suno`, RELAY_API_KEY: KEY, OUTBOUND_ALLOW_HOSTS: '127.0.0.1', RELAY_POLL_MS: '50', UPSTREAM_CALLBACK_BASE_URL: `http://127.0.0.1:${proxy.port}`, UPSTREAM_CALLBACK_POLL_S: '600' });
    gateway.port = Number(new URL(t.url).port);
    key = await t.createKey('team-lyrics-callbacks');
  }, 60_000);
  afterAll(async () => {
    await t.close();
    await Promise.all([agg.close(), proxy.close()]);
  });

  it("sends notify_hook with the prompt, waits unpolled, and ends when the aggregator calls back", async () => {
    const res = await api(t.url, 'POST', '/music-a/submit/lyrics', { key, body: { prompt: 'midnight train' } });
    expect(res.status).toBe(200);
    const id = res.body.data as string;
    const upstreamId = (await pollUntil(async () => [...agg.lyrics.entries()].find(([, task]) => String(task.body.notify_hook).includes(`/upstream-callbacks/${id}/`))?.[0], Boolean, { what: 'the create at the aggregator' }))!;
    expect(Object.keys(agg.lyrics.get(upstreamId)!.body).sort()).toEqual(['notify_hook', 'prompt']);
    expect((await api(t.url, 'GET', `/music-a/fetch/${id}`, { key })).body.data.status).not.toBe('SUCCESS');
    expect(agg.lyrics.get(upstreamId)!.polls).toBe(0);
    const callback = await agg.finishLyrics(upstreamId);
    expect(callback?.status).toBe(200);
    const task = await ender(t, key)(id);
    expect([task.status, task.data.text]).toEqual(['SUCCESS', expect.stringContaining('midnight train')]);
  });
});
