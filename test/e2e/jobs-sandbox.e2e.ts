import { createHash, createHmac } from 'node:crypto';
import pg from 'pg';
import sharp from 'sharp';
import { MediaService } from '../../src/modules/media/media.service.js';
import { AppSecretsRepository } from '../../src/infra/prisma/app-secrets.repository.js';
import { GIF_1X1, padPng, png } from '../support/images.js';
import { frameColour, probeVideo, solid, wav } from '../support/media.js';
import { pollUntil } from '../support/poll.js';
import { sendBytes, startServer, type TestServer } from '../support/http-server.js';
import { api, startTestApp, type TestApp } from '../support/test-app.js';

const EXPAND = '/video-a/v1/images/editing/expand';
const GEN = '/video-b/v1/generations';
const MB = 1024 * 1024;

describe('tasks run to the end on the sandbox provider', () => {
  let t: TestApp;
  let key: string;
  let otherKey: string;
  let files: TestServer;
  let db: pg.Client;
  const served = new Map<string, { type: string; bytes: Buffer }>();

  beforeAll(async () => {
    files = await startServer((req, res) => {
      const file = served.get(req.url ?? '');
      if (!file) {
        res.writeHead(404).end('not found');
        return;
      }
      sendBytes(res, file.type, file.bytes);
    });
    served.set('/photo.png', { type: 'image/png', bytes: await png(400, 300) });
    served.set('/small.png', { type: 'image/png', bytes: await png(200, 200) });
    served.set('/page.html', { type: 'text/html', bytes: Buffer.from('<!doctype html><html><body>not an image</body></html>') });
    served.set('/anim.gif', { type: 'image/gif', bytes: GIF_1X1 });
    served.set('/huge.png', { type: 'image/png', bytes: padPng(await png(300, 300), 11 * MB) });
    served.set('/red.png', { type: 'image/png', bytes: await solid(320, 240, [220, 20, 20]) });
    served.set('/blue.png', { type: 'image/png', bytes: await solid(320, 240, [20, 20, 220]) });
    served.set('/tone.wav', { type: 'audio/wav', bytes: wav(2.5) });
    t = await startTestApp({ ALLOW_PRIVATE_URLS: 'true', AUDIO_MAX_BYTES: String(100 * 1024) });
    key = await t.createKey('team-a');
    otherKey = await t.createKey('team-b');
    db = new pg.Client({ connectionString: t.db.url });
    await db.connect();
  });
  afterAll(async () => {
    await db.end();
    await t.close();
    await files.close();
  });

  const get = (path: string, k = key) => api(t.url, 'GET', path, { key: k });
  const download = async (url: string) => {
    const res = await fetch(url);
    return { status: res.status, type: res.headers.get('content-type'), bytes: Buffer.from(await res.arrayBuffer()) };
  };
  const finishedExpand = (id: string, k = key) =>
    pollUntil(() => get(`${EXPAND}/${id}`, k), (r) => ['succeed', 'failed'].includes(r.body.data?.task_status), { what: `expand task ${id} to finish` });
  const finishedGeneration = (id: string) => pollUntil(() => get(`${GEN}/${id}`), (r) => ['completed', 'failed'].includes(r.body.state), { what: `generation ${id} to finish` });

  describe('expand', () => {
    it('grows a 600x400 image by 0.25 on each side to 900x600, n images, each a different fill, downloadable without a key', async () => {
      const image = (await png(600, 400)).toString('base64');
      const created = await api(t.url, 'POST', EXPAND, { key, body: { image, up_expansion_ratio: 0.25, bottom_expansion_ratio: 0.25, left_expansion_ratio: 0.25, right_expansion_ratio: 0.25, n: '3', external_task_id: 'geo-1' } });
      const done = await finishedExpand(created.body.data.task_id);
      expect(done.body.data).toEqual(
        expect.objectContaining({ task_status: 'succeed', task_status_msg: '', task_info: { external_task_id: 'geo-1' }, task_result: { images: expect.any(Array), media_expired: false } }),
      );
      const images = done.body.data.task_result.images as { index: number; url: string }[];
      expect(images.map((i) => i.index)).toEqual([0, 1, 2]);
      const hashes = new Set<string>();
      for (const image of images) {
        expect(image.url).toMatch(new RegExp(`^${t.url.replace('127.0.0.1', '(127\\.0\\.0\\.1|localhost)')}/media/`));
        const file = await download(image.url);
        expect([file.status, file.type]).toEqual([200, 'image/png']);
        const meta = await sharp(file.bytes).metadata();
        expect([meta.format, meta.width, meta.height]).toEqual(['png', 900, 600]);
        hashes.add(createHash('sha256').update(file.bytes).digest('hex'));
      }
      expect(hashes.size).toBe(3);
      expect(done.body.data.updated_at).toBeGreaterThan(done.body.data.created_at);
    });

    it('adds round(ratio x side) on each side, for uneven ratios too', async () => {
      const image = (await png(401, 301)).toString('base64');
      const created = await api(t.url, 'POST', EXPAND, { key, body: { image, up_expansion_ratio: 0.1, down_expansion_ratio: 0.5, left_expansion_ratio: 0.333, right_expansion_ratio: 0 } });
      const done = await finishedExpand(created.body.data.task_id);
      const meta = await sharp((await download(done.body.data.task_result.images[0].url)).bytes).metadata();
      // 301 + round(30.1) + round(150.5) = 301 + 30 + 151; 401 + round(133.533) = 401 + 134
      expect([meta.width, meta.height]).toEqual([535, 482]);
    });

    it('fetches an image URL when the task runs and applies the same rules', async () => {
      const ratios = { up_expansion_ratio: 0.5, bottom_expansion_ratio: 0, left_expansion_ratio: 0, right_expansion_ratio: 0 };
      const ok = await api(t.url, 'POST', EXPAND, { key, body: { image: `${files.url}/photo.png`, ...ratios } });
      const done = await finishedExpand(ok.body.data.task_id);
      expect(done.body.data.task_status).toBe('succeed');
      const meta = await sharp((await download(done.body.data.task_result.images[0].url)).bytes).metadata();
      expect([meta.width, meta.height]).toEqual([400, 450]);

      const cases: [string, RegExp][] = [
        ['/missing.png', /could not fetch the image URL: the server answered HTTP 404/],
        ['/page.html', /image must be a JPEG or PNG file/],
        ['/anim.gif', /its bytes say: GIF/],
        ['/small.png', /at least 300x300 px; it is 200x200/],
        ['/huge.png', /larger than 10 MB/],
      ];
      for (const [path, reason] of cases) {
        const res = await api(t.url, 'POST', EXPAND, { key, body: { image: `${files.url}${path}`, ...ratios } });
        const failed = await finishedExpand(res.body.data.task_id);
        expect([path, failed.body.data.task_status]).toEqual([path, 'failed']);
        expect(failed.body.data.task_status_msg).toMatch(reason);
        expect(failed.body.data.task_result.images).toEqual([]);
      }
    });

    it('answers GET by task_id or external_task_id, and 404 for another owner (never 403)', async () => {
      const created = await api(t.url, 'POST', EXPAND, { key, body: { image: (await png(300, 300)).toString('base64'), up_expansion_ratio: 0, bottom_expansion_ratio: 0, left_expansion_ratio: 0.5, right_expansion_ratio: 0, external_task_id: 'lookup-1' } });
      const id = created.body.data.task_id;
      expect((await get(`${EXPAND}/${id}`)).body.data.task_id).toBe(id);
      expect((await get(`${EXPAND}/lookup-1`)).body.data.task_id).toBe(id);
      for (const path of [`${EXPAND}/${id}`, `${EXPAND}/lookup-1`]) {
        const foreign = await get(path, otherKey);
        expect([foreign.status, foreign.body.code]).toEqual([404, 1203]);
      }
      expect((await get(`${EXPAND}/no-such-task`)).status).toBe(404);
    });

    it('lists the owner\'s tasks newest first, pages them, filters by external_task_id, and checks the bounds', async () => {
      const list = await get(`${EXPAND}?pageNum=1&pageSize=500`);
      expect(list.status).toBe(200);
      const created = (list.body.data as { created_at: number }[]).map((d) => d.created_at);
      expect(created).toEqual([...created].sort((a, b) => b - a));
      expect(list.body.data.length).toBeGreaterThan(3);
      const page2 = await get(`${EXPAND}?pageNum=2&pageSize=2`);
      expect(page2.body.data.map((d: { task_id: string }) => d.task_id)).toEqual(list.body.data.slice(2, 4).map((d: { task_id: string }) => d.task_id));
      expect((await get(`${EXPAND}?external_task_id=geo-1`)).body.data.map((d: { task_info: unknown }) => d.task_info)).toEqual([{ external_task_id: 'geo-1' }]);
      expect((await get(`${EXPAND}?pageNum=1&pageSize=30`, otherKey)).body.data).toEqual([]);
      expect((await get(`${EXPAND}?pageNum=1000&pageSize=1`)).status).toBe(200);
      for (const query of ['pageNum=0', 'pageNum=1001', 'pageSize=0', 'pageSize=501', 'pageNum=abc', 'pageSize=1.5']) {
        const res = await get(`${EXPAND}?${query}`);
        expect([query, res.status, res.body.code]).toEqual([query, 400, 1201]);
        expect(res.body.message).toMatch(/^page(Num|Size) must be a whole number/);
      }
    });
  });

  describe('video', () => {
    it('renders a text prompt as a playable H.264 MP4 of 2-5 s whose frame size follows aspect_ratio', async () => {
      for (const [ratio, size] of [['16:9', [640, 360]], ['9:16', [360, 640]], ['1:1', [480, 480]]] as const) {
        const created = await api(t.url, 'POST', GEN, { key, body: { prompt: 'Clouds over hills', aspect_ratio: ratio } });
        const done = await finishedGeneration(created.body.id);
        expect(done.body).toEqual(expect.objectContaining({ state: 'completed', assets: { video: expect.any(String), image: expect.any(String) } }));
        expect(done.body).not.toHaveProperty('failure_reason');
        const video = await download(done.body.assets.video);
        expect([video.status, video.type]).toEqual([200, 'video/mp4']);
        const info = await probeVideo(video.bytes);
        expect(info.codec).toBe('h264');
        expect([info.width, info.height]).toEqual(size);
        expect(info.durationS).toBeGreaterThanOrEqual(2);
        expect(info.durationS).toBeLessThanOrEqual(5);
        const thumb = await download(done.body.assets.image);
        expect((await sharp(thumb.bytes).metadata()).width).toBe(size[0]);
      }
    });

    it('moves from frame0 to frame1, and with loop ends where it starts', async () => {
      const keyframes = { frame0: { type: 'image', url: `${files.url}/red.png` }, frame1: { type: 'image', url: `${files.url}/blue.png` } };
      const once = await finishedGeneration((await api(t.url, 'POST', GEN, { key, body: { prompt: 'red to blue', keyframes } })).body.id);
      const video = (await download(once.body.assets.video)).bytes;
      const [first, last] = [await frameColour(video, 'first'), await frameColour(video, 'last')];
      expect(first[0]).toBeGreaterThan(150);
      expect(first[2]).toBeLessThan(80);
      expect(last[2]).toBeGreaterThan(150);
      expect(last[0]).toBeLessThan(80);

      const looped = await finishedGeneration((await api(t.url, 'POST', GEN, { key, body: { prompt: 'there and back', keyframes, loop: true } })).body.id);
      const loopVideo = (await download(looped.body.assets.video)).bytes;
      const [a, b] = [await frameColour(loopVideo, 'first'), await frameColour(loopVideo, 'last')];
      expect(a.map((v, i) => Math.abs(v - b[i])).every((d) => d <= 6)).toBe(true);
    });

    it('zooms on a single keyframe, and continues from an earlier generation of the owner', async () => {
      const first = await finishedGeneration((await api(t.url, 'POST', GEN, { key, body: { prompt: 'zoom', keyframes: { frame0: { type: 'image', url: `${files.url}/blue.png` } } } })).body.id);
      expect(first.body.state).toBe('completed');
      const next = await finishedGeneration((await api(t.url, 'POST', GEN, { key, body: { prompt: 'continue', keyframes: { frame0: { type: 'generation', id: first.body.id } } } })).body.id);
      expect(next.body.state).toBe('completed');
      const colour = await frameColour((await download(next.body.assets.video)).bytes, 'first');
      expect(colour[2]).toBeGreaterThan(150);
    });

    it('fails with a reason when a keyframe URL does not give an image', async () => {
      const done = await finishedGeneration((await api(t.url, 'POST', GEN, { key, body: { prompt: 'x', keyframes: { frame0: { type: 'image', url: `${files.url}/page.html` } } } })).body.id);
      expect(done.body).toEqual(expect.objectContaining({ state: 'failed', failure_reason: expect.stringMatching(/keyframes.frame0.url must be a PNG, JPEG or WebP image; its bytes say: not a known image format/) }));
      expect(done.body).not.toHaveProperty('assets');
    });

    it('lists with {generations, count, has_more, limit, offset}, deletes with 204, and scopes by owner', async () => {
      const page = await get(`${GEN}?limit=2&offset=1`);
      expect(page.status).toBe(200);
      expect(page.body).toEqual({ generations: expect.any(Array), count: expect.any(Number), has_more: true, limit: 2, offset: 1 });
      expect(page.body.generations).toHaveLength(2);
      const all = await get(`${GEN}?limit=100`);
      expect(all.body.count).toBe(all.body.generations.length);
      expect(all.body.has_more).toBe(false);
      for (const q of ['limit=0', 'limit=101', 'offset=-1', 'limit=x']) expect((await get(`${GEN}?${q}`)).status).toBe(400);

      const victim = all.body.generations.find((g: { state: string }) => g.state === 'completed');
      expect((await get(`${GEN}/${victim.id}`, otherKey)).status).toBe(404);
      expect((await api(t.url, 'DELETE', `${GEN}/${victim.id}`, { key: otherKey })).status).toBe(404);
      const deleted = await api(t.url, 'DELETE', `${GEN}/${victim.id}`, { key });
      expect(deleted.status).toBe(204);
      expect(deleted.text).toBe('');
      expect((await get(`${GEN}/${victim.id}`)).status).toBe(404);
      expect((await download(victim.assets.video)).status).toBe(404);
      expect((await api(t.url, 'DELETE', `${GEN}/${victim.id}`, { key })).status).toBe(404);
    });
  });

  describe('audio', () => {
    const upload = async (url: string) => {
      const created = await api(t.url, 'POST', '/music-a/uploads/audio-url', { key, body: { url } });
      return pollUntil(() => get(`/music-a/uploads/${created.body.data}`), (r) => r.body.data?.status !== 'pending', { what: 'audio upload to finish' });
    };

    it('becomes ready with format, duration, size and SHA-256 read from the file', async () => {
      const done = await upload(`${files.url}/tone.wav`);
      const bytes = served.get('/tone.wav')!.bytes;
      expect(done.body).toEqual({
        code: 'success',
        message: '',
        data: {
          id: expect.any(String),
          url: `${files.url}/tone.wav`,
          status: 'ready',
          format: 'wav',
          duration: 2.5,
          size_bytes: bytes.length,
          sha256: createHash('sha256').update(bytes).digest('hex'),
          clip_url: expect.stringMatching(/\/media\/[0-9a-f-]{36}\?expires=\d+&signature=/),
          error: null,
          created_at: expect.any(String),
        },
      });
      // the clip is kept: its link serves the very bytes that were uploaded
      const clip = await download(done.body.data.clip_url);
      expect([clip.status, clip.type, clip.bytes.equals(bytes)]).toEqual([200, 'audio/wav', true]);
    });

    it('fails with a reason for a 404, an HTML page and a file over AUDIO_MAX_BYTES', async () => {
      expect((await upload(`${files.url}/nothing.mp3`)).body.data).toEqual(expect.objectContaining({ status: 'failed', error: expect.stringMatching(/HTTP 404/) }));
      expect((await upload(`${files.url}/page.html`)).body.data).toEqual(expect.objectContaining({ status: 'failed', error: expect.stringMatching(/not audio/) }));
      expect((await upload(`${files.url}/huge.png`)).body.data).toEqual(expect.objectContaining({ status: 'failed', error: expect.stringMatching(/larger than AUDIO_MAX_BYTES/) }));
    });

    it('answers another owner with a string-coded 404', async () => {
      const done = await upload(`${files.url}/tone.wav`);
      const foreign = await get(`/music-a/uploads/${done.body.data.id}`, otherKey);
      expect([foreign.status, foreign.body.code]).toEqual([404, 'not_found']);
    });
  });

  describe('result links', () => {
    it('refuse a changed signature or id, and an expired link', async () => {
      const list = await get(`${EXPAND}?external_task_id=geo-1`);
      const url = new URL(list.body.data[0].task_result.images[0].url);
      const tampered = new URL(url);
      tampered.searchParams.set('signature', `${url.searchParams.get('signature')!.slice(0, -2)}AA`);
      expect((await download(tampered.toString())).status).toBe(403);
      expect((await download(url.toString().replace(/expires=\d+/, 'expires=9999999999'))).status).toBe(403);
      // the service's own key (sealed in app_secrets), as the service opens it
      const signingKey = await t.app.get(AppSecretsRepository).findOrCreate('media_url_signing_key');
      const id = url.pathname.split('/').pop()!;
      const past = Math.floor(Date.now() / 1000) - 10;
      const signature = createHmac('sha256', Buffer.from(signingKey, 'base64url')).update(`${id}.${past}`).digest('base64url');
      const expired = await fetch(`${url.origin}/media/${id}?expires=${past}&signature=${signature}`);
      expect(expired.status).toBe(403);
      expect(((await expired.json()) as { message: string }).message).toMatch(/expired/);
      expect((await download(url.toString())).status).toBe(200);
    });

    it('stop working after RESULT_RETENTION_DAYS: the media is deleted and the task says so', async () => {
      const list = await get(`${EXPAND}?external_task_id=geo-1`);
      const task = list.body.data[0];
      await db.query("UPDATE tasks SET finished_at = now() - interval '31 days' WHERE id = $1", [task.task_id]);
      expect(await t.app.get(MediaService).runRetention()).toBeGreaterThanOrEqual(1);
      const after = await get(`${EXPAND}/${task.task_id}`);
      expect(after.body.data).toEqual(expect.objectContaining({ task_status: 'succeed', task_result: { images: [], media_expired: true } }));
      expect((await download(task.task_result.images[0].url)).status).toBe(404);
    });
  });
});

describe('deadlines', () => {
  it('end a task that runs past its deadline failed, with the reason', async () => {
    // a deadline that leaves room for the claim on a loaded machine (a task claimed past its deadline fails there, no step run)
    const t = await startTestApp({ EXPAND_TIMEOUT_S: '3', SANDBOX_DELAY_MS: '10000' });
    try {
      const key = await t.createKey();
      const created = await api(t.url, 'POST', EXPAND, { key, body: { image: (await png(300, 300)).toString('base64'), up_expansion_ratio: 0.1, bottom_expansion_ratio: 0, left_expansion_ratio: 0, right_expansion_ratio: 0 } });
      const done = await pollUntil(() => api(t.url, 'GET', `${EXPAND}/${created.body.data.task_id}`, { key }), (r) => r.body.data.task_status === 'failed', { timeoutMs: 20_000, what: 'the deadline' });
      expect(done.body.data.task_status_msg).toBe('timed out: the task did not finish within 3 s');
      // the worker failed it on time, without waiting for its step; what the step makes later changes nothing, and leaves no files behind
      await pollUntil(async () => t.logs.lines.some((l) => String(l.msg).includes("its step ran past the task's deadline")), Boolean, { timeoutMs: 20_000, what: 'the worker to give up on the step' });
      const c = new pg.Client({ connectionString: t.db.url });
      await c.connect();
      const { rows } = await c.query('SELECT state, (SELECT count(*)::int FROM media WHERE task_id = $1) AS files FROM tasks WHERE id = $1', [created.body.data.task_id]);
      await c.end();
      expect(rows[0]).toEqual({ state: 'failed', files: 0 });
    } finally {
      await t.close();
    }
  });
});
