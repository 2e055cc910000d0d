import type { FakeUpstream } from '../support/fake-upstreams.js';
import { startFakeLuma } from '../support/vendors/luma/luma.fake.js';
import type { FakeVideoVendor } from '../support/vendors/video-fake.js';
import { startFakeKlingVideo } from '../support/vendors/kling/kling.fake.js';
import { startFakeRunway } from '../support/vendors/runway/runway.fake.js';
import { sendBytes, startServer, type TestServer } from '../support/http-server.js';
import { png } from '../support/images.js';
import { probeVideo } from '../support/media.js';
import { pollUntil } from '../support/poll.js';
import { api, startTestApp, type TestApp } from '../support/test-app.js';
import { deadEndWords } from '../../src/modules/channels/channel-routing.js';

const GEN = '/video-b/v1/generations';
const ADMIN = 'admin-secret-0123456789';
const KLING: [string, string] = ['ak-video-0000001', 'sk-video-secret-0001'];
const LUMA_KEY = 'luma-key-0123456789';
const RUNWAY_KEY = `key_${'ab'.repeat(64)}`;

describe('video served by any vendor behind the Luma door, chosen by what each model can make', () => {
  let t: TestApp;
  let key: string;
  let luma: FakeUpstream;
  let kling: FakeVideoVendor;
  let runway: FakeVideoVendor;
  let images: TestServer;
  const channels: Record<string, string> = {};

  beforeAll(async () => {
    luma = await startFakeLuma(LUMA_KEY);
    luma.knobs.render = true;
    luma.knobs.pollsUntilDone = 1;
    kling = await startFakeKlingVideo(...KLING);
    runway = await startFakeRunway(RUNWAY_KEY);
    runway.knobs.pollsUntilDone = 1; // Runway asks for 5 s between polls: one poll to the end keeps the suite short
    const frame = await png(640, 360);
    images = await startServer((_req, res) => sendBytes(res, 'image/png', frame));
    t = await startTestApp({ VIDEO_PROVIDER: 'relay', ADMIN_API_KEY: ADMIN, CHANNEL_SECRET_KEY: 'c'.repeat(64), OUTBOUND_ALLOW_HOSTS: '127.0.0.1', ALLOW_PRIVATE_URLS: 'true', RELAY_POLL_MS: '100' }); // the keyframes' server is on loopback too
    key = await t.createKey('team-vendors');
    const add = async (name: string, body: Record<string, unknown>) => {
      const res = await api(t.url, 'POST', '/admin/channels', { key: ADMIN, body: { name, operations: ['video'], ...body } });
      expect(res.status).toBe(201);
      channels[name] = res.body.id as string;
    };
    await add('luma', { protocol: 'luma', base_url: luma.url, credentials: { api_key: LUMA_KEY } });
    await add('kling', { protocol: 'kling', base_url: kling.url, credentials: { access_key: KLING[0], secret_key: KLING[1] } });
    await add('runway', { protocol: 'runway', base_url: runway.url, credentials: { api_key: RUNWAY_KEY } });
  }, 60_000);
  afterAll(async () => {
    await t.close();
    await Promise.all([luma.close(), kling.close(), runway.close(), images.close()]);
  });

  /** Only these channels enabled. */
  const only = async (...names: string[]) => {
    for (const [name, id] of Object.entries(channels)) expect((await api(t.url, 'POST', `/admin/channels/${id}/${names.includes(name) ? 'enable' : 'disable'}`, { key: ADMIN })).status).toBe(200);
  };
  const finished = async (id: string) =>
    (await pollUntil(() => api(t.url, 'GET', `${GEN}/${id}`, { key }), (r) => r.body.state === 'completed' || r.body.state === 'failed', { timeoutMs: 60_000, what: `generation ${id} to finish` })).body;
  const storedVideo = async (url: string) => probeVideo(Buffer.from(await (await fetch(url)).arrayBuffer()));

  it('one request (a prompt, a first frame, 720p, 5 s) is served by Luma, Kling and Runway in turn, each asked in its own vocabulary', async () => {
    const frameUrl = `${images.url}/first.png`;
    const body = { prompt: 'A paper boat on a rainy street', resolution: '720p', duration: '5s', keyframes: { frame0: { type: 'image', url: frameUrl } } };
    const served: Record<string, unknown> = {};
    for (const vendor of ['luma', 'kling', 'runway']) {
      await only(vendor);
      const created = await api(t.url, 'POST', GEN, { key, body });
      expect(created.status).toBe(201);
      const done = await finished(created.body.id);
      expect([vendor, done.state]).toEqual([vendor, 'completed']);
      // the same record whoever made it: Luma's, with the request as asked
      expect(done.request).toEqual(expect.objectContaining({ prompt: body.prompt, resolution: '720p', duration: '5s', request_type: 'image_to_video' }));
      const video = await storedVideo(done.assets.video);
      expect([vendor, video.width, video.height]).toEqual([vendor, 1280, 720]);
      expect(Math.abs(video.durationS - 5)).toBeLessThan(0.5);
      served[vendor] = done.id;
    }
    // each vendor got every field, in its own words
    expect([...luma.created.values()].at(-1)!.body).toEqual(
      expect.objectContaining({ prompt: body.prompt, model: 'ray-2', resolution: '720p', duration: '5s', keyframes: { frame0: { type: 'image', url: frameUrl } } }),
    );
    const k = [...kling.created.values()].at(-1)!;
    expect(k.path).toBe('image2video');
    expect(k.body).toEqual(expect.objectContaining({ model_name: 'kling-v1', prompt: body.prompt, mode: 'std', duration: '5', image: frameUrl, external_task_id: served.kling }));
    expect(k.body).not.toHaveProperty('aspect_ratio');
    const r = [...runway.created.values()].at(-1)!;
    expect(r.path).toBe('image_to_video');
    // Runway fetches only HTTPS or data: URIs: the loopback image went inline
    expect(r.body).toEqual(expect.objectContaining({ model: 'gen4.5', promptText: body.prompt, ratio: '1280:720', duration: 5 }));
    expect(String(r.body.promptImage)).toMatch(/^data:image\/png;base64,/);
  }, 240_000);

  it('an end frame and 10 s go only to a model that makes them (Kling in pro mode); with none configured, 400 names the fields and the models that could', async () => {
    await only('luma', 'kling', 'runway');
    const body = { prompt: 'A door opening', resolution: '1080p', duration: '10s', keyframes: { frame0: { type: 'image', url: `${images.url}/a.png` }, frame1: { type: 'image', url: `${images.url}/b.png` } } };
    const before = { luma: luma.created.size, runway: runway.created.size };
    const created = await api(t.url, 'POST', GEN, { key, body });
    expect(created.status).toBe(201);
    const done = await finished(created.body.id);
    expect(done.state).toBe('completed');
    expect({ luma: luma.created.size, runway: runway.created.size }).toEqual(before);
    const k = [...kling.created.values()].at(-1)!;
    expect(k.body).toEqual(expect.objectContaining({ mode: 'pro', duration: '10', image_tail: `${images.url}/b.png` }));
    const video = await storedVideo(done.assets.video);
    expect([video.width, video.height, Math.round(video.durationS)]).toEqual([1920, 1080, 10]);
    // without Kling's channel, no configured model makes it: refused at once, naming the field and who could
    expect((await api(t.url, 'DELETE', `/admin/channels/${channels.kling}`, { key: ADMIN })).status).toBe(200);
    delete channels.kling;
    await pollUntil(() => api(t.url, 'POST', GEN, { key, body }), (r) => r.status === 400, { timeoutMs: 10_000, what: 'the request to be refused once the models are read again' }).then((refused) => {
      expect(refused.body.code).toBe(1201);
      expect(refused.body.message).toMatch(/duration/);
      expect(refused.body.message).toMatch(/keyframes\.frame1/);
      expect(refused.body.message).toMatch(/ray-2 \(luma\)/);
    });
    // a model named that cannot make it: the same, naming it
    const named = await api(t.url, 'POST', GEN, { key, body: { prompt: 'x', model: 'gen4_turbo' } });
    expect([named.status, named.body.message]).toEqual([400, expect.stringMatching(/^keyframes\.frame0: model gen4_turbo does not make this video from a prompt alone; models that could make it: ray-2 \(luma\)/)]);
  }, 120_000);

  it('GET /models lists what the channels serve, with what each makes and its price; a channel lists models under names of its own', async () => {
    const list = await api(t.url, 'GET', '/models', { key });
    expect(list.status).toBe(200);
    const byName = new Map((list.body.models as { name: string; vendor: string }[]).map((m) => [`${m.name}/${m.vendor}`, m]));
    expect(byName.get('ray-2/luma')).toEqual(expect.objectContaining({ durations_s: [5, 9], default_duration_s: 5, default_resolution: '540p', last_frame: true, credits_per_second: expect.any(Number) }));
    expect(byName.get('veo3.1/runway')).toEqual(expect.objectContaining({ durations_s: [4, 6, 8], default_duration_s: 4, audio: true, sizes: expect.arrayContaining(['16:9@1080p']) }));
    // what a request naming neither is made at (and priced at): gen4.5's 5 s, not the first it lists
    expect(byName.get('gen4.5/runway')).toEqual(expect.objectContaining({ durations_s: [2, 3, 4, 5, 6, 7, 8, 9, 10], default_duration_s: 5 }));
    expect(byName.has('kling-v2-1/kling')).toBe(false);
    // a Runway channel that serves Veo alone, as "veo"
    const res = await api(t.url, 'PATCH', `/admin/channels/${channels.runway}`, { key: ADMIN, body: { models: [{ name: 'veo', vendor_model: 'veo3.1', price: { per_second: { '720p': 0.2 } } }] } });
    expect([res.status, res.body.models]).toEqual([200, [{ name: 'veo', vendor_model: 'veo3.1', price: { per_second: { '720p': 0.2 } } }]]);
    const bad = await api(t.url, 'PATCH', `/admin/channels/${channels.runway}`, { key: ADMIN, body: { models: [{ name: 'x', vendor_model: 'ray-2' }] } });
    expect([bad.status, bad.body.message]).toEqual([400, expect.stringMatching(/^models\[0\]\.vendor_model must be one of the runway models: gen4\.5, gen4_turbo, veo3\.1/)]);
    await only('runway');
    await pollUntil(() => api(t.url, 'GET', '/models', { key }), (r) => r.body.models.some((m: { name: string }) => m.name === 'veo'), { timeoutMs: 10_000, what: 'the channel list to be read again' });
    const created = await api(t.url, 'POST', GEN, { key, body: { prompt: 'Rain on a window', model: 'veo', duration: '8s', aspect_ratio: '9:16', resolution: '1080p' } });
    expect(created.status).toBe(201);
    const done = await finished(created.body.id);
    expect(done.state).toBe('completed');
    expect([...runway.created.values()].at(-1)!.body).toEqual(expect.objectContaining({ model: 'veo3.1', ratio: '1080:1920', duration: 8 }));
    const video = await storedVideo(done.assets.video);
    expect([video.width, video.height, Math.round(video.durationS)]).toEqual([1080, 1920, 8]);
  }, 120_000);

  it("a Kling-door request with Kling's own fields (negative_prompt, cfg_scale, camera_control) goes only to a Kling model that takes them, each field in Kling's words", async () => {
    await only('luma', 'runway');
    const body = { model_name: 'kling-v1', prompt: 'A lighthouse at dusk', negative_prompt: 'text', cfg_scale: 0.4, camera_control: { type: 'simple', config: { zoom: 5 } }, duration: '5', mode: 'std', aspect_ratio: '16:9' };
    // with no Kling channel, no configured model takes cfg_scale: refused at once, naming it
    const refused = await api(t.url, 'POST', '/video-a/v1/videos/text2video', { key, body: { prompt: 'x', cfg_scale: 0.4 } });
    expect([refused.status, refused.body.message]).toEqual([400, expect.stringMatching(/^cfg_scale: /)]);
    const k = await api(t.url, 'POST', '/admin/channels', { key: ADMIN, body: { name: 'kling-2', operations: ['video'], protocol: 'kling', base_url: kling.url, credentials: { access_key: KLING[0], secret_key: KLING[1] } } });
    expect(k.status).toBe(201);
    channels['kling-2'] = k.body.id;
    const created = await pollUntil(() => api(t.url, 'POST', '/video-a/v1/videos/text2video', { key, body }), (r) => r.status === 200, { timeoutMs: 10_000, what: 'the models to be read again' });
    const done = await pollUntil(() => api(t.url, 'GET', `/video-a/v1/videos/text2video/${created.body.data.task_id}`, { key }), (r) => ['succeed', 'failed'].includes(r.body.data.task_status), { timeoutMs: 60_000, what: 'the task' });
    expect(done.body.data.task_status).toBe('succeed');
    const sent = [...kling.created.values()].at(-1)!;
    expect([sent.path, sent.body]).toEqual(['text2video', expect.objectContaining({ model_name: 'kling-v1', negative_prompt: 'text', cfg_scale: 0.4, camera_control: { type: 'simple', config: { zoom: 5 } }, duration: '5', mode: 'std', aspect_ratio: '16:9' })]);
  }, 120_000);

  it('Kling busy inside an HTTP 200 envelope (1303): the generation waits and is made once; a create whose answer is lost (the connection reset after Kling made it) is found by its external_task_id and made once', async () => {
    await only('kling-2'); // the Kling channel added by the test before (an earlier one deleted the first)
    const madeFor = (id: string) => [...kling.created.values()].filter((c) => c.body.external_task_id === id).length;
    const body = { prompt: 'A kite over a beach', resolution: '720p', duration: '5s', aspect_ratio: '16:9' };
    // Before: the video adapter read no envelope code, and the task failed ("without a task_id")
    kling.knobs.createBusy = 2;
    const before = kling.createRequests ?? 0;
    const busy = await api(t.url, 'POST', GEN, { key, body });
    expect(busy.status).toBe(201);
    expect((await finished(busy.body.id)).state).toBe('completed');
    expect([madeFor(busy.body.id), (kling.createRequests ?? 0) - before]).toEqual([1, 3]);
    // Before: the next step failed the generation ("the upstream never answered the create request"), though Kling had made it
    kling.knobs.resetAfterCreate = 1;
    const lost = await api(t.url, 'POST', GEN, { key, body });
    expect(lost.status).toBe(201);
    const done = await finished(lost.body.id);
    expect([done.state, madeFor(lost.body.id)]).toEqual(['completed', 1]);
    const attempts = (await api(t.url, 'GET', `/admin/tasks/${lost.body.id}/attempts`, { key: ADMIN })).body;
    expect((attempts as { outcome: string }[]).map((a) => a.outcome)).toEqual(['ambiguous', 'accepted']);
  }, 120_000);

  it("Kling out of credit (1102 under HTTP 429) on a video create: the channel is auto-disabled, not retried as busy; with no other channel the generation fails at once saying so, and the next is made once it is enabled again", async () => {
    await only('kling-2');
    kling.knobs.createInArrears = true;
    const before = kling.createRequests ?? 0;
    const body = { prompt: 'A lighthouse at dusk', resolution: '720p', duration: '5s', aspect_ratio: '16:9' };
    const generation = await api(t.url, 'POST', GEN, { key, body });
    expect(generation.status).toBe(201);
    const failed = await finished(generation.body.id);
    expect([failed.state, failed.failure_reason]).toEqual(['failed', deadEndWords('video', 'generation', 'account')]);
    // the channel was auto-disabled (read from its log line and the task's attempts: its periodic test may have
    // brought it back already, since Kling's probe does not see the resource pack)
    expect(t.logs.lines.filter((l) => l.msg === 'channel auto-disabled' && l.channel_id === channels['kling-2'] && l.task_id === generation.body.id)).toEqual([
      expect.objectContaining({ reason: "the upstream refused the account's credit: Account exception: resource pack exhausted" }),
    ]);
    const attempts = (await api(t.url, 'GET', `/admin/tasks/${generation.body.id}/attempts`, { key: ADMIN })).body as { channel_id: string; outcome: string }[];
    expect(attempts.map((a) => [a.channel_id, a.outcome])).toEqual([
      [channels['kling-2'], 'refused_account'],
      [channels['kling-2'], 'gateway_error'],
    ]);
    // one create: a refusal of the account is not waited out as a busy answer would be
    expect((kling.createRequests ?? 0) - before).toBe(1);
    kling.knobs.createInArrears = false;
    expect((await api(t.url, 'POST', `/admin/channels/${channels['kling-2']}/enable`, { key: ADMIN })).body.status).toBe('enabled');
    const next = await api(t.url, 'POST', GEN, { key, body });
    const done = await finished(next.body.id);
    expect(done.state).toBe('completed');
    expect([...kling.created.values()].filter((c) => c.body.external_task_id === next.body.id)).toHaveLength(1);
  }, 120_000);
});
