import { type FakeSeedance, startFakeSeedance } from '../support/vendors/seedance/seedance.fake.js';
import type { FakeVideoVendor } from '../support/vendors/video-fake.js';
import { startFakeKlingVideo } from '../support/vendors/kling/kling.fake.js';
import { png } from '../support/images.js';
import { probeVideo } from '../support/media.js';
import { pollUntil } from '../support/poll.js';
import { api, startTestApp, type TestApp } from '../support/test-app.js';

const GEN = '/video-b/v1/generations';
const OPENAI = '/openai/v1/videos';
const KLING_DOOR = '/video-a/v1/videos/image2video';
const ADMIN = 'admin-secret-0123456789';
const ARK_KEY = 'ark-seedance-test-key-0123456789';
const KLING: [string, string] = ['ak-seedance-000001', 'sk-seedance-secret-01'];

/**
 * ByteDance's Seedance on BytePlus ModelArk as a channel (a fake from its documented shapes): served behind
 * the Luma, OpenAI and Kling doors in its own vocabulary (`content` items with roles, `ratio`, an integer
 * duration), refused for what its models cannot make, failed over from, waited out when busy, and tested
 * by its cheap call.
 */
describe('Seedance video behind the doors', () => {
  let t: TestApp;
  let key: string;
  let ark: FakeSeedance;
  let kling: FakeVideoVendor;
  const channels: Record<string, string> = {};

  beforeAll(async () => {
    ark = await startFakeSeedance(ARK_KEY);
    kling = await startFakeKlingVideo(...KLING);
    kling.knobs.pollsUntilDone = 1;
    t = await startTestApp({ VIDEO_PROVIDER: 'relay', ADMIN_API_KEY: ADMIN, CHANNEL_SECRET_KEY: 'c'.repeat(64), OUTBOUND_ALLOW_HOSTS: '127.0.0.1', RELAY_POLL_MS: '100' });
    key = await t.createKey('team-seedance');
    const add = async (name: string, body: Record<string, unknown>) => {
      const res = await api(t.url, 'POST', '/admin/channels', { key: ADMIN, body: { name, operations: ['video'], ...body } });
      expect([name, res.status]).toEqual([name, 201]);
      channels[name] = res.body.id as string;
    };
    await add('seedance', { protocol: 'seedance', base_url: ark.url, credentials: { api_key: ARK_KEY }, priority: 5 });
    await add('kling', { protocol: 'kling', base_url: kling.url, credentials: { access_key: KLING[0], secret_key: KLING[1] }, priority: 0 });
  }, 60_000);
  afterAll(async () => {
    await t.close();
    await Promise.all([ark.close(), kling.close()]);
  });

  const admin = (method: string, path: string, body?: unknown) => api(t.url, method, path, { key: ADMIN, body });
  const finished = async (id: string) =>
    (await pollUntil(() => api(t.url, 'GET', `${GEN}/${id}`, { key }), (r) => r.body.state === 'completed' || r.body.state === 'failed', { timeoutMs: 60_000, what: `generation ${id} to finish` })).body;
  const stored = async (url: string) => probeVideo(Buffer.from(await (await fetch(url)).arrayBuffer()));
  const attempts = async (id: string) => ((await admin('GET', `/admin/tasks/${id}/attempts`)).body as { channel: string; outcome: string }[]).map((a) => [a.channel, a.outcome]);
  const lastSent = () => [...ark.created.values()].at(-1)!.body;

  it('serves a Luma-door request in its own words (a text item, ratio, an integer duration) and stores the 8 s 1080p video it names', async () => {
    const created = await api(t.url, 'POST', GEN, { key, body: { prompt: 'A paper lantern rising over a lake', model: 'seedance-1-0-pro-250528', aspect_ratio: '9:16', duration: '8s', resolution: '1080p' } });
    expect(created.status).toBe(201);
    const done = await finished(created.body.id);
    expect(done.state).toBe('completed');
    expect(lastSent()).toEqual({ model: 'seedance-1-0-pro-250528', content: [{ type: 'text', text: 'A paper lantern rising over a lake' }], ratio: '9:16', duration: 8, resolution: '1080p', watermark: false });
    const video = await stored(done.assets.video);
    expect([video.width, video.height, Math.round(video.durationS)]).toEqual([1080, 1920, 8]);
    expect(await attempts(created.body.id)).toEqual([['seedance', 'accepted']]);
  }, 90_000);

  it('serves an OpenAI-door request only Seedance can make (12 s) and refuses 16 s, which no model makes, naming seconds', async () => {
    const created = await api(t.url, 'POST', OPENAI, { key, body: { prompt: 'Tide pools at dawn', seconds: '12', size: '1280x720' } });
    expect(created.status).toBe(200);
    const done = await pollUntil(() => api(t.url, 'GET', `${OPENAI}/${created.body.id}`, { key }), (r) => ['completed', 'failed'].includes(r.body.status), { timeoutMs: 60_000, what: 'the OpenAI-door video' });
    expect([done.body.status, done.body.size, done.body.seconds]).toEqual(['completed', '1280x720', '12']);
    expect(lastSent()).toEqual(expect.objectContaining({ model: 'seedance-1-0-pro-250528', ratio: '16:9', duration: 12, resolution: '720p' }));
    const refused = await api(t.url, 'POST', OPENAI, { key, body: { prompt: 'Too long', seconds: '16' } });
    expect([refused.status, refused.body.error.param, refused.body.error.message]).toEqual([400, 'seconds', expect.stringMatching(/seconds/)]);
  }, 90_000);

  it("sends a Kling-door image as its first frame (role first_frame, ratio adaptive: the gateway's copy inline, a data: URI, as Ark takes it) when the request names a Seedance model", async () => {
    const image = (await png(640, 360)).toString('base64');
    const created = await api(t.url, 'POST', KLING_DOOR, { key, body: { model_name: 'seedance-1-5-pro-251215', image, prompt: 'The cat turns its head', duration: '5' } });
    expect([created.status, created.body.code]).toEqual([200, 0]);
    const done = await pollUntil(() => api(t.url, 'GET', `${KLING_DOOR}/${created.body.data.task_id}`, { key }), (r) => ['succeed', 'failed'].includes(r.body.data.task_status), { timeoutMs: 60_000, what: 'the Kling-door video' });
    expect([done.body.data.task_status, done.body.data.task_status_msg]).toEqual(['succeed', '']);
    expect(lastSent()).toEqual({
      model: 'seedance-1-5-pro-251215',
      content: [
        { type: 'text', text: 'The cat turns its head' },
        // the caller's own bytes, not a link to the gateway, which Ark outside the company's network may not reach
        { type: 'image_url', image_url: { url: `data:image/png;base64,${image}` }, role: 'first_frame' },
      ],
      ratio: 'adaptive',
      duration: 5,
      // what the task is priced at, sent whether or not asked (Kling's door without mode names none)
      resolution: '720p',
      generate_audio: false,
      watermark: false,
    });
  }, 90_000);

  it("sends a sample of the service's, named under the request's own address, inline as the gateway's own file (never refused as a loopback URL)", async () => {
    const port = new URL(t.url).port;
    const sample = `http://localhost:${port}/samples/keyframe.jpg`;
    const bytes = Buffer.from(await (await fetch(`${t.url}/samples/keyframe.jpg`)).arrayBuffer());
    const body = { prompt: 'The lantern drifts away', model: 'seedance-1-5-pro-251215', duration: '5s', keyframes: { frame0: { type: 'image', url: sample } } };
    // the request reaches the gateway as localhost: its base, which the sample is under (OUTBOUND_ALLOW_HOSTS names 127.0.0.1 only)
    const created = await api(`http://localhost:${port}`, 'POST', GEN, { key, body });
    expect([created.status, created.body.message]).toEqual([201, undefined]);
    const done = await finished(created.body.id);
    expect([done.state, done.failure_reason ?? null]).toEqual(['completed', null]);
    const items = lastSent().content as { type: string; role?: string; image_url?: { url: string } }[];
    expect(items[1]).toEqual({ type: 'image_url', image_url: { url: `data:image/jpeg;base64,${bytes.toString('base64')}` }, role: 'first_frame' });
  }, 90_000);

  it("waits out its rate limit (429) and makes the video once; fails over to Kling when its task fails for its own reason, not when its moderation refuses it", async () => {
    const sent = ark.created.size;
    ark.arkKnobs.busy = 2;
    const busy = await finished((await api(t.url, 'POST', GEN, { key, body: { prompt: 'Busy day', model: 'seedance-1-0-pro-250528', duration: '5s' } })).body.id);
    expect([busy.state, ark.created.size]).toEqual(['completed', sent + 1]);
    ark.knobs.failWith = 'Internal error, please retry';
    try {
      const moved = await api(t.url, 'POST', OPENAI, { key, body: { prompt: 'A heron lands', seconds: '10', size: '1280x720' } });
      const done = await pollUntil(() => api(t.url, 'GET', `${OPENAI}/${moved.body.id}`, { key }), (r) => ['completed', 'failed'].includes(r.body.status), { timeoutMs: 60_000, what: 'the failed-over video' });
      expect(done.body.status).toBe('completed');
      expect(await attempts(moved.body.id)).toEqual([
        ['seedance', 'accepted'],
        ['seedance', 'abandoned'],
        ['kling', 'accepted'],
      ]);
    } finally {
      ark.knobs.failWith = undefined;
    }
    ark.arkKnobs.sensitive = true;
    try {
      const refused = await finished((await api(t.url, 'POST', GEN, { key, body: { prompt: 'Something it will not make', model: 'seedance-1-0-pro-250528', duration: '5s' } })).body.id);
      expect([refused.state, refused.failure_reason]).toEqual(['failed', expect.stringMatching(/sensitive information/)]);
      expect((await attempts(refused.id)).map(([channel]) => channel)).toEqual(['seedance']);
    } finally {
      ark.arkKnobs.sensitive = false;
    }
  }, 120_000);

  it('tests a channel with its task list; a wrong key (401) auto-disables it', async () => {
    const ok = await admin('POST', `/admin/channels/${channels.seedance}/test`);
    expect([ok.status, ok.body.ok, ok.body.status_code]).toEqual([200, true, 200]);
    expect(ark.server.requests.at(-1)).toEqual(expect.objectContaining({ method: 'GET', url: '/api/v3/contents/generations/tasks?page_num=1&page_size=1' }));
    const wrong = await admin('POST', '/admin/channels', { name: 'seedance-wrong', operations: ['video'], protocol: 'seedance', base_url: ark.url, credentials: { api_key: 'ark-not-the-key-000000' } });
    expect(wrong.status).toBe(201);
    const refused = await admin('POST', `/admin/channels/${wrong.body.id}/test`);
    expect([refused.body.ok, refused.body.status_code, refused.body.channel.status]).toEqual([false, 401, 'auto_disabled']);
    expect(ark.authFailures).toEqual(['Bearer ark-not-the-key-000000']);
  });
});
