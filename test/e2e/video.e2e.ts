import pg from 'pg';
import { probeVideo } from '../support/media.js';
import { pollUntil } from '../support/poll.js';
import { api, startTestApp, type TestApp } from '../support/test-app.js';

const ISO_MS = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

describe('POST /video-b/v1/generations', () => {
  let t: TestApp;
  let key: string;
  let otherKey: string;
  let db: pg.Client;

  beforeAll(async () => {
    t = await startTestApp();
    key = await t.createKey('team-a');
    otherKey = await t.createKey('team-b');
    db = new pg.Client({ connectionString: t.db.url });
    await db.connect();
  });
  afterAll(async () => {
    await db.end();
    await t.close();
  });

  const create = (body: unknown, k = key, path = '/video-b/v1/generations', headers: Record<string, string> = {}) => api(t.url, 'POST', path, { key: k, body, headers });
  const refused = async (body: unknown, pattern: RegExp) => {
    const res = await create(body);
    expect([res.status, res.body.code]).toEqual([400, 1201]);
    expect(res.body.message).toMatch(pattern);
  };

  it('answers 201 with the record exactly as the spec shows it, for a prompt and one keyframe', async () => {
    const res = await create({ prompt: 'A paper boat', keyframes: { frame0: { type: 'image', url: 'https://example.com/f0.jpg' } } });
    expect(res.status).toBe(201);
    expect(res.body).toEqual({
      id: expect.stringMatching(UUID),
      generation_type: 'video',
      state: 'pending',
      model: 'ray-2',
      created_at: expect.stringMatching(ISO_MS),
      request: {
        prompt: 'A paper boat',
        aspect_ratio: '16:9',
        enhance: true,
        request_type: 'image_to_video',
        generation_type: 'video',
        model: 'ray-2',
        loop: false,
        keyframes: { frame0: { type: 'image', url: 'https://example.com/f0.jpg' } },
      },
      media_request: {
        end: null,
        loop: false,
        prompt_type: 'keyframe',
        start: { id: expect.stringMatching(UUID), media_type: null, thumbnail: null, type: 'upload' },
        text: 'A paper boat',
      },
    });
    // the spec's fields, in its order, with Luma's generation_type and model beside them
    expect(Object.keys(res.body)).toEqual(['id', 'generation_type', 'state', 'model', 'created_at', 'request', 'media_request']);
    expect(Math.abs(Date.parse(res.body.created_at) - Date.now())).toBeLessThan(60_000);
    // start.id is the registered keyframe media
    const { rows } = await db.query("SELECT params->'firstFrame' AS frame FROM tasks WHERE id = $1", [res.body.id]);
    expect(rows[0].frame).toEqual({ type: 'image', id: res.body.media_request.start.id, url: 'https://example.com/f0.jpg' });
  });

  it('is text_to_video with prompt_type text and no media for a prompt alone; echoes loop and aspect_ratio', async () => {
    const res = await create({ prompt: 'Clouds', aspect_ratio: '9:16', loop: true });
    expect(res.status).toBe(201);
    expect(res.body.request).toEqual({ prompt: 'Clouds', aspect_ratio: '9:16', enhance: true, request_type: 'text_to_video', generation_type: 'video', model: 'ray-2', loop: true });
    expect(res.body.media_request).toEqual({ end: null, loop: true, prompt_type: 'text', start: null, text: 'Clouds' });
  });

  it("takes Luma's model, resolution, duration and concepts, and echoes them", async () => {
    const res = await create({ prompt: 'Waves', model: 'ray-flash-2', resolution: '720p', duration: '9s', generation_type: 'video', concepts: [{ key: 'dolly_zoom' }] });
    expect(res.status).toBe(201);
    expect(res.body.model).toBe('ray-flash-2');
    expect(res.body.request).toEqual(expect.objectContaining({ model: 'ray-flash-2', resolution: '720p', duration: '9s', concepts: [{ key: 'dolly_zoom' }] }));
    const again = await api(t.url, 'GET', `/video-b/v1/generations/${res.body.id}`, { key });
    expect(again.body.request).toEqual(res.body.request);
  });

  it.each([
    ['model', 'ray-3', /model must be one of the configured models: ray-2 \(luma\), ray-flash-2 \(luma\).* \(not ray-3\)/],
    ['model', 'ray 2', /model must name one of the models GET \/models lists/],
    ['resolution', '2160p', /resolution must be one of 480p, 540p, 720p, 768p, 1080p, 4k/],
    ['resolution', '720', /resolution must be one of/],
    ['duration', '99s', /^duration: no configured model makes this duration of 99 s$/],
    ['duration', '7 s', /^duration must be whole seconds from 1 to 99 followed by "s"/],
    ['duration', '600s', /^duration must be whole seconds from 1 to 99 followed by "s"/],
    ['duration', '0s', /^duration must be whole seconds from 1 to 99 followed by "s"/],
    ['duration', 5, /duration must be a string such as "5s"/],
    ['generation_type', 'image', /generation_type must be "video"/],
    ['concepts', 'dolly', /concepts must be an array/],
    ['concepts', [{ key: '' }], /concepts\.0\.key must be 1 to 64 characters/],
  ])("refuses %s = %p (Luma's allowed values)", async (field, value, pattern) => {
    await refused({ prompt: 'p', [field]: value }, pattern);
  });

  it('takes, in the sandbox, what a real model makes: Kling\'s door refuses "7" as Kling does and the model "sandbox" makes it; the Luma door takes "8s" (Veo through Runway makes 8 s)', async () => {
    const kling = (body: Record<string, unknown>) => api(t.url, 'POST', '/video-a/v1/videos/text2video', { key, body: { prompt: 'A heron in the reeds', ...body } });
    // Before: every model could do everything in the sandbox, and this made a 7 s video that Kling itself refuses
    const seven = await kling({ duration: '7' });
    expect([seven.status, seven.body.code, seven.body.message]).toEqual([400, 1201, expect.stringMatching(/^duration: no configured Kling model makes this duration of 7 s; models that could make it: (.+, )?gen4\.5 \(runway\), (.+, )?sandbox \(sandbox\)$/)]);
    expect((await kling({ duration: '10' })).status).toBe(200);
    const free = await kling({ duration: '7', model_name: 'sandbox' });
    expect(free.status).toBe(200);
    const done = await pollUntil(() => api(t.url, 'GET', `/video-a/v1/videos/text2video/${free.body.data.task_id}`, { key }), (r) => ['succeed', 'failed'].includes(r.body.data.task_status), { timeoutMs: 60_000, what: 'the sandbox model\'s video' });
    expect(done.body.data.task_status).toBe('succeed');
    const video = await probeVideo(Buffer.from(await (await fetch(done.body.data.task_result.videos[0].url)).arrayBuffer()));
    expect(Math.round(video.durationS)).toBe(7);
    expect((await create({ prompt: 'Rain', duration: '8s' })).status).toBe(201);
    await refused({ prompt: 'Rain', duration: '7s', model: 'ray-2' }, /^duration: model ray-2 does not make this duration of 7 s/);
    // GET /models lists what the doors take: the vendors' catalogs and the free-form model
    const { models } = (await api(t.url, 'GET', '/models', { key })).body as { models: { name: string; vendor: string; durations_s: number[] }[] };
    expect(models).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ name: 'kling-v1', vendor: 'kling', durations_s: [5, 10] }),
        expect.objectContaining({ name: 'veo3.1', vendor: 'runway', durations_s: [4, 6, 8] }),
        expect.objectContaining({ name: 'sandbox', vendor: 'sandbox', durations_s: Array.from({ length: 15 }, (_, i) => i + 1) }),
      ]),
    );
  }, 90_000);

  it('leaves out failure_reason and assets while the generation has none, as Luma does', async () => {
    const res = await create({ prompt: 'Plain' });
    const got = await api(t.url, 'GET', `/video-b/v1/generations/${res.body.id}`, { key });
    expect(got.body).not.toHaveProperty('failure_reason');
    expect(got.body).not.toHaveProperty('assets');
  });

  it("answers Luma's ping, and Luma's operations it does not offer with a clear 1207", async () => {
    expect((await api(t.url, 'GET', '/video-b/v1/ping', { key })).body).toEqual({ message: 'pong' });
    expect((await api(t.url, 'GET', '/video-b/v1/ping')).status).toBe(401);
    const id = (await create({ prompt: 'p' })).body.id;
    for (const [method, path] of [
      ['POST', '/video-b/v1/generations/image'],
      ['POST', '/video-b/v1/generations/image/reframe'],
      ['POST', '/video-b/v1/generations/video/modify'],
      ['POST', '/video-b/v1/generations/video/reframe'],
      ['GET', '/video-b/v1/generations/concepts/list'],
      ['POST', `/video-b/v1/generations/${id}/upscale`],
      ['POST', `/video-b/v1/generations/${id}/audio`],
    ]) {
      const res = await api(t.url, method, path, { key, body: method === 'GET' ? undefined : {} });
      expect([path, res.status, res.body.code]).toEqual([path, 404, 1207]);
      expect(res.body.message).toMatch(/^Luma's .* is not supported by this gateway/);
    }
    // a typo is still a typo
    expect((await api(t.url, 'GET', '/video-b/v1/generationz', { key })).body.code).toBe(1203);
  });

  it('registers frame1 as the end keyframe', async () => {
    const res = await create({ prompt: 'p', keyframes: { frame0: { type: 'image', url: 'https://example.com/a.jpg' }, frame1: { type: 'image', url: 'https://example.com/b.jpg' } } });
    expect(res.body.media_request.end).toEqual({ id: expect.stringMatching(UUID), media_type: null, thumbnail: null, type: 'upload' });
    expect(res.body.media_request.end.id).not.toBe(res.body.media_request.start.id);
  });

  it('takes a "generation" keyframe naming one of the caller\'s own generations, and refuses another owner\'s', async () => {
    const first = await create({ prompt: 'first' });
    const res = await create({ prompt: 'continue', keyframes: { frame0: { type: 'generation', id: first.body.id } } });
    expect(res.status).toBe(201);
    expect(res.body.media_request.start).toEqual({ id: first.body.id, media_type: null, thumbnail: null, type: 'generation' });
    const foreign = await create({ prompt: 'steal', keyframes: { frame0: { type: 'generation', id: first.body.id } } }, otherKey);
    expect(foreign.status).toBe(400);
    expect(foreign.body.message).toBe(`keyframes.frame0.id must name one of your generations; there is no generation ${first.body.id}`);
  });

  it('serves the lumaai SDK path /generations/video as the same operation, with a charset in Content-Type', async () => {
    const res = await create({ prompt: 'via sdk' }, key, '/video-b/v1/generations/video', { 'content-type': 'application/json;charset=utf-8' });
    expect(res.status).toBe(201);
    expect(res.body.state).toBe('pending');
  });

  it('keeps each generation under its owner', async () => {
    const res = await create({ prompt: 'owned' }, otherKey);
    const { rows } = await db.query('SELECT kind, owner, params, state FROM tasks WHERE id = $1', [res.body.id]);
    // stored in the gateway's words: the normalized request (no ratio or model asked) and the door it came through
    // (its state is whatever the worker made of it by now: this instance runs the task as soon as it is queued)
    expect(rows[0]).toEqual({ kind: 'video', owner: 'team-b', params: { prompt: 'owned', loop: false, door: 'luma' }, state: expect.stringMatching(/^(queued|running|succeeded)$/) });
  });

  it('needs a non-empty prompt of at most 5000 characters', async () => {
    await refused({}, /^prompt is required: it must be a string/);
    await refused({ prompt: '' }, /prompt must not be empty or blank/);
    await refused({ prompt: '   ' }, /prompt must not be empty or blank/);
    await refused({ prompt: 12 }, /prompt must be a string/);
    expect((await create({ prompt: 'x'.repeat(5000) })).status).toBe(201);
    await refused({ prompt: 'x'.repeat(5001) }, /prompt must be at most 5000 characters long/);
  });

  it('checks loop, aspect_ratio and callback_url', async () => {
    await refused({ prompt: 'p', loop: 'yes' }, /loop must be a boolean/);
    for (const ar of ['16x9', '0:9', '16:0', '-16:9', '1.5:1', '16:', ':9', 16, '12345:1']) {
      await refused({ prompt: 'p', aspect_ratio: ar }, /aspect_ratio must/);
    }
    for (const ar of ['1:1', '21:9']) {
      expect((await create({ prompt: 'p', aspect_ratio: ar })).status).toBe(201);
    }
    // a well-formed ratio no real model makes: refused as the vendors would; the free-form model 'sandbox' renders it
    await refused({ prompt: 'p', aspect_ratio: '9999:1' }, /^aspect_ratio: no configured model makes this aspect ratio \(9999:1\)/);
    expect((await create({ prompt: 'p', aspect_ratio: '9999:1', model: 'sandbox' })).status).toBe(201);
    await refused({ prompt: 'p', callback_url: 'mailto:x@example.com' }, /callback_url must be an http or https URL/);
    expect((await create({ prompt: 'p', callback_url: 'https://example.com/hook' })).status).toBe(201);
  });

  it('names the keyframe field at fault', async () => {
    await refused({ prompt: 'p', keyframes: { frame0: { type: 'video', url: 'https://e.com/a' } } }, /^keyframes\.frame0\.type must be "image" or "generation"$/);
    await refused({ prompt: 'p', keyframes: { frame0: { type: 'image' } } }, /^keyframes\.frame0\.url is required: an http or https URL$/);
    // a nested field missing: required, with its rule's words at its path
    await refused({ prompt: 'p', keyframes: { frame0: { url: 'https://e.com/a.jpg' } } }, /^keyframes\.frame0\.type is required: it must be "image" or "generation"$/);
    await refused({ prompt: 'p', keyframes: { frame1: { type: 'image', url: 'file:///etc/passwd' } } }, /^keyframes\.frame1\.url must be an http or https URL$/);
    await refused({ prompt: 'p', keyframes: { frame0: { type: 'generation', id: 'abc' } } }, /^keyframes\.frame0\.id must be the id \(a UUID\)/);
    await refused({ prompt: 'p', keyframes: { frame0: 'https://e.com/a.jpg' } }, /keyframes\.frame0 must be an object/);
    await refused({ prompt: 'p', keyframes: 'x' }, /keyframes must be an object/);
  });

  it('names several faults at once', async () => {
    const res = await create({ prompt: '', loop: 1, aspect_ratio: 'wide', keyframes: { frame0: { type: 'nope' } } });
    expect(res.status).toBe(400);
    for (const f of ['prompt', 'loop', 'aspect_ratio', 'keyframes.frame0.type']) expect(res.body.message).toContain(f);
  });
});
