import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { crc32 } from 'node:zlib';
import sharp from 'sharp';
import { Child } from '../support/child-process.js';
import { freePort } from '../support/free-port.js';
import { sendBytes, startServer, type TestServer } from '../support/http-server.js';
import { flatPng, png } from '../support/images.js';
import { pollUntil } from '../support/poll.js';
import { api, createTestDatabase, queryDb, startTestApp, type TestApp } from '../support/test-app.js';

const EXPAND = '/video-a/v1/images/editing/expand';
const GEN = '/video-b/v1/generations';
const I2V = '/video-a/v1/videos/image2video';
const OPENAI = '/openai/v1/videos';
const MB = 1024 * 1024;
const NO_RATIOS = { up_expansion_ratio: 0, bottom_expansion_ratio: 0, left_expansion_ratio: 0, right_expansion_ratio: 0 };

/** The PNG of the issue: 16000 x 16000 px of one colour, 31 kB, 768 MB once decoded. */
const HUGE = flatPng(16000, 16000);

/** A PNG whose header is whole (its signature and IHDR: 400x400) and whose IDAT is noise, not a deflate stream. */
async function undecodablePng(): Promise<Buffer> {
  const whole = await png(400, 400);
  const noise = randomBytes(4096);
  const chunk = Buffer.alloc(12 + noise.length);
  chunk.writeUInt32BE(noise.length, 0);
  chunk.write('IDAT', 4, 'latin1');
  noise.copy(chunk, 8);
  chunk.writeUInt32BE(crc32(Buffer.concat([Buffer.from('IDAT', 'latin1'), noise])), 8 + noise.length);
  return Buffer.concat([whole.subarray(0, 33), chunk, whole.subarray(whole.length - 12)]);
}

/** A file server on loopback, standing in for a caller's image host. */
async function imageHost(files: Record<string, Buffer>): Promise<TestServer> {
  return startServer((req, res) => {
    const bytes = files[req.url ?? ''];
    if (!bytes) return void res.writeHead(404).end('not found');
    sendBytes(res, 'image/png', bytes);
  });
}

/** An OpenAI-door create with `image` as the input_reference file part (multipart, as OpenAI's SDKs send it). */
async function openAiCreate(base: string, key: string, image: Buffer): Promise<{ status: number; body: any }> {
  const form = new FormData();
  form.set('prompt', 'From the uploaded frame');
  form.set('input_reference', new Blob([new Uint8Array(image)], { type: 'image/png' }), 'frame.png');
  const res = await fetch(`${base}${OPENAI}`, { method: 'POST', headers: { authorization: `Bearer ${key}` }, body: form });
  return { status: res.status, body: await res.json() };
}

it('the 16000 x 16000 PNG is what the issue says: under 1 MB, a PNG of that size to sharp', async () => {
  expect(HUGE.length).toBeLessThan(MB);
  expect(await sharp(HUGE).metadata()).toEqual(expect.objectContaining({ format: 'png', width: 16000, height: 16000 }));
  // the same construction, small, decodes to the colour it names
  const { data, info } = await sharp(flatPng(9, 3, [40, 90, 160])).raw().toBuffer({ resolveWithObject: true });
  expect([info.width, info.height, info.channels, [...data.subarray(0, 3)]]).toEqual([9, 3, 3, [40, 90, 160]]);
});

/**
 * Small bounds, so that the boundaries are cheap to reach: 500 px a side, 160,000 pixels (400 x 400), an expand
 * output of 250,000 pixels (500 x 500).
 */
describe('images within bounds (IMAGE_MAX_SIDE=500, IMAGE_MAX_PIXELS=160000, EXPAND_MAX_OUTPUT_PIXELS=250000)', () => {
  let t: TestApp;
  let key: string;
  let host: TestServer;
  beforeAll(async () => {
    host = await imageHost({ '/huge.png': HUGE, '/edge.png': await png(500, 300), '/tall.png': await png(400, 401), '/square.png': await png(400, 400), '/noise.png': await undecodablePng() });
    t = await startTestApp({ ALLOW_PRIVATE_URLS: 'true', IMAGE_MAX_SIDE: '500', IMAGE_MAX_PIXELS: '160000', EXPAND_MAX_OUTPUT_PIXELS: '250000' });
    key = await t.createKey('bounds-team');
  });
  afterAll(async () => {
    await t.close();
    await host.close();
  });

  const expand = (image: string, ratios: Record<string, number> = NO_RATIOS) => api(t.url, 'POST', EXPAND, { key, body: { image, ...ratios } });
  const finishedExpand = (id: string) =>
    pollUntil(() => api(t.url, 'GET', `${EXPAND}/${id}`, { key }), (r) => ['succeed', 'failed'].includes(r.body.data?.task_status), { what: `expand ${id} to end` });
  const finishedGeneration = (id: string) =>
    pollUntil(() => api(t.url, 'GET', `${GEN}/${id}`, { key }), (r) => ['completed', 'failed'].includes(r.body.state), { timeoutMs: 60_000, what: `generation ${id} to end` });
  const refusedWith = (res: { status: number; body: any }, message: RegExp) => expect([res.status, res.body.code, res.body.message]).toEqual([400, 1201, expect.stringMatching(message)]);

  describe('expand', () => {
    it('takes a Base64 image of exactly 500 px a side and of exactly 160,000 pixels, and refuses one pixel more with 400 naming image and the rule', async () => {
      const accepted = [await expand((await png(500, 300)).toString('base64')), await expand((await png(300, 500)).toString('base64')), await expand((await png(400, 400)).toString('base64'))];
      expect(accepted.map((r) => r.status)).toEqual([200, 200, 200]);
      refusedWith(await expand((await png(501, 300)).toString('base64')), /^image must be at most 500 px a side; it is 501x300$/);
      refusedWith(await expand((await png(300, 501)).toString('base64')), /^image must be at most 500 px a side; it is 300x501$/);
      refusedWith(await expand((await png(400, 401)).toString('base64')), /^image must be at most 160000 pixels \(width x height\); it is 400x401, 160400 pixels$/);
      refusedWith(await expand(HUGE.toString('base64')), /^image must be at most 500 px a side; it is 16000x16000$/);
      // the accepted ones run to the end: the worker holds the same rule
      for (const res of accepted) expect((await finishedExpand(res.body.data.task_id)).body.data.task_status).toBe('succeed');
    });

    it('caps the expanded image at 250,000 pixels: 500 x 500 made, 500 x 501 refused naming the ratios', async () => {
      const image = (await png(400, 400)).toString('base64');
      // 400 + round(0.125 x 400) x 2 = 500 on each side
      const exact = await expand(image, { up_expansion_ratio: 0.125, bottom_expansion_ratio: 0.125, left_expansion_ratio: 0.125, right_expansion_ratio: 0.125 });
      expect(exact.status).toBe(200);
      refusedWith(
        await expand(image, { up_expansion_ratio: 0.125, bottom_expansion_ratio: 0.1275, left_expansion_ratio: 0.125, right_expansion_ratio: 0.125 }),
        /^the expanded image must be at most 250000 pixels \(width x height\): the image is 400x400, and up_expansion_ratio, bottom_expansion_ratio, left_expansion_ratio and right_expansion_ratio make it 500x501, 250500 pixels/,
      );
      const done = await finishedExpand(exact.body.data.task_id);
      expect(done.body.data.task_status).toBe('succeed');
      const result = Buffer.from(await (await fetch(done.body.data.task_result.images[0].url)).arrayBuffer());
      expect(await sharp(result).metadata()).toEqual(expect.objectContaining({ width: 500, height: 500 }));
    });

    it('fails, saying so, an image whose header is whole but whose data does not decode (Base64 and by URL), not as an internal error after retries', async () => {
      const noise = await undecodablePng();
      // a JPEG cut in its scan: its header whole
      const full = await sharp(await png(400, 300)).jpeg({ quality: 95 }).toBuffer();
      const cut = full.subarray(0, Math.floor(full.length * 0.6));
      const tasks = [await expand(noise.toString('base64')), await expand(cut.toString('base64')), await expand(`${host.url}/noise.png`)];
      expect(tasks.map((r) => r.status)).toEqual([200, 200, 200]);
      const ended = await Promise.all(tasks.map((r) => finishedExpand(r.body.data.task_id)));
      expect(ended.map((r) => [r.body.data.task_status, r.body.data.task_status_msg])).toEqual([
        ['failed', expect.stringMatching(/^the image breaks a rule: image must be a whole PNG file; its image data could not be decoded \(.+\)$/)],
        ['failed', expect.stringMatching(/^the image breaks a rule: image must be a whole JPEG file; its image data could not be decoded \(.+\)$/)],
        ['failed', expect.stringMatching(/^the image at the URL breaks a rule: image must be a whole PNG file; its image data could not be decoded/)],
      ]);
      // ended at its first attempt: one step run, not the engine's retries
      for (const r of tasks) expect(await queryDb(t.db, 'SELECT attempts FROM tasks WHERE id = $1', [r.body.data.task_id])).toEqual([{ attempts: 1 }]);
    });

    it('fails an image URL over the bounds, or whose expansion is, when the task runs, with the reason', async () => {
      const huge = await expand(`${host.url}/huge.png`);
      const over = await expand(`${host.url}/square.png`, { up_expansion_ratio: 0.125, bottom_expansion_ratio: 0.1275, left_expansion_ratio: 0.125, right_expansion_ratio: 0.125 });
      const edge = await expand(`${host.url}/edge.png`);
      expect([huge.status, over.status, edge.status]).toEqual([200, 200, 200]);
      const [a, b, c] = await Promise.all([huge, over, edge].map((r) => finishedExpand(r.body.data.task_id)));
      expect([a.body.data.task_status, a.body.data.task_status_msg]).toEqual(['failed', 'the image at the URL breaks a rule: image must be at most 500 px a side; it is 16000x16000']);
      expect([b.body.data.task_status, b.body.data.task_status_msg]).toEqual(['failed', expect.stringMatching(/^the image at the URL breaks a rule: the expanded image must be at most 250000 pixels .* make it 500x501, 250500 pixels/)]);
      expect(c.body.data.task_status).toBe('succeed');
    });
  });

  describe('keyframes', () => {
    it("fails a Luma keyframe URL over the bounds with a reason naming keyframes.frameN.url; renders one at the bound", async () => {
      const huge = await api(t.url, 'POST', GEN, { key, body: { prompt: 'x', keyframes: { frame0: { type: 'image', url: `${host.url}/huge.png` } } } });
      const tall = await api(t.url, 'POST', GEN, { key, body: { prompt: 'x', keyframes: { frame1: { type: 'image', url: `${host.url}/tall.png` } } } });
      const edge = await api(t.url, 'POST', GEN, { key, body: { prompt: 'x', keyframes: { frame0: { type: 'image', url: `${host.url}/edge.png` } } } });
      expect([huge.status, tall.status, edge.status]).toEqual([201, 201, 201]);
      const [a, b, c] = await Promise.all([huge, tall, edge].map((r) => finishedGeneration(r.body.id)));
      expect([a.body.state, a.body.failure_reason]).toEqual(['failed', 'keyframes.frame0.url must be at most 500 px a side; it is 16000x16000']);
      expect([b.body.state, b.body.failure_reason]).toEqual(['failed', 'keyframes.frame1.url must be at most 160000 pixels (width x height); it is 400x401, 160400 pixels']);
      expect(c.body.state).toBe('completed');
    }, 90_000);

    it("refuses Kling's Base64 image and image_tail over the bounds (or of no bytes) with 400 naming the field; takes them at the bound", async () => {
      const i2v = (body: Record<string, unknown>) => api(t.url, 'POST', I2V, { key, body: { prompt: 'x', ...body } });
      const edge = (await png(500, 300)).toString('base64');
      refusedWith(await i2v({ image: (await png(501, 300)).toString('base64') }), /^image must be at most 500 px a side; it is 501x300$/);
      refusedWith(await i2v({ image: edge, image_tail: HUGE.toString('base64') }), /^image_tail must be at most 500 px a side; it is 16000x16000$/);
      refusedWith(await i2v({ image: (await png(400, 401)).toString('base64') }), /^image must be at most 160000 pixels/);
      // the fuzzer's 500: Base64 that decodes to no bytes
      refusedWith(await i2v({ image: '0' }), /^image must be a PNG, JPEG or WebP image; it has no bytes$/);
      expect((await i2v({ image: edge, image_tail: (await png(400, 400)).toString('base64') })).status).toBe(200);
    });

    it("refuses the OpenAI door's input_reference file over the bounds (or empty) with 400 and param input_reference; takes one at the bound", async () => {
      const huge = await openAiCreate(t.url, key, HUGE);
      expect([huge.status, huge.body.error]).toEqual([400, expect.objectContaining({ param: 'input_reference', message: 'input_reference must be at most 500 px a side; it is 16000x16000' })]);
      const tall = await openAiCreate(t.url, key, await png(400, 401));
      expect([tall.status, tall.body.error.param, tall.body.error.message]).toEqual([400, 'input_reference', expect.stringMatching(/^input_reference must be at most 160000 pixels/)]);
      const empty = await openAiCreate(t.url, key, Buffer.alloc(0));
      expect([empty.status, empty.body.error.param, empty.body.error.message]).toEqual([400, 'input_reference', 'input_reference must be a PNG, JPEG or WebP image; it has no bytes']);
      const edge = await openAiCreate(t.url, key, await png(500, 300));
      expect([edge.status, edge.body.status]).toEqual([200, 'queued']);
    });
  });
});

/** VmRSS of a process, in bytes (Linux). */
function rssOf(pid: number): number {
  const kb = /^VmRSS:\s+(\d+) kB$/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1];
  return Number(kb) * 1024;
}

describe('the worker under 10 images of 16000 x 16000 px at once (default bounds)', () => {
  it("keeps its RSS within 300 MB of its idle figure until every request and task has ended", async () => {
    const db = await createTestDatabase({ migrated: true });
    const port = await freePort();
    const admin = `admin-${randomBytes(16).toString('hex')}`;
    const dataDir = await mkdtemp(path.join(tmpdir(), 'mgw-bounds-'));
    const host = await imageHost({ '/huge.png': HUGE });
    // one process with the API and the workers (ROLE=all, the default), as `npm start` runs it
    const app = Child.start('dist/main.js', [], { DATABASE_URL: db.url, PORT: String(port), ADMIN_API_KEY: admin, ALLOW_PRIVATE_URLS: 'true', DATA_DIR: dataDir, LOG_LEVEL: 'info' });
    const base = `http://127.0.0.1:${port}`;
    try {
      await app.waitFor(/listening/);
      const key = (await api(base, 'POST', '/admin/keys', { key: admin, body: { owner: 'rss-team', name: 'test' } })).body.key as string;
      // warm: one small expand and one keyframe run to their end, so sharp, ffmpeg and the pools are loaded
      const small = (await png(320, 320)).toString('base64');
      const warmExpand = (await api(base, 'POST', EXPAND, { key, body: { image: small, ...NO_RATIOS } })).body.data.task_id as string;
      await pollUntil(() => api(base, 'GET', `${EXPAND}/${warmExpand}`, { key }), (r) => r.body.data?.task_status === 'succeed', { timeoutMs: 60_000, what: 'the warm-up expand' });
      const idle = rssOf(app.process.pid!);

      let peak = idle;
      const sampler = setInterval(() => (peak = Math.max(peak, rssOf(app.process.pid!))), 10);
      try {
        const image = HUGE.toString('base64');
        const ratios = { up_expansion_ratio: 0.2, bottom_expansion_ratio: 0.2, left_expansion_ratio: 0.2, right_expansion_ratio: 0.2, n: 9 };
        const requests = [
          ...[1, 2, 3].map(() => api(base, 'POST', EXPAND, { key, body: { image, ...ratios } })),
          ...[1, 2, 3].map(() => api(base, 'POST', EXPAND, { key, body: { image: `${host.url}/huge.png`, ...ratios } })),
          ...[1, 2].map(() => api(base, 'POST', GEN, { key, body: { prompt: 'x', keyframes: { frame0: { type: 'image', url: `${host.url}/huge.png` } } } })),
          ...[1, 2].map(() => openAiCreate(base, key, HUGE)),
        ];
        const answers = await Promise.all(requests);
        expect(answers.map((a) => a.status)).toEqual([400, 400, 400, 200, 200, 200, 201, 201, 400, 400]);
        const ends = await Promise.all([
          ...answers.slice(3, 6).map((a) => pollUntil(() => api(base, 'GET', `${EXPAND}/${a.body.data.task_id}`, { key }), (r) => ['succeed', 'failed'].includes(r.body.data?.task_status), { timeoutMs: 60_000, what: 'an expand to end' }).then((r) => r.body.data.task_status_msg)),
          ...answers.slice(6, 8).map((a) => pollUntil(() => api(base, 'GET', `${GEN}/${a.body.id}`, { key }), (r) => ['completed', 'failed'].includes(r.body.state), { timeoutMs: 60_000, what: 'a generation to end' }).then((r) => r.body.failure_reason)),
        ]);
        expect(ends).toEqual([
          ...[1, 2, 3].map(() => 'the image at the URL breaks a rule: image must be at most 8192 px a side; it is 16000x16000'),
          ...[1, 2].map(() => 'keyframes.frame0.url must be at most 8192 px a side; it is 16000x16000'),
        ]);
      } finally {
        clearInterval(sampler);
      }
      process.stderr.write(`image-bounds: RSS idle ${Math.round(idle / MB)} MB, peak ${Math.round(peak / MB)} MB\n`);
      expect(Math.round((peak - idle) / MB)).toBeLessThan(300);
    } finally {
      await app.stop('SIGTERM').catch(() => app.stop('SIGKILL'));
      await host.close();
      await db.drop();
      await rm(dataDir, { recursive: true, force: true });
    }
  }, 180_000);
});
