import { randomUUID } from 'node:crypto';
import { gzipSync } from 'node:zlib';
import pg from 'pg';
import sharp from 'sharp';
import { EXAMPLE_IMAGE_BASE64 } from '../../src/doors/kling/dto/example-image.js';
import { GIF_1X1, jpeg, padPng, png } from '../support/images.js';
import { api, startTestApp, type TestApp } from '../support/test-app.js';

const PATH = '/video-a/v1/images/editing/expand';
const MB = 1024 * 1024;
const RATIOS = { up_expansion_ratio: 0.25, bottom_expansion_ratio: 0.25, left_expansion_ratio: 0.25, right_expansion_ratio: 0.25 };

describe('POST /video-a/v1/images/editing/expand', () => {
  let t: TestApp;
  let key: string;
  let otherKey: string;
  let sameOwnerKey: string;
  let image300: string;
  let db: pg.Client;

  beforeAll(async () => {
    t = await startTestApp({ ROLE: 'api' }); // no worker: stored rows are read as the request left them
    key = await t.createKey('team-a');
    sameOwnerKey = await t.createKey('team-a');
    otherKey = await t.createKey('team-b');
    image300 = (await png(300, 300)).toString('base64');
    db = new pg.Client({ connectionString: t.db.url });
    await db.connect();
  });
  afterAll(async () => {
    await db.end();
    await t.close();
  });

  const expand = (body: Record<string, unknown>, k = key) => api(t.url, 'POST', PATH, { key: k, body });
  const ok = async (body: Record<string, unknown>) => {
    const res = await expand(body);
    expect([res.status, res.body.message]).toEqual([200, 'SUCCEED']);
    return res;
  };
  const refused = async (body: Record<string, unknown>, pattern: RegExp) => {
    const res = await expand(body);
    expect([res.status, res.body.code]).toEqual([400, 1201]);
    expect(res.body.message).toMatch(pattern);
    return res;
  };

  describe('the reply', () => {
    it('is the Kling envelope with the task record, status submitted, times in Unix ms, and the image echoed', async () => {
      const before = Date.now();
      const res = await expand({ image: EXAMPLE_IMAGE_BASE64, ...RATIOS, prompt: 'meadow', n: '2', external_task_id: 'reply-1', callback_url: 'https://example.com/hook' });
      expect(res.status).toBe(200);
      expect(res.body).toEqual({
        code: 0,
        message: 'SUCCEED',
        request_id: res.headers.get('x-request-id'),
        data: {
          task_id: expect.stringMatching(/^[0-9a-f-]{36}$/),
          task_status: 'submitted',
          task_info: { external_task_id: 'reply-1' },
          created_at: expect.any(Number),
          updated_at: expect.any(Number),
        },
        image: EXAMPLE_IMAGE_BASE64,
      });
      expect(Number.isInteger(res.body.data.created_at)).toBe(true);
      expect(res.body.data.created_at).toBeGreaterThanOrEqual(before);
      expect(res.body.data.updated_at).toBe(res.body.data.created_at);
    });

    it('stores the decoded image and every parameter for the worker, under the owner', async () => {
      const res = await ok({ image: image300, up_expansion_ratio: 0.1, down_expansion_ratio: 0.2, left_expansion_ratio: 0.3, right_expansion_ratio: 0.4, prompt: 'p', n: 3, callback_url: 'https://example.com/h' });
      const { rows } = await db.query('SELECT t.*, i.bytes FROM tasks t LEFT JOIN expand_inputs i ON i.task_id = t.id WHERE t.id = $1', [res.body.data.task_id]);
      expect(rows[0]).toEqual(
        expect.objectContaining({
          kind: 'expand',
          owner: 'team-a',
          state: 'queued',
          params: { image_format: 'png', image_width: 300, image_height: 300, up_ratio: 0.1, bottom_ratio: 0.2, left_ratio: 0.3, right_ratio: 0.4, prompt: 'p', n: 3, watermark: false },
          callback_url: 'https://example.com/h',
          external_id: null,
        }),
      );
      expect(Buffer.compare(rows[0].bytes, Buffer.from(image300, 'base64'))).toBe(0);
    });

    it('takes an image URL, checking its form only, and stores it', async () => {
      const res = await ok({ image: 'https://example.com/photo.jpg', ...RATIOS });
      expect(res.body.image).toBe('https://example.com/photo.jpg');
      const { rows } = await db.query("SELECT params->>'image_url' AS image_url, (SELECT count(*) FROM expand_inputs WHERE task_id = $1)::int AS inputs FROM tasks WHERE id = $1", [res.body.data.task_id]);
      expect(rows[0]).toEqual({ image_url: 'https://example.com/photo.jpg', inputs: 0 });
      await refused({ image: 'ftp://example.com/photo.jpg', ...RATIOS }, /image must be an http or https URL/);
    });

    it('gives task_info.external_task_id null when none is given, and n defaults to 1', async () => {
      const res = await ok({ image: image300, ...RATIOS });
      expect(res.body.data.task_info).toEqual({ external_task_id: null });
      const { rows } = await db.query("SELECT (params->'n')::int AS n FROM tasks WHERE id = $1", [res.body.data.task_id]);
      expect(rows[0].n).toBe(1);
    });
  });

  describe('the image', () => {
    it('refuses a data: URI, telling the caller to send bare Base64', async () => {
      await refused({ image: `data:image/png;base64,${image300}`, ...RATIOS }, /without a "data:" prefix: remove "data:image\/png;base64,"/);
    });

    it('reads the format from the bytes: JPEG and PNG pass, GIF and non-images do not', async () => {
      await ok({ image: (await jpeg(400, 300)).toString('base64'), ...RATIOS });
      await refused({ image: GIF_1X1.toString('base64'), ...RATIOS }, /image must be a JPEG or PNG file; its bytes say: GIF/);
      await refused({ image: Buffer.from('hello world, not an image').toString('base64'), ...RATIOS }, /JPEG or PNG/);
      await refused({ image: 'not base64 at all!', ...RATIOS }, /Base64/);
      const truncated = (await png(400, 400)).subarray(0, 20);
      await refused({ image: truncated.toString('base64'), ...RATIOS }, /truncated or corrupt/);
    });

    it('accepts Base64 wrapped over lines and the URL-safe alphabet', async () => {
      const wrapped = image300.replace(/(.{76})/g, '$1\n');
      await ok({ image: wrapped, ...RATIOS });
      await ok({ image: image300.replace(/\+/g, '-').replace(/\//g, '_'), ...RATIOS });
    });

    it('needs at least 300 px on each side: 300 passes, 299 does not', async () => {
      await ok({ image: (await png(300, 300)).toString('base64'), ...RATIOS });
      await refused({ image: (await png(299, 400)).toString('base64'), ...RATIOS }, /at least 300x300 px; it is 299x400/);
      await refused({ image: (await png(400, 299)).toString('base64'), ...RATIOS }, /at least 300x300 px; it is 400x299/);
    });

    it('needs an aspect ratio from 1:2.5 to 2.5:1: both ends pass, just beyond does not', async () => {
      await ok({ image: (await png(750, 300)).toString('base64'), ...RATIOS });
      await ok({ image: (await png(300, 750)).toString('base64'), ...RATIOS });
      await refused({ image: (await png(751, 300)).toString('base64'), ...RATIOS }, /aspect ratio must be between 1:2.5 and 2.5:1; it is 751x300/);
      await refused({ image: (await png(300, 751)).toString('base64'), ...RATIOS }, /it is 300x751/);
    });

    it('takes a file of exactly 10 MB and refuses one byte more, naming the 10 MB limit', async () => {
      const base = await png(300, 300);
      await ok({ image: padPng(base, 10 * MB).toString('base64'), ...RATIOS });
      const res = await refused({ image: padPng(base, 10 * MB + 1).toString('base64'), ...RATIOS }, /image must be at most 10 MB/);
      expect(res.body.message).toContain('10485761 bytes');
    });

    it('takes a 9.5 MB PNG and refuses a 10.5 MB one (about 14 MB of JSON): a 400, not a 413', async () => {
      const base = await png(600, 400);
      const big = padPng(base, Math.round(9.5 * MB));
      const res = await ok({ image: big.toString('base64'), ...RATIOS });
      expect(res.body.image).toHaveLength(big.toString('base64').length);
      await refused({ image: padPng(base, Math.round(10.5 * MB)).toString('base64'), ...RATIOS }, /at most 10 MB/);
    });

    it('reads a large image while it streams in, as any JSON encoder writes it (\\/, \\u002B, gzip), and echoes it back whole', async () => {
      const big = padPng(await png(600, 400), 3 * MB);
      const base64 = big.toString('base64');
      // PHP escapes "/", .NET escapes "+": the same image either way
      for (const spelled of [base64.replace(/\//g, '\\/'), base64.replace(/\+/g, '\\u002B')]) {
        const text = `{"image":"${spelled}","up_expansion_ratio":0.1,"bottom_expansion_ratio":0.1,"left_expansion_ratio":0,"right_expansion_ratio":0}`;
        const res = await api(t.url, 'POST', PATH, { key, rawBody: text, headers: { 'content-type': 'application/json' } });
        expect([res.status, res.body.code, res.body.image]).toEqual([200, 0, base64]);
        expect(res.headers.get('content-length')).toBe(String(Buffer.byteLength(res.text)));
        expect(JSON.parse(res.text)).toEqual(res.body);
      }
      const gzipped = gzipSync(JSON.stringify({ image: base64, ...RATIOS }));
      const zipped = await api(t.url, 'POST', PATH, { key, rawBody: gzipped, headers: { 'content-type': 'application/json', 'content-encoding': 'gzip' } });
      expect([zipped.status, zipped.body.image]).toEqual([200, base64]);
      const stored = await api(t.url, 'GET', `${PATH}/${zipped.body.data.task_id}`, { key });
      expect(stored.body.data.task_status).toMatch(/submitted|processing|succeed/);
      // and what is not Base64 is still named
      const broken = await refused({ image: `${base64.slice(0, 500_000)}%${base64.slice(500_000)}`, ...RATIOS }, /URL or Base64/);
      expect(broken.status).toBe(400);
    });

    it('answers 413 with the envelope for a body over the route limit (20 MB)', async () => {
      const res = await api(t.url, 'POST', PATH, { key, body: { image: 'A'.repeat(21 * MB), ...RATIOS } });
      expect(res.status).toBe(413);
      expect(res.body).toEqual({ code: 1205, message: expect.stringMatching(/20 MB/), request_id: expect.any(String) });
    });
  });

  describe('the ratios', () => {
    it('needs all four, each a number in [0, 2]: 0 and 2 pass, just beyond does not', async () => {
      await ok({ image: image300, up_expansion_ratio: 0, bottom_expansion_ratio: 0, left_expansion_ratio: 0, right_expansion_ratio: 0 });
      await ok({ image: image300, up_expansion_ratio: 0, bottom_expansion_ratio: 0, left_expansion_ratio: 2, right_expansion_ratio: 0 });
      await refused({ image: image300, ...RATIOS, left_expansion_ratio: 2.01 }, /^left_expansion_ratio must be between 0 and 2 \(got 2.01\)$/);
      await refused({ image: image300, ...RATIOS, up_expansion_ratio: -0.01 }, /^up_expansion_ratio must be between 0 and 2/);
      await refused({ image: image300, ...RATIOS, right_expansion_ratio: '0.5' }, /right_expansion_ratio must be a number/);
      const { up_expansion_ratio: _, ...withoutUp } = RATIOS;
      await refused({ image: image300, ...withoutUp }, /^up_expansion_ratio is required$/);
    });

    it('takes down_expansion_ratio as another name for bottom_expansion_ratio, and refuses two different values', async () => {
      const { bottom_expansion_ratio: _, ...rest } = RATIOS;
      const res = await ok({ image: image300, ...rest, down_expansion_ratio: 0.5 });
      const { rows } = await db.query("SELECT (params->'bottom_ratio')::float8 AS bottom_ratio FROM tasks WHERE id = $1", [res.body.data.task_id]);
      expect(rows[0].bottom_ratio).toBe(0.5);
      await ok({ image: image300, ...RATIOS, down_expansion_ratio: 0.25 });
      await refused({ image: image300, ...RATIOS, down_expansion_ratio: 0.3 }, /bottom_expansion_ratio and down_expansion_ratio name the same ratio but differ/);
      await refused({ image: image300, ...rest }, /bottom_expansion_ratio is required \(down_expansion_ratio is accepted/);
      await refused({ image: image300, ...rest, down_expansion_ratio: 3 }, /down_expansion_ratio must be between 0 and 2/);
    });

    it('allows a new area of exactly 3 times the original and refuses 3.01', async () => {
      await ok({ image: image300, up_expansion_ratio: 0.5, bottom_expansion_ratio: 0.5, left_expansion_ratio: 0.25, right_expansion_ratio: 0.25 }); // 2 x 1.5
      await ok({ image: image300, up_expansion_ratio: 0.1, bottom_expansion_ratio: 0.2, left_expansion_ratio: 0.7, right_expansion_ratio: (3 / 1.3) - 1.7 }); // 3 up to float rounding
      await refused({ image: image300, up_expansion_ratio: 1, bottom_expansion_ratio: 0.005, left_expansion_ratio: 0.25, right_expansion_ratio: 0.25 }, /at most 3 times the original area: .* is 3\.0075/);
      await refused({ image: image300, up_expansion_ratio: 2, bottom_expansion_ratio: 2, left_expansion_ratio: 2, right_expansion_ratio: 2 }, /is 25\.0000/);
    });
  });

  describe('the other fields', () => {
    it('takes a prompt of 2500 characters and refuses 2501', async () => {
      await ok({ image: image300, ...RATIOS, prompt: 'x'.repeat(2500) });
      await ok({ image: image300, ...RATIOS, prompt: '猫'.repeat(2500) });
      await refused({ image: image300, ...RATIOS, prompt: 'x'.repeat(2501) }, /prompt must be at most 2500 characters long \(got 2501\)/);
      await refused({ image: image300, ...RATIOS, prompt: 42 }, /prompt must be a string/);
    });

    it.each([['1', 1], ['9', 9], [1, 1], [9, 9], ['5', 5], [null, 1], ['', 1]])('takes n = %p (as %p; null and "", like absent, mean 1)', async (n, stored) => {
      const res = await ok({ image: image300, ...RATIOS, n });
      const { rows } = await db.query("SELECT (params->'n')::int AS n FROM tasks WHERE id = $1", [res.body.data.task_id]);
      expect(rows[0].n).toBe(stored);
    });

    it.each([['0'], ['10'], ['two'], [2.5], [0], [10], [' 1'], ['01'], [true], [['1']], [{}]])('refuses n = %p', async (n) => {
      await refused({ image: image300, ...RATIOS, n }, /^n must be a whole number from 1 to 9/);
    });

    it('takes an http(s) callback_url only', async () => {
      await ok({ image: image300, ...RATIOS, callback_url: 'http://hooks.example.com/x?y=1' });
      await refused({ image: image300, ...RATIOS, callback_url: 'javascript:alert(1)' }, /callback_url must be an http or https URL/);
      await refused({ image: image300, ...RATIOS, callback_url: 'not a url' }, /callback_url must be an http or https URL/);
    });

    it('names every fault of a request in one message', async () => {
      const res = await refused({ image: 'data:image/png;base64,xx', up_expansion_ratio: 3, left_expansion_ratio: 'a', n: '10', prompt: 'x'.repeat(2501), callback_url: 'ftp://x' }, /image must be bare Base64/);
      for (const field of ['up_expansion_ratio', 'bottom_expansion_ratio', 'left_expansion_ratio', 'right_expansion_ratio', 'prompt', 'n must', 'callback_url']) {
        expect(res.body.message).toContain(field);
      }
    });

    it('names the missing fields of an empty body', async () => {
      const res = await refused({}, /image is required/);
      expect(res.body.message).toMatch(/up_expansion_ratio is required/);
    });
  });

  describe('external_task_id', () => {
    it('is unique per owner: a second use answers 409, even from another key of the same owner', async () => {
      await ok({ image: image300, ...RATIOS, external_task_id: 'dup-1' });
      const again = await expand({ image: image300, ...RATIOS, external_task_id: 'dup-1' }, sameOwnerKey);
      expect(again.status).toBe(409);
      expect(again.body).toEqual({ code: 1204, message: 'external_task_id "dup-1" is already used by another of your tasks', request_id: expect.any(String) });
    });

    it("is never the task_id of another of the owner's tasks (the record route reads an id first): 409; another UUID is taken", async () => {
      const first = await ok({ image: image300, ...RATIOS });
      const taken = await expand({ image: image300, ...RATIOS, external_task_id: first.body.data.task_id });
      expect([taken.status, taken.body.code, taken.body.message]).toEqual([409, 1204, `external_task_id "${first.body.data.task_id}" is the task_id of another of your tasks`]);
      const fresh = randomUUID();
      const second = await ok({ image: image300, ...RATIOS, external_task_id: fresh });
      expect((await api(t.url, 'GET', `${PATH}/${fresh}`, { key })).body.data.task_id).toBe(second.body.data.task_id);
    });

    it('may be reused by another owner, and each task belongs to its owner', async () => {
      const mine = await ok({ image: image300, ...RATIOS, external_task_id: 'shared-1' });
      const theirs = await expand({ image: image300, ...RATIOS, external_task_id: 'shared-1' }, otherKey);
      expect(theirs.status).toBe(200);
      const { rows } = await db.query('SELECT id, owner FROM tasks WHERE external_id = $1 ORDER BY owner', ['shared-1']);
      expect(rows).toEqual([
        { id: mine.body.data.task_id, owner: 'team-a' },
        { id: theirs.body.data.task_id, owner: 'team-b' },
      ]);
    });

    it('holds when eight identical requests arrive at once: one 200, seven 409', async () => {
      const results = await Promise.all(Array.from({ length: 8 }, () => expand({ image: image300, ...RATIOS, external_task_id: 'race-1' })));
      expect(results.map((r) => r.status).sort()).toEqual([200, 409, 409, 409, 409, 409, 409, 409]);
      const { rows } = await db.query("SELECT count(*)::int AS n FROM tasks WHERE external_id = 'race-1'");
      expect(rows[0].n).toBe(1);
    });

    it('must be at most 256 characters; an empty one means none, as in Kling', async () => {
      await refused({ image: image300, ...RATIOS, external_task_id: 'x'.repeat(257) }, /external_task_id must be 1 to 256 characters/);
      await ok({ image: image300, ...RATIOS, external_task_id: 'y'.repeat(256) });
      // twice "": two tasks, neither with an external id (no 409)
      for (let i = 0; i < 2; i++) expect((await ok({ image: image300, ...RATIOS, external_task_id: '' })).body.data.task_info).toEqual({ external_task_id: null });
    });
  });

  it('answers 401 without a key, before reading the body', async () => {
    const res = await api(t.url, 'POST', PATH, { body: { image: image300, ...RATIOS } });
    expect([res.status, res.body.code]).toEqual([401, 1001]);
  });

  it('decodes the example image of the Swagger document into a valid 320x300 PNG', async () => {
    const meta = await sharp(Buffer.from(EXAMPLE_IMAGE_BASE64, 'base64')).metadata();
    expect([meta.format, meta.width, meta.height]).toEqual(['png', 320, 300]);
  });
});
