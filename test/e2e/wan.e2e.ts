import { type FakeWan, startFakeWan } from '../support/vendors/wan/wan.fake.js';
import { png } from '../support/images.js';
import { probeVideo } from '../support/media.js';
import { pollUntil } from '../support/poll.js';
import { api, startTestApp, type TestApp } from '../support/test-app.js';

const GEN = '/video-b/v1/generations';
const OPENAI = '/openai/v1/videos';
const KLING_DOOR = '/video-a/v1/videos/image2video';
const ADMIN = 'admin-secret-0123456789';
const DASHSCOPE_KEY = 'sk-wan-dashscope-test-0123456789';

/**
 * Alibaba's Wan on Model Studio's DashScope as a channel (a fake from its documented shapes): served behind
 * the Luma, OpenAI and Kling doors in its own vocabulary (`input` and `parameters`, a `W*H` size from its
 * table, `img_url` for a first frame, an asynchronous create), refused for what its models cannot make, its
 * moderation's failure ended with its words, and tested by its cheap call.
 */
describe('Wan video behind the doors', () => {
  let t: TestApp;
  let key: string;
  let wan: FakeWan;
  let channel: string;

  beforeAll(async () => {
    wan = await startFakeWan(DASHSCOPE_KEY);
    // upstream callbacks on, polls of called-back tasks 300 s apart: DashScope takes no callback URL, so its tasks are
    // polled on the usual schedule (they waited for the 300 s safety poll when every vendor was sent one)
    t = await startTestApp({ VIDEO_PROVIDER: 'relay', ADMIN_API_KEY: ADMIN, CHANNEL_SECRET_KEY: 'c'.repeat(64), OUTBOUND_ALLOW_HOSTS: '127.0.0.1', RELAY_POLL_MS: '100', UPSTREAM_CALLBACK_BASE_URL: 'https://gateway.example', UPSTREAM_CALLBACK_POLL_S: '300' });
    key = await t.createKey('team-wan');
    const res = await api(t.url, 'POST', '/admin/channels', { key: ADMIN, body: { name: 'wan', operations: ['video'], protocol: 'wan', base_url: wan.url, credentials: { api_key: DASHSCOPE_KEY } } });
    expect(res.status).toBe(201);
    channel = res.body.id as string;
  }, 60_000);
  afterAll(async () => {
    await t.close();
    await wan.close();
  });

  const admin = (method: string, path: string, body?: unknown) => api(t.url, method, path, { key: ADMIN, body });
  const finished = async (id: string) =>
    (await pollUntil(() => api(t.url, 'GET', `${GEN}/${id}`, { key }), (r) => r.body.state === 'completed' || r.body.state === 'failed', { timeoutMs: 60_000, what: `generation ${id} to finish` })).body;
  const stored = async (url: string) => probeVideo(Buffer.from(await (await fetch(url)).arrayBuffer()));
  const attempts = async (id: string) => ((await admin('GET', `/admin/tasks/${id}/attempts`)).body as { channel: string; outcome: string }[]).map((a) => [a.channel, a.outcome]);
  const lastSent = () => [...wan.created.values()].at(-1)!.body;

  it('serves a Luma-door request in its own words (input, parameters, a W*H size, asynchronously) and stores the 10 s 1080x1920 video it names', async () => {
    const created = await api(t.url, 'POST', GEN, { key, body: { prompt: 'A paper lantern rising over a lake', model: 'wan2.5-t2v-preview', aspect_ratio: '9:16', duration: '10s', resolution: '1080p' } });
    expect(created.status).toBe(201);
    const done = await finished(created.body.id);
    expect(done.state).toBe('completed');
    expect(lastSent()).toEqual({ model: 'wan2.5-t2v-preview', input: { prompt: 'A paper lantern rising over a lake' }, parameters: { size: '1080*1920', duration: 10, audio: false, watermark: false } });
    expect(wan.createHeaders.at(-1)).toEqual(expect.objectContaining({ 'x-dashscope-async': 'enable', authorization: `Bearer ${DASHSCOPE_KEY}` }));
    const video = await stored(done.assets.video);
    expect([video.width, video.height, Math.round(video.durationS)]).toEqual([1080, 1920, 10]);
    expect(await attempts(created.body.id)).toEqual([['wan', 'accepted']]);
  }, 90_000);

  it('serves an OpenAI-door request naming no model with the Wan model that makes it (12 s: wan2.6) and refuses what no Wan model makes, naming seconds', async () => {
    const created = await api(t.url, 'POST', OPENAI, { key, body: { prompt: 'Tide pools at dawn', seconds: '12', size: '1280x720' } });
    expect(created.status).toBe(200);
    const done = await pollUntil(() => api(t.url, 'GET', `${OPENAI}/${created.body.id}`, { key }), (r) => ['completed', 'failed'].includes(r.body.status), { timeoutMs: 60_000, what: 'the OpenAI-door video' });
    expect([done.body.status, done.body.size, done.body.seconds]).toEqual(['completed', '1280x720', '12']);
    expect(lastSent()).toEqual({ model: 'wan2.6-t2v', input: { prompt: 'Tide pools at dawn' }, parameters: { size: '1280*720', duration: 12, audio: false, watermark: false } });
    const content = await fetch(`${t.url}${OPENAI}/${created.body.id}/content`, { headers: { authorization: `Bearer ${key}` } });
    expect(content.status).toBe(200);
    const video = await probeVideo(Buffer.from(await content.arrayBuffer()));
    expect([video.width, video.height, Math.round(video.durationS)]).toEqual([1280, 720, 12]);

    const sent = wan.createRequests;
    const tooLong = await api(t.url, 'POST', OPENAI, { key, body: { prompt: 'Too long', seconds: '20' } });
    expect([tooLong.status, tooLong.body.error.param, tooLong.body.error.message]).toEqual([400, 'seconds', expect.stringMatching(/seconds/)]);
    const fixed = await api(t.url, 'POST', OPENAI, { key, body: { prompt: 'wan2.2 makes 5 s only', model: 'wan2.2-t2v-plus', seconds: '10', size: '1920x1080' } });
    expect([fixed.status, fixed.body.error.param, fixed.body.error.message]).toEqual([400, 'seconds', expect.stringMatching(/seconds/)]);
    expect(wan.createRequests).toBe(sent);
  }, 90_000);

  it("sends a Kling-door image as its first frame (img_url: a link to the gateway's copy) to an image-to-video model, with its tier and negative prompt", async () => {
    const image = (await png(640, 360)).toString('base64');
    const created = await api(t.url, 'POST', KLING_DOOR, { key, body: { model_name: 'wan2.5-i2v-preview', image, prompt: 'The cat turns its head', negative_prompt: 'blur', mode: 'std', duration: '5' } });
    expect([created.status, created.body.code]).toEqual([200, 0]);
    const done = await pollUntil(() => api(t.url, 'GET', `${KLING_DOOR}/${created.body.data.task_id}`, { key }), (r) => ['succeed', 'failed'].includes(r.body.data.task_status), { timeoutMs: 60_000, what: 'the Kling-door video' });
    expect([done.body.data.task_status, done.body.data.task_status_msg]).toEqual(['succeed', '']);
    expect(lastSent()).toEqual({
      model: 'wan2.5-i2v-preview',
      input: { prompt: 'The cat turns its head', negative_prompt: 'blur', img_url: expect.stringMatching(/^http:\/\/127\.0\.0\.1:\d+\//) },
      parameters: { resolution: '720P', duration: 5, audio: false, watermark: false },
    });
    const video = await stored(done.body.data.task_result.videos[0].url);
    expect([video.width, video.height, Math.round(video.durationS)]).toEqual([1280, 720, 5]);
  }, 90_000);

  it("ends a task its moderation fails (DataInspectionFailed) with its words, on its one channel", async () => {
    wan.wanKnobs.inspection = true;
    try {
      const refused = await finished((await api(t.url, 'POST', GEN, { key, body: { prompt: 'Something it will not make', model: 'wan2.6-t2v', duration: '5s' } })).body.id);
      expect([refused.state, refused.failure_reason]).toEqual(['failed', expect.stringMatching(/inappropriate content/)]);
      expect((await attempts(refused.id)).map(([name]) => name)).toEqual(['wan']);
    } finally {
      wan.wanKnobs.inspection = false;
    }
  }, 90_000);

  it('tests a channel with its task list; a wrong key (401) auto-disables it', async () => {
    const ok = await admin('POST', `/admin/channels/${channel}/test`);
    expect([ok.status, ok.body.ok, ok.body.status_code]).toEqual([200, true, 200]);
    expect(wan.server.requests.at(-1)).toEqual(expect.objectContaining({ method: 'GET', url: '/api/v1/tasks?page_no=1&page_size=1' }));
    const wrong = await admin('POST', '/admin/channels', { name: 'wan-wrong', operations: ['video'], protocol: 'wan', base_url: wan.url, credentials: { api_key: 'sk-not-the-key-000000' } });
    expect(wrong.status).toBe(201);
    const refused = await admin('POST', `/admin/channels/${wrong.body.id}/test`);
    expect([refused.body.ok, refused.body.status_code, refused.body.channel.status]).toEqual([false, 401, 'auto_disabled']);
    expect(wan.authFailures).toEqual(['Bearer sk-not-the-key-000000']);
  });
});
