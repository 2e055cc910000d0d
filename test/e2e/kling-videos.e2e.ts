import { deflateSync, gzipSync } from 'node:zlib';
import sharp from 'sharp';
import { png } from '../support/images.js';
import { probeVideo } from '../support/media.js';
import { pollUntil } from '../support/poll.js';
import { api, startTestApp, type TestApp } from '../support/test-app.js';
import { startReceiver } from '../support/webhook-receiver.js';

const T2V = '/video-a/v1/videos/text2video';
const I2V = '/video-a/v1/videos/image2video';
const MULTI = '/video-a/v1/videos/multi-image2video';

/** A client written for Kling's video API (no official Node SDK: its documented bodies), against the sandbox. */
describe("Kling's video door under video-a", () => {
  let t: TestApp;
  let key: string;
  /**
   * An instance that runs no worker, on a database of its own: for what is decided at the door (acceptance,
   * refusals, the records each door reads), so the videos those requests ask for are not rendered for nothing.
   */
  let door: TestApp;
  let doorKey: string;
  let receiver: Awaited<ReturnType<typeof startReceiver>>;
  beforeAll(async () => {
    receiver = await startReceiver();
    t = await startTestApp({ ALLOW_PRIVATE_URLS: 'true', CALLBACK_RETRY_SCHEDULE_S: '0.2', SANDBOX_DELAY_MS: '500' });
    key = await t.createKey('kling-video-team');
    door = await startTestApp({ ROLE: 'api' });
    doorKey = await door.createKey('kling-video-team');
  });
  afterAll(async () => {
    await door.close();
    await t.close();
    await receiver.close();
  });

  const finished = (path: string, id: string) =>
    pollUntil(() => api(t.url, 'GET', `${path}/${id}`, { key }), (r) => ['succeed', 'failed'].includes(r.body.data?.task_status), { timeoutMs: 60_000, what: `task ${id}` });

  it("takes Kling's documented text2video body, found by task_id and by external_task_id; callbacks carry task_status at the top; the result's url opens", async () => {
    const body = {
      model_name: 'kling-v1',
      prompt: 'A paper boat drifting down a rainy street',
      negative_prompt: '',
      cfg_scale: 0.5,
      mode: 'std',
      aspect_ratio: '16:9',
      duration: '5',
      camera_control: { type: 'simple', config: { horizontal: 0, vertical: 0, pan: 0, tilt: 0, roll: 0, zoom: 5 } },
      callback_url: `${receiver.url}/kling-video`,
      external_task_id: 'order-7-video',
    };
    const created = await api(t.url, 'POST', T2V, { key, body });
    expect([created.status, created.body.code, created.body.message]).toEqual([200, 0, 'SUCCEED']);
    expect(created.body.data).toEqual(expect.objectContaining({ task_status: 'submitted', task_info: { external_task_id: 'order-7-video' }, created_at: expect.any(Number) }));
    const id = created.body.data.task_id;
    const done = (await finished(T2V, id)).body.data;
    expect(done).toEqual(expect.objectContaining({ task_id: id, task_status: 'succeed', task_status_msg: '', final_unit_deduction: '5' }));
    const byExternal = await api(t.url, 'GET', `${T2V}/order-7-video`, { key });
    expect(byExternal.body.data.task_id).toBe(id);
    const [video] = done.task_result.videos;
    expect(video).toEqual({ id: expect.any(String), url: expect.stringMatching(/^http/), duration: '5' });
    const info = await probeVideo(Buffer.from(await (await fetch(video.url)).arrayBuffer()));
    expect([info.width, info.height, Math.round(info.durationS)]).toEqual([1280, 720, 5]);
    // Kling's callbacks: the bare record, task_status at the top
    const bodies = await pollUntil(async () => receiver.received.filter((r) => r.path === '/kling-video').map((r) => r.json), (b) => b.some((x) => x.task_status === 'succeed'), { what: 'the succeed callback' });
    expect(bodies.map((b) => b.task_status)).toEqual(['processing', 'succeed']);
    expect(bodies.every((b) => b.task_id === id && !('code' in b) && !('data' in b))).toBe(true);
    expect(bodies[1].task_result.videos[0].url).toMatch(/^http/);
    // the same external_task_id again: 409
    const again = await api(t.url, 'POST', T2V, { key, body });
    expect([again.status, again.body.message]).toEqual([409, expect.stringContaining('external_task_id "order-7-video" is already used')]);
  }, 120_000);

  it('takes image2video with image as Base64 and image_tail as a URL; refuses what no model can make, naming the field', async () => {
    const image = (await png(640, 360)).toString('base64');
    const body = { model_name: 'kling-v1-6', prompt: 'From here to there', image, image_tail: `${t.url}/samples/keyframe.jpg`, mode: 'pro', duration: '5', callback_url: `${receiver.url}/kling-i2v`, external_task_id: 'order-8-video' };
    const created = await api(t.url, 'POST', I2V, { key, body });
    expect([created.status, created.body.data?.task_status, created.body.data?.task_info]).toEqual([200, 'submitted', { external_task_id: 'order-8-video' }]);
    const done = (await finished(I2V, 'order-8-video')).body.data;
    expect([done.task_id, done.task_status]).toEqual([created.body.data.task_id, 'succeed']);
    const statuses = await pollUntil(async () => receiver.received.filter((r) => r.path === '/kling-i2v').map((r) => r.json.task_status as string), (s) => s.includes('succeed'), { what: 'the succeed callback' });
    expect(statuses).toEqual(['processing', 'succeed']);
    const info = await probeVideo(Buffer.from(await (await fetch(done.task_result.videos[0].url)).arrayBuffer()));
    expect([info.height, Math.round(info.durationS)]).toEqual([1080, 5]);
    const refused = async (path: string, body: Record<string, unknown>, message: RegExp) => {
      const res = await api(door.url, 'POST', path, { key: doorKey, body });
      expect([res.status, res.body.code, res.body.message]).toEqual([400, 1201, expect.stringMatching(message)]);
    };
    await refused(T2V, { prompt: 'x', cfg_scale: 1.5 }, /^cfg_scale must be a number from 0 to 1/);
    await refused(T2V, { prompt: 'x', duration: '11' }, /^duration: /);
    await refused(T2V, { prompt: 'x', mode: 'ultra' }, /^mode must be std or pro/);
    await refused(T2V, { prompt: 'x', aspect_ratio: '4:3' }, /^aspect_ratio must be 16:9, 9:16 or 1:1/);
    await refused(T2V, { prompt: 'x', camera_control: { type: 'simple', config: { zoom: 5, pan: 2 } } }, /^camera_control\.config must set exactly one of/);
    await refused(T2V, { prompt: 'x', watermark_info: { enabled: true } }, /^watermark_info\.enabled: /);
    await refused(I2V, { prompt: 'x' }, /^image is required/);
    await refused(I2V, { image: 'data:image/png;base64,AAAA' }, /^image must be an http\(s\) URL or Base64/);
    await refused(I2V, { image: Buffer.from('not an image at all').toString('base64') }, /^image must be a PNG, JPEG or WebP image/);
    expect((await api(door.url, 'POST', T2V, { key: doorKey, body: { prompt: 'x', duration: '10' } })).status).toBe(200);
  }, 120_000);

  it('takes multi-image2video: 1 to 4 reference images in image_list (Base64 or URL), made by a model that takes them; refuses the rest naming image_list', async () => {
    const ref = (await png(400, 400)).toString('base64');
    const body = { model_name: 'kling-v1-6', prompt: 'The two of them walk along the beach', image_list: [{ image: ref }, { image: `${t.url}/samples/keyframe.jpg` }], aspect_ratio: '9:16', duration: '5', external_task_id: 'refs-1' };
    const created = await api(t.url, 'POST', MULTI, { key, body });
    expect([created.status, created.body.data?.task_status]).toEqual([200, 'submitted']);
    const done = (await finished(MULTI, 'refs-1')).body.data;
    expect(done.task_status).toBe('succeed');
    const task = (await api(t.url, 'GET', `/tasks/${done.task_id}`, { key })).body;
    expect(task.request.referenceImages).toEqual([expect.objectContaining({ type: 'image', upload: true }), expect.objectContaining({ type: 'image', url: `${t.url}/samples/keyframe.jpg` })]);
    const info = await probeVideo(Buffer.from(await (await fetch(done.task_result.videos[0].url)).arrayBuffer()));
    expect(info.height).toBeGreaterThan(info.width);
    // read by the other routes as any generation is
    expect((await api(t.url, 'GET', `${T2V}/refs-1`, { key })).body.data.task_id).toBe(done.task_id);
    const refused = async (extra: Record<string, unknown>, message: RegExp) => {
      const res = await api(door.url, 'POST', MULTI, { key: doorKey, body: { prompt: 'x', image_list: [{ image: ref }], ...extra } });
      expect([res.status, res.body.code, res.body.message]).toEqual([400, 1201, expect.stringMatching(message)]);
    };
    await refused({ image_list: [] }, /^image_list must hold 1 to 4 images$/);
    await refused({ image_list: Array.from({ length: 5 }, () => ({ image: ref })) }, /^image_list must hold 1 to 4 images$/);
    await refused({ image_list: [{ image: ref }, { image: 7 }] }, /^image_list\[1\]\.image must be an http\(s\) URL or Base64/);
    await refused({ image_list: [{ image: ref }, { image: Buffer.from('not an image').toString('base64') }] }, /^image_list\[1\]\.image must be a PNG, JPEG or WebP image/);
    // kling-v1 takes no reference images
    await refused({ model_name: 'kling-v1' }, /^image_list: model kling-v1 does not make/);
    expect((await api(door.url, 'POST', MULTI, { key: doorKey, body: { prompt: 'x', image_list: Array.from({ length: 4 }, () => ({ image: ref })) } })).status).toBe(200);
  }, 120_000);

  it("image2video takes the image's shape in the sandbox as Kling makes it (a portrait frame, a portrait video)", async () => {
    const image = (await png(600, 800)).toString('base64');
    const created = await api(t.url, 'POST', I2V, { key, body: { model_name: 'kling-v2-1', prompt: 'Upright', image, external_task_id: 'portrait-1' } });
    expect(created.status).toBe(200);
    const done = (await finished(I2V, 'portrait-1')).body.data;
    const info = await probeVideo(Buffer.from(await (await fetch(done.task_result.videos[0].url)).arrayBuffer()));
    expect(Math.abs(info.width / info.height - 600 / 800)).toBeLessThan(0.02);
    // a phone's portrait JPEG: stored 800x600 with EXIF orientation 6, upright 600x800
    const phone = (await sharp({ create: { width: 800, height: 600, channels: 3, background: { r: 40, g: 90, b: 160 } } }).jpeg().withMetadata({ orientation: 6 }).toBuffer()).toString('base64');
    expect((await api(t.url, 'POST', I2V, { key, body: { model_name: 'kling-v2-1', prompt: 'Upright phone', image: phone, external_task_id: 'portrait-2' } })).status).toBe(200);
    const phoneDone = (await finished(I2V, 'portrait-2')).body.data;
    const phoneInfo = await probeVideo(Buffer.from(await (await fetch(phoneDone.task_result.videos[0].url)).arrayBuffer()));
    expect(Math.abs(phoneInfo.width / phoneInfo.height - 600 / 800)).toBeLessThan(0.02);
  }, 120_000);

  it('one generation, every door: Kling reads what Luma made, Luma and OpenAI read what Kling made; lists page with pageNum and pageSize', async () => {
    const own = await door.createKey('kling-every-door');
    const first = await api(door.url, 'POST', T2V, { key: own, body: { prompt: 'The first of three' } });
    const luma = await api(door.url, 'POST', '/video-b/v1/generations', { key: own, body: { prompt: 'Made through Luma' } });
    const asKling = await api(door.url, 'GET', `${T2V}/${luma.body.id}`, { key: own });
    expect([asKling.status, asKling.body.data.task_id, asKling.body.data.task_info]).toEqual([200, luma.body.id, { external_task_id: null }]);
    const kling = await api(door.url, 'POST', T2V, { key: own, body: { prompt: 'Made through Kling', aspect_ratio: '9:16', duration: '5', external_task_id: 'k-2' } });
    const id = kling.body.data.task_id;
    const asLuma = await api(door.url, 'GET', `/video-b/v1/generations/${id}`, { key: own });
    expect([asLuma.status, asLuma.body.request.prompt, asLuma.body.request.aspect_ratio]).toEqual([200, 'Made through Kling', '9:16']);
    const asOpenAi = await api(door.url, 'GET', `/openai/v1/videos/${id}`, { key: own });
    expect([asOpenAi.status, asOpenAi.body.prompt, asOpenAi.body.seconds]).toEqual([200, 'Made through Kling', '5']);
    const page = await api(door.url, 'GET', `${I2V}?pageNum=1&pageSize=2`, { key: own });
    expect(page.body.data.map((d: { task_id: string }) => d.task_id)).toEqual([id, luma.body.id]);
    const second = await api(door.url, 'GET', `${T2V}?pageNum=2&pageSize=2`, { key: own });
    expect(second.body.data.map((d: { task_id: string }) => d.task_id)).toEqual([first.body.data.task_id]);
    const other = await door.createKey('not-the-owner');
    expect((await api(door.url, 'GET', `${T2V}/${id}`, { key: other })).status).toBe(404);
    expect((await api(door.url, 'GET', `${T2V}/k-2`, { key: other })).status).toBe(404);
  }, 120_000);
  it('reads a compressed body on image2video as on expand: zeros refused at their first byte, a bomb 413 at the 28 MB limit, a gzipped request taken', async () => {
    const send = (body: Buffer, encoding: string, path = I2V) =>
      fetch(`${door.url}${path}`, { method: 'POST', body, headers: { authorization: `Bearer ${doorKey}`, 'content-type': 'application/json', 'content-encoding': encoding } }).then(async (r) => ({ status: r.status, body: (await r.json()) as any }));
    // body-parser read these in 16 kB pieces, each a trip through the thread pool: zeros were inflated to the limit before being refused
    const zeros = await send(gzipSync(Buffer.alloc(50 * 1024 * 1024)), 'gzip');
    expect([zeros.status, zeros.body.message]).toEqual([400, expect.stringMatching(/^Request body is not valid JSON: Unexpected token "\\u0000" at position 0/)]);
    const bomb = await send(deflateSync(Buffer.from(`{"image":"${'A'.repeat(40 * 1024 * 1024)}"}`)), 'deflate');
    expect([bomb.status, bomb.body.message]).toEqual([413, "Request body is larger than this route's limit of 28 MB"]);
    const image = (await png(400, 300)).toString('base64');
    const taken = await send(gzipSync(JSON.stringify({ prompt: 'gzipped', image })), 'gzip');
    expect([taken.status, taken.body.data?.task_status]).toEqual([200, 'submitted']);
    // a small route's body too
    const small = await send(gzipSync(JSON.stringify({ prompt: 'gzipped text' })), 'gzip', T2V);
    expect([small.status, small.body.data?.task_status]).toEqual([200, 'submitted']);
  });
});
