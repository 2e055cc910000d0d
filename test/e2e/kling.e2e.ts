import sharp from 'sharp';
import { png } from '../support/images.js';
import { pollUntil } from '../support/poll.js';
import { startReceiver } from '../support/webhook-receiver.js';
import { api, startTestApp, type TestApp } from '../support/test-app.js';

const EXPAND = '/video-a/v1/images/editing/expand';
const T2V = '/video-a/v1/videos/text2video';
const I2V = '/video-a/v1/videos/image2video';
const IMAGES = '/video-a/v1/images/generations';

/** Kling's own documented create body (its image URL replaced by one this offline test can read). */
const klingDocumentedBody = (image: string, extra: Record<string, unknown> = {}) => ({
  up_expansion_ratio: 0.1495,
  down_expansion_ratio: 0.1495,
  left_expansion_ratio: 0.6547,
  right_expansion_ratio: 0.6547,
  prompt: '',
  image,
  n: 2,
  external_task_id: '',
  callback_url: '',
  ...extra,
});

describe('a client written for Kling', () => {
  let t: TestApp;
  let key: string;
  let receiver: Awaited<ReturnType<typeof startReceiver>>;
  beforeAll(async () => {
    receiver = await startReceiver();
    t = await startTestApp({ ALLOW_PRIVATE_URLS: 'true', CALLBACK_RETRY_SCHEDULE_S: '0.2' });
    key = await t.createKey('kling-team');
  });
  afterAll(async () => {
    await t.close();
    await receiver.close();
  });

  const finished = (id: string) =>
    pollUntil(() => api(t.url, 'GET', `${EXPAND}/${id}`, { key }), (r) => ['succeed', 'failed'].includes(r.body.data.task_status), { timeoutMs: 60_000, what: 'the task' });

  it("sends Kling's documented example body and gets 200; empty strings mean absent fields", async () => {
    const created = await api(t.url, 'POST', EXPAND, { key, body: klingDocumentedBody(`${t.url}/samples/photo.png`) });
    expect(created.status).toBe(200);
    expect(created.body.data.task_info).toEqual({ external_task_id: null });
    const done = await finished(created.body.data.task_id);
    expect(done.body.data.task_status).toBe('succeed');
    expect(done.body.data.task_result.images).toHaveLength(2);
    // the same body twice is two tasks: "" is no external_task_id, so no 409
    expect((await api(t.url, 'POST', EXPAND, { key, body: klingDocumentedBody(`${t.url}/samples/photo.png`) })).status).toBe(200);
  });

  it('finds task_status at the top of each callback, as a Kling receiver reads it', async () => {
    const created = await api(t.url, 'POST', EXPAND, { key, body: klingDocumentedBody((await png(400, 300)).toString('base64'), { callback_url: `${receiver.url}/kling` }) });
    const id = created.body.data.task_id;
    await pollUntil(async () => receiver.received.filter((r) => r.path === '/kling').length, (n) => n === 2, { what: 'both callbacks' });
    const bodies = receiver.received.filter((r) => r.path === '/kling').map((r) => r.json);
    // what a receiver written for Kling reads
    expect(bodies.map((b) => [b.task_id, b.task_status, typeof b.created_at, typeof b.updated_at])).toEqual([
      [id, 'processing', 'number', 'number'],
      [id, 'succeed', 'number', 'number'],
    ]);
    expect(bodies[1].task_result.images.map((i: { index: number }) => i.index)).toEqual([0, 1]);
    expect(bodies[1].task_status_msg).toBe('');
    expect(bodies[1].task_info).toEqual({ external_task_id: null });
    expect(bodies.every((b) => !('code' in b) && !('data' in b))).toBe(true);
  });

  it('makes a watermarked copy of each result with watermark_info.enabled, and none without', async () => {
    const image = (await png(400, 400)).toString('base64');
    const marked = await finished((await api(t.url, 'POST', EXPAND, { key, body: { ...klingDocumentedBody(image), n: 1, watermark_info: { enabled: true } } })).body.data.task_id);
    expect(marked.body.data.watermark_info).toEqual({ enabled: true });
    const [result] = marked.body.data.task_result.images;
    expect(result).toEqual({ index: 0, url: expect.stringContaining('/media/'), watermark_url: expect.stringContaining('/media/') });
    const plain = Buffer.from(await (await fetch(result.url)).arrayBuffer());
    const stamped = Buffer.from(await (await fetch(result.watermark_url)).arrayBuffer());
    const [a, b] = await Promise.all([sharp(plain).metadata(), sharp(stamped).metadata()]);
    expect([b.format, b.width, b.height]).toEqual([a.format, a.width, a.height]);
    expect(stamped.equals(plain)).toBe(false);

    for (const watermark_info of [{ enabled: false }, { enabled: '' }, {}]) {
      const none = await finished((await api(t.url, 'POST', EXPAND, { key, body: { image, up_expansion_ratio: 0.1, bottom_expansion_ratio: 0, left_expansion_ratio: 0, right_expansion_ratio: 0, watermark_info } })).body.data.task_id);
      expect([watermark_info, none.body.data.task_result.images[0]]).toEqual([watermark_info, { index: 0, url: expect.any(String) }]);
    }
    const wrong = await api(t.url, 'POST', EXPAND, { key, body: { image, ...{ up_expansion_ratio: 0.1, bottom_expansion_ratio: 0, left_expansion_ratio: 0, right_expansion_ratio: 0 }, watermark_info: { enabled: 'yes' } } });
    expect([wrong.status, wrong.body.message]).toEqual([400, expect.stringMatching(/watermark_info.enabled must be a boolean/)]);
  });

  it("refuses an external_task_id already used with 409 in Kling's envelope on every Kling door (expand, text2video, image2video, images/generations), never a 500", async () => {
    const image = (await png(400, 300)).toString('base64');
    const doors: [string, Record<string, unknown>][] = [
      [EXPAND, { image, up_expansion_ratio: 0.1, bottom_expansion_ratio: 0, left_expansion_ratio: 0, right_expansion_ratio: 0 }],
      [T2V, { prompt: 'A paper boat', duration: '5' }],
      [I2V, { prompt: 'The boat drifts away', image: `${t.url}/samples/keyframe.jpg`, duration: '5' }],
      [IMAGES, { prompt: 'A paper boat', aspect_ratio: '16:9' }],
      // an input image the refused create had stored
      [IMAGES, { prompt: 'The same boat in winter', image }],
    ];
    const taken = (id: string) => ({ code: 1204, message: `external_task_id "${id}" is already used by another of your tasks`, request_id: expect.any(String) });
    for (const [i, [path, body]] of doors.entries()) {
      const id = `reused-${i}`;
      const first = await api(t.url, 'POST', path, { key, body: { ...body, external_task_id: id } });
      expect([path, first.status, first.body.code, first.body.data?.task_info]).toEqual([path, 200, 0, { external_task_id: id }]);
      const again = await api(t.url, 'POST', path, { key, body: { ...body, external_task_id: id } });
      expect([path, again.status, again.body]).toEqual([path, 409, taken(id)]);
      expect(again.body.request_id).toBe(again.headers.get('x-request-id'));
      // the task the id names is still the first one
      expect((await api(t.url, 'GET', `${path}/${id}`, { key })).body.data.task_id).toBe(first.body.data.task_id);
    }
    // Kling's two video doors make one kind of task: an id text2video took is taken for image2video too
    const crossed = await api(t.url, 'POST', I2V, { key, body: { ...doors[2][1], external_task_id: 'reused-1' } });
    expect([crossed.status, crossed.body]).toEqual([409, taken('reused-1')]);
    // racing creates of one new id: one is accepted, the others refused 409 (never a 500)
    const racing = await Promise.all(Array.from({ length: 6 }, () => api(t.url, 'POST', IMAGES, { key, body: { prompt: 'A race', image, external_task_id: 'reused-race' } })));
    expect(racing.map((r) => r.status).sort()).toEqual([200, 409, 409, 409, 409, 409]);
  }, 60_000);

  it('gives links on the base the task was created through, in answers and callbacks alike', async () => {
    const created = await api(t.url, 'POST', EXPAND, { key, body: klingDocumentedBody((await png(400, 300)).toString('base64'), { callback_url: `${receiver.url}/links`, n: 1 }) });
    const done = await finished(created.body.data.task_id);
    await pollUntil(async () => receiver.received.filter((r) => r.path === '/links').length, (n) => n === 2, { what: 'both callbacks' });
    const fromCallback = receiver.received.filter((r) => r.path === '/links')[1].json.task_result.images[0].url;
    // read through another name of the same service: the links keep the base the task was created through
    const port = new URL(t.url).port;
    const viaLocalhost = await api(`http://localhost:${port}`, 'GET', `${EXPAND}/${created.body.data.task_id}`, { key });
    for (const url of [done.body.data.task_result.images[0].url, fromCallback, viaLocalhost.body.data.task_result.images[0].url]) {
      expect(new URL(url).origin).toBe(t.url);
    }
  });
});

describe('PUBLIC_BASE_URL', () => {
  it('is the base of every result link, in answers and callbacks', async () => {
    const receiver = await startReceiver();
    const t = await startTestApp({ ALLOW_PRIVATE_URLS: 'true', PUBLIC_BASE_URL: 'https://media.example.test' });
    try {
      const key = await t.createKey();
      const created = await api(t.url, 'POST', EXPAND, { key, body: klingDocumentedBody((await png(400, 300)).toString('base64'), { callback_url: `${receiver.url}/public`, n: 1 }) });
      const done = await pollUntil(() => api(t.url, 'GET', `${EXPAND}/${created.body.data.task_id}`, { key }), (r) => r.body.data.task_status === 'succeed', { what: 'the task' });
      await pollUntil(async () => receiver.received.length, (n) => n === 2, { what: 'both callbacks' });
      expect(new URL(done.body.data.task_result.images[0].url).origin).toBe('https://media.example.test');
      expect(new URL(receiver.received[1].json.task_result.images[0].url).origin).toBe('https://media.example.test');
    } finally {
      await t.close();
      await receiver.close();
    }
  });
});
