import { GATEWAY_FAILURE } from '../../src/modules/channels/channel-router.js';
import type { FakeUpstream } from '../support/fake-upstreams.js';
import { startFakeLuma } from '../support/vendors/luma/luma.fake.js';
import { freePort } from '../support/free-port.js';
import { HostTable } from '../support/host-table.js';
import { sendBytes, startServer, type TestServer } from '../support/http-server.js';
import { png } from '../support/images.js';
import { wav } from '../support/media.js';
import { pollUntil } from '../support/poll.js';
import { api, startTestApp, type TestApp } from '../support/test-app.js';
import { startReceiver } from '../support/webhook-receiver.js';

const ADMIN = 'admin-secret-0123456789';
const EXPAND = '/video-a/v1/images/editing/expand';
const GEN = '/video-b/v1/generations';
const RATIOS = { up_expansion_ratio: 0.2, bottom_expansion_ratio: 0, left_expansion_ratio: 0, right_expansion_ratio: 0 };
const RULE = '(the gateway reaches only public addresses for a caller)';
const REFUSED_AT_FETCH = (host: string) => `the host ${host} resolves to a loopback address: only public addresses are fetched (private targets are refused)`;

/**
 * Outbound by purpose, as an operator with an in-cluster upstream deploys it: OUTBOUND_ALLOW_HOSTS=relay.internal,
 * a name the test's resolver maps to loopback (HostTable; /etc/hosts untouched), where a Luma channel answers. The
 * channel serves a generation end to end (its calls and the download of the result it names); a team's
 * callback_url, expand image, keyframe and audio URLs on that host are refused, and its callbacks never sent.
 * Expand and audio run on the sandbox (the gateway fetches their URLs itself); video is relayed (the upstream
 * would fetch a keyframe's URL). hooks.internal also resolves to loopback but is in no list: nothing in its URL
 * says so, so it is accepted and refused when fetched (or before it is handed to the upstream).
 */
describe('OUTBOUND_ALLOW_HOSTS is for upstreams only', () => {
  let t: TestApp;
  let key: string;
  let luma: FakeUpstream;
  /** The team's own file server and webhook receiver, on loopback: any request to them is a failure. */
  let files: TestServer;
  let receiver: Awaited<ReturnType<typeof startReceiver>>;
  let relay: string;
  let hooks: string;

  beforeAll(async () => {
    luma = await startFakeLuma('luma-key');
    const image = await png(400, 300);
    files = await startServer((req, res) => (req.url?.endsWith('.wav') ? sendBytes(res, 'audio/wav', wav(1)) : sendBytes(res, 'image/png', image)));
    receiver = await startReceiver();
    t = await startTestApp(
      { VIDEO_PROVIDER: 'relay', RELAY_VIDEO_URL: `http://relay.internal:${luma.server.port}`, RELAY_API_KEY: 'luma-key', OUTBOUND_ALLOW_HOSTS: 'relay.internal', RELAY_POLL_MS: '50', ADMIN_API_KEY: ADMIN, CALLBACK_RETRY_SCHEDULE_S: '0.2' },
      { hostResolver: new HostTable({ 'relay.internal': '127.0.0.1', 'hooks.internal': '127.0.0.1', 'files.internal': '127.0.0.1' }) },
    );
    key = await t.createKey('team-outbound');
    relay = `http://relay.internal:${files.port}`;
    hooks = `http://hooks.internal:${files.port}`;
  });
  afterAll(async () => {
    await t.close();
    await Promise.all([luma.close(), files.close(), receiver.close()]);
  });
  afterEach(() => {
    expect(files.requests).toEqual([]);
    expect(receiver.received).toEqual([]);
  });

  const generation = async (id: string) =>
    (await pollUntil(() => api(t.url, 'GET', `${GEN}/${id}`, { key }), (r) => ['completed', 'failed'].includes(r.body.state), { what: `generation ${id}` })).body;
  const attempts = async (id: string) => (await api(t.url, 'GET', `/admin/tasks/${id}/attempts`, { key: ADMIN })).body as { outcome: string; channel: string | null; message: string | null }[];

  it('a channel on relay.internal serves a generation end to end: its calls and the download of its result', async () => {
    const created = await api(t.url, 'POST', GEN, { key, body: { prompt: 'a lighthouse', aspect_ratio: '16:9' } });
    expect(created.status).toBe(201);
    const done = await generation(created.body.id);
    expect(done.state).toBe('completed');
    const video = await fetch(done.assets.video);
    expect([video.status, (await video.arrayBuffer()).byteLength > 0]).toEqual([200, true]);
    expect(luma.created.size).toBe(1);
    expect(luma.server.requests.every((r) => r.headers.host === `relay.internal:${luma.server.port}`)).toBe(true);
    expect((await attempts(done.id)).map((a) => a.outcome)).toEqual(['accepted']);
  });

  it("refuses a team's callback_url, image, keyframe and audio URLs on relay.internal at submission, naming the field", async () => {
    const refused = (field: string) => [400, `${field} must be a public http(s) URL: the host relay.internal is not public ${RULE}`];
    const expand = await api(t.url, 'POST', EXPAND, { key, body: { image: `${relay}/photo.png`, ...RATIOS } });
    expect([expand.status, expand.body.message]).toEqual(refused('image'));
    const expandHook = await api(t.url, 'POST', EXPAND, { key, body: { image: (await png(300, 300)).toString('base64'), ...RATIOS, callback_url: `${relay}/hook` } });
    expect([expandHook.status, expandHook.body.message]).toEqual(refused('callback_url'));
    const keyframe = await api(t.url, 'POST', GEN, { key, body: { prompt: 'x', keyframes: { frame0: { type: 'image', url: `${relay}/first.png` } } } });
    expect([keyframe.status, keyframe.body.message]).toEqual(refused('keyframes.frame0.url'));
    const videoHook = await api(t.url, 'POST', GEN, { key, body: { prompt: 'x', callback_url: `${relay}/hook` } });
    expect([videoHook.status, videoHook.body.message]).toEqual(refused('callback_url'));
    const kling = await api(t.url, 'POST', '/video-a/v1/videos/image2video', { key, body: { image: `${relay}/first.png` } });
    expect([kling.status, kling.body.message]).toEqual(refused('image'));
    const openai = await api(t.url, 'POST', '/openai/v1/videos', { key, body: { prompt: 'x', input_reference: { image_url: `${relay}/first.png` } } });
    expect([openai.status, openai.body.error.message, openai.body.error.param]).toEqual([...refused('input_reference.image_url'), 'input_reference.image_url']);
    const audio = await api(t.url, 'POST', '/music-a/uploads/audio-url', { key, body: { url: `${relay}/clip.wav` } });
    expect([audio.status, audio.body.message]).toEqual(refused('url'));
    const music = await api(t.url, 'POST', '/music-a/submit/music', { key, body: { prompt: 'x', notify_hook: `${relay}/hook` } });
    expect([music.status, music.body.message]).toEqual(refused('notify_hook'));
    // the same host written otherwise, and loopback written as IPv4-compatible IPv6
    const dotted = await api(t.url, 'POST', GEN, { key, body: { prompt: 'x', callback_url: `http://RELAY.INTERNAL.:${files.port}/hook` } });
    expect([dotted.status, dotted.body.message]).toEqual(refused('callback_url'));
    const compatible = await api(t.url, 'POST', GEN, { key, body: { prompt: 'x', callback_url: `http://[::127.0.0.1]:${receiver.server.port}/hook` } });
    expect([compatible.status, compatible.body.message]).toEqual([400, `callback_url must be a public http(s) URL: ::7f00:1 is an IPv4-compatible IPv6 address ${RULE}`]);
    expect(luma.created.size).toBe(1); // nothing new upstream
  });

  it('refuses a URL whose host resolves to loopback when it is fetched: the task fails saying what was wrong with the URL', async () => {
    const expand = await api(t.url, 'POST', EXPAND, { key, body: { image: `${hooks}/photo.png`, ...RATIOS } });
    expect(expand.status).toBe(200);
    const failed = await pollUntil(() => api(t.url, 'GET', `${EXPAND}/${expand.body.data.task_id}`, { key }), (r) => ['succeed', 'failed'].includes(r.body.data.task_status), { what: 'the expand task' });
    expect([failed.body.data.task_status, failed.body.data.task_status_msg]).toEqual(['failed', `could not fetch the image URL: ${REFUSED_AT_FETCH('hooks.internal')}`]);

    const audio = await api(t.url, 'POST', '/music-a/uploads/audio-url', { key, body: { url: `${hooks}/clip.wav` } });
    const upload = await pollUntil(() => api(t.url, 'GET', `/music-a/uploads/${audio.body.data}`, { key }), (r) => r.body.data.status !== 'pending', { what: 'the upload' });
    expect([upload.body.data.status, upload.body.data.error]).toEqual(['failed', `could not fetch url: ${REFUSED_AT_FETCH('hooks.internal')}`]);

    // relayed: the upstream would fetch the keyframe from its network (the gateway's), so it is never handed on
    const created = await api(t.url, 'POST', GEN, { key, body: { prompt: 'x', keyframes: { frame0: { type: 'image', url: `${hooks}/first.png` } } } });
    expect(created.status).toBe(201);
    const done = await generation(created.body.id);
    expect([done.state, done.failure_reason]).toEqual(['failed', `keyframes.frame0.url must be a public http(s) URL: the host hooks.internal resolves to a loopback address ${RULE}`]);
    expect(luma.created.size).toBe(1);
  });

  it("never delivers a callback to a name that resolves to loopback; the delivery log says why, the same whether a port listens or not", async () => {
    const closed = await freePort();
    const ids: string[] = [];
    for (const port of [receiver.server.port, closed]) {
      const created = await api(t.url, 'POST', GEN, { key, body: { prompt: 'hooked', callback_url: `http://hooks.internal:${port}/hook` } });
      expect(created.status).toBe(201);
      expect((await generation(created.body.id)).state).toBe('completed');
      ids.push(created.body.id);
    }
    const logs = await Promise.all(
      ids.map((id) =>
        pollUntil(() => api(t.url, 'GET', `/tasks/${id}/callbacks`, { key }), (r) => r.body.deliveries.length >= 2 && r.body.deliveries.every((d: any) => d.state !== 'pending'), { what: 'the deliveries to settle' }),
      ),
    );
    for (const log of logs) {
      expect(log.body.deliveries.map((d: any) => [d.state, d.attempts, d.last_error, d.attempt_log[0].status_code])).toEqual(
        log.body.deliveries.map(() => ['failed', 1, REFUSED_AT_FETCH('hooks.internal'), null]),
      );
    }
  });
});

/**
 * Failure reasons: what the vendor said about the caller's request stays theirs to read; the gateway's own
 * routing and network failures read as one generic reason, whose detail (channel, host, rule) admins read in the
 * task's attempts.
 */
describe('failure reasons, as the team and as admins see them', () => {
  let t: TestApp;
  let key: string;
  let luma: FakeUpstream;

  beforeAll(async () => {
    luma = await startFakeLuma('luma-key');
    t = await startTestApp(
      { VIDEO_PROVIDER: 'relay', RELAY_VIDEO_URL: `http://relay.internal:${luma.server.port}`, RELAY_API_KEY: 'luma-key', OUTBOUND_ALLOW_HOSTS: 'relay.internal', RELAY_POLL_MS: '50', ADMIN_API_KEY: ADMIN, CHANNEL_SECRET_KEY: 'c'.repeat(64) },
      { hostResolver: new HostTable({ 'relay.internal': '127.0.0.1', 'files.internal': '127.0.0.1', 'blocked.internal': '127.0.0.1' }) },
    );
    key = await t.createKey('team-reasons');
  });
  afterAll(async () => {
    await t.close();
    await luma.close();
  });
  beforeEach(() => Object.assign(luma.knobs, { failWith: undefined, resultBase: undefined }));

  const run = async (body: Record<string, unknown>) => {
    const created = await api(t.url, 'POST', GEN, { key, body });
    return (await pollUntil(() => api(t.url, 'GET', `${GEN}/${created.body.id}`, { key }), (r) => ['completed', 'failed'].includes(r.body.state), { what: 'the generation' })).body;
  };
  const attempts = async (id: string) => (await api(t.url, 'GET', `/admin/tasks/${id}/attempts`, { key: ADMIN })).body as { outcome: string; channel: string | null; message: string | null }[];

  it("a result the gateway may not download (its host is internal and not allowed): the team reads a generic reason, admins the host and the rule", async () => {
    luma.knobs.resultBase = `http://files.internal:${luma.server.port}`;
    const done = await run({ prompt: 'a result on an internal host' });
    expect([done.state, done.failure_reason]).toEqual(['failed', GATEWAY_FAILURE]);
    const view = await api(t.url, 'GET', `/tasks/${done.id}`, { key });
    expect(view.body.message).toBe(GATEWAY_FAILURE);
    expect(JSON.stringify(view.body)).not.toMatch(/files\.internal|relay\.internal|127\.0\.0\.1|RELAY_VIDEO_URL/);
    const log = await attempts(done.id);
    expect(log.map((a) => a.outcome)).toEqual(['accepted', 'gateway_error']);
    expect(log[1].message).toBe(
      "the upstream refused the generation: could not download the upstream's result: the host files.internal resolves to a loopback address: only public addresses are fetched (private targets are refused); an upstream's host may be named in OUTBOUND_ALLOW_HOSTS",
    );
  });

  it("the vendor's own words about the request stay visible, and are no gateway error", async () => {
    luma.knobs.failWith = 'The prompt was flagged by moderation';
    const done = await run({ prompt: 'flagged' });
    expect([done.state, done.failure_reason]).toEqual(['failed', 'the upstream failed the generation: The prompt was flagged by moderation']);
    expect((await attempts(done.id)).map((a) => a.outcome)).toEqual(['accepted']);
  });

  it("an upstream's refusal of the request (a 4xx with its words) stays visible too", async () => {
    luma.knobs.createRefusal = { status: 400, body: { detail: 'prompt is too long for this model' } };
    try {
      const refused = await run({ prompt: 'too long' });
      expect([refused.state, refused.failure_reason]).toEqual(['failed', 'the upstream refused the generation: prompt is too long for this model']);
      expect((await attempts(refused.id)).map((a) => a.outcome)).toEqual(['failed']);
    } finally {
      luma.knobs.createRefusal = undefined;
    }
  });

  it('a channel whose host the rules refuse (not in OUTBOUND_ALLOW_HOSTS): the team reads the generic reason, admins the channel and the rule', async () => {
    const added = await api(t.url, 'POST', '/admin/channels', {
      key: ADMIN,
      body: { name: 'luma-blocked', operations: ['video'], protocol: 'luma', base_url: `http://blocked.internal:${luma.server.port}`, credentials: { api_key: 'luma-key' }, priority: 10 },
    });
    expect(added.status).toBe(201);
    try {
      const done = await run({ prompt: 'to a refused host' });
      expect([done.state, done.failure_reason]).toEqual(['failed', GATEWAY_FAILURE]);
      const log = await attempts(done.id);
      // no request went out: one gateway error on that channel, not a failed request of it
      expect(log.map((a) => [a.channel, a.outcome])).toEqual([['luma-blocked', 'gateway_error']]);
      const rule = "the upstream URL is refused: the host blocked.internal resolves to a loopback address: only public addresses are fetched (private targets are refused); an upstream's host may be named in OUTBOUND_ALLOW_HOSTS";
      expect(log[0].message).toBe(rule);
    } finally {
      expect((await api(t.url, 'DELETE', `/admin/channels/${added.body.id}`, { key: ADMIN })).status).toBe(200);
    }
  });
});

describe('ALLOW_PRIVATE_URLS', () => {
  it('is a development switch: the service warns at start when it is on, and only then', async () => {
    const on = await startTestApp({ ALLOW_PRIVATE_URLS: 'true' });
    const off = await startTestApp();
    try {
      const warned = (app: TestApp) => app.logs.lines.some((l) => l.level === 'warn' && /^ALLOW_PRIVATE_URLS=true: callers' URLs and callbacks may reach loopback, private and link-local addresses/.test(String(l.msg)));
      expect([warned(on), warned(off)]).toEqual([true, false]);
    } finally {
      await on.close();
      await off.close();
    }
  });
});
