import { Readable } from 'node:stream';
import { loadConfig } from '../../src/infra/config/app-config.js';
import { collect } from '../../src/infra/storage/storage.js';
import { StorageService } from '../../src/infra/storage/storage.service.js';
import { MediaService } from '../../src/modules/media/media.service.js';
import { wav } from '../support/media.js';
import { png } from '../support/images.js';
import { startServer, type TestServer } from '../support/http-server.js';
import { Child } from '../support/child-process.js';
import { freePort } from '../support/free-port.js';
import { pollUntil } from '../support/poll.js';
import { startS3, type TestS3 } from '../support/s3-server.js';
import { api, createTestDatabase, queryDb, startTestApp, type TestApp } from '../support/test-app.js';

const EXPAND = '/video-a/v1/images/editing/expand';
const GEN = '/video-b/v1/generations';

let s3: TestS3;
let t: TestApp;
let files: TestServer;
let key: string;
const tone = wav(1.5);

beforeAll(async () => {
  s3 = await startS3();
  files = await startServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'audio/wav' }).end(tone);
  });
  t = await startTestApp({ ...s3.env, ALLOW_PRIVATE_URLS: 'true' });
  key = await t.createKey();
});
afterAll(async () => {
  await t?.close();
  await files?.close();
  await s3?.close();
});

describe.each(['local', 'postgres', 's3'])('the storage contract, %s driver', (name) => {
  const bytes = Buffer.from(Array.from({ length: 70_000 }, (_, i) => i % 251));
  const driver = () => t.app.get(StorageService).driver(name);

  it('stores a stream, reads it whole and by range, and deletes it', async () => {
    const written = await driver().put(`contract/${name}.bin`, Readable.from([bytes.subarray(0, 30_000), bytes.subarray(30_000)]), 'application/octet-stream');
    expect(written).toBe(bytes.length);
    expect((await collect((await driver().open(`contract/${name}.bin`))!)).equals(bytes)).toBe(true);
    // (not bytes=0-0: s3rver answers that with the whole object, unlike S3 and MinIO)
    for (const [start, end] of [[0, 1], [7, 7], [5, 9], [69_990, 69_999]]) {
      expect((await collect((await driver().open(`contract/${name}.bin`, { start, end }))!)).equals(bytes.subarray(start, end + 1))).toBe(true);
    }
    await driver().put(`contract/${name}.bin`, Buffer.from('replaced'), 'text/plain');
    expect((await collect((await driver().open(`contract/${name}.bin`))!)).toString()).toBe('replaced');
    await driver().delete(`contract/${name}.bin`);
    expect(await driver().open(`contract/${name}.bin`)).toBeNull();
    await driver().delete(`contract/${name}.bin`); // deleting what is gone is not an error
    expect(await driver().open('contract/never-written.bin')).toBeNull();
  });

  it(name === 's3' ? 'presigns a short-lived URL that serves the object, ranges included' : 'has no presigned URLs (the gateway proxies)', async () => {
    if (name !== 's3') {
      expect(driver().presign).toBeUndefined();
      return;
    }
    await driver().put('contract/signed.bin', bytes, 'application/octet-stream');
    const url = await driver().presign!('contract/signed.bin', 60, { contentType: 'video/mp4', disposition: 'inline; filename="x.mp4"' });
    expect(url.startsWith(`${s3.url}/${s3.bucket}/contract/signed.bin?`)).toBe(true);
    const whole = await fetch(url);
    expect([whole.status, whole.headers.get('content-type'), whole.headers.get('content-disposition')]).toEqual([200, 'video/mp4', 'inline; filename="x.mp4"']);
    expect(Buffer.from(await whole.arrayBuffer()).equals(bytes)).toBe(true);
    const part = await fetch(url, { headers: { range: 'bytes=10-19' } });
    expect(part.status).toBe(206);
    expect(Buffer.from(await part.arrayBuffer()).equals(bytes.subarray(10, 20))).toBe(true);
    expect(new URL(url).searchParams.get('X-Amz-Expires')).toBe('60');
  });
});

describe('STORAGE_DRIVER=s3', () => {
  const get = (path: string) => api(t.url, 'GET', path, { key });
  /** The keys a task's media rows name, in the bucket's order. */
  const storageKeys = async (id: string) =>
    (await queryDb<{ storage_key: string }>(t.db, 'SELECT storage_key FROM media WHERE task_id = $1 ORDER BY storage_key COLLATE "C"', [id])).map((r) => r.storage_key);

  it('keeps an expand task’s input and results in the bucket, none in PostgreSQL', async () => {
    const created = await api(t.url, 'POST', EXPAND, { key, body: { image: (await png(320, 320)).toString('base64'), up_expansion_ratio: 0.1, bottom_expansion_ratio: 0.1, left_expansion_ratio: 0.1, right_expansion_ratio: 0.1, n: 2 } });
    expect(created.status).toBe(200);
    const id = created.body.data.task_id as string;
    const done = await pollUntil(() => get(`${EXPAND}/${id}`), (r) => ['succeed', 'failed'].includes(r.body.data.task_status), { what: 'the expand task' });
    expect(done.body.data.task_status).toBe('succeed');
    // a result's keys carry its claim (two claims of a task never share one); the input's is plain
    const keys = await storageKeys(id);
    expect(keys).toEqual([`${id}/image-0-a1.png`, `${id}/image-1-a1.png`, `${id}/input-0.png`]);
    expect(await s3.keys(`${id}/`)).toEqual(keys);
    expect(await queryDb(t.db, 'SELECT count(*)::int AS n FROM expand_inputs WHERE task_id = $1', [id])).toEqual([{ n: 0 }]);
    expect(await queryDb(t.db, 'SELECT count(*)::int AS n FROM media_blobs')).toEqual([{ n: 0 }]);
    expect(await queryDb(t.db, 'SELECT DISTINCT driver FROM media WHERE task_id = $1', [id])).toEqual([{ driver: 's3' }]);
    const image = await fetch(done.body.data.task_result.images[0].url);
    // read to its end: an answer left unread holds its connection open, and the app's close waits for it
    const bytes = Buffer.from(await image.arrayBuffer());
    expect([image.status, image.headers.get('content-type'), bytes.subarray(1, 4).toString()]).toEqual([200, 'image/png', 'PNG']);
  });

  it('serves a video as a CDN would: Range 206, ETag 304, 416 past the end, and deleting the generation deletes its objects', async () => {
    const created = await api(t.url, 'POST', GEN, { key, body: { prompt: 'a lighthouse at dusk', duration: '5s' } });
    expect(created.status).toBe(201);
    const id = created.body.id as string;
    const done = await pollUntil(() => get(`${GEN}/${id}`), (r) => ['completed', 'failed'].includes(r.body.state), { timeoutMs: 60_000, what: 'the generation' });
    expect(done.body.state).toBe('completed');
    const keys = await storageKeys(id);
    expect(keys).toEqual([`${id}/thumbnail-0-a1.jpg`, `${id}/video-0-a1.mp4`]);
    expect(await s3.keys(`${id}/`)).toEqual(keys);

    const link = done.body.assets.video as string;
    const whole = await fetch(link);
    const video = Buffer.from(await whole.arrayBuffer());
    expect(whole.status).toBe(200);
    expect(whole.headers.get('content-length')).toBe(String(video.length));
    expect(whole.headers.get('accept-ranges')).toBe('bytes');
    expect(whole.headers.get('content-disposition')).toBe(`inline; filename="${id}-video-1.mp4"`);
    expect(whole.headers.get('cache-control')).toMatch(/^private, max-age=\d+$/);
    const etag = whole.headers.get('etag')!;

    const part = await fetch(link, { headers: { range: 'bytes=100-1123' } });
    expect([part.status, part.headers.get('content-range'), part.headers.get('content-length')]).toEqual([206, `bytes 100-1123/${video.length}`, '1024']);
    expect(Buffer.from(await part.arrayBuffer()).equals(video.subarray(100, 1124))).toBe(true);
    const tail = await fetch(link, { headers: { range: 'bytes=-10' } });
    expect([tail.status, Buffer.from(await tail.arrayBuffer()).equals(video.subarray(video.length - 10))]).toEqual([206, true]);
    const past = await fetch(link, { headers: { range: `bytes=${video.length}-` } });
    expect([past.status, past.headers.get('content-range'), ((await past.json()) as { code: number }).code]).toEqual([416, `bytes */${video.length}`, 1208]);
    const cached = await fetch(link, { headers: { 'if-none-match': etag } });
    expect([cached.status, cached.headers.get('etag'), (await cached.arrayBuffer()).byteLength]).toEqual([304, etag, 0]);
    const stale = await fetch(link, { headers: { 'if-none-match': '"something-else"' } });
    expect(stale.status).toBe(200);
    await stale.arrayBuffer();

    expect((await api(t.url, 'DELETE', `${GEN}/${id}`, { key })).status).toBe(204);
    expect(await s3.keys(`${id}/`)).toEqual([]);
    const gone = await fetch(link);
    await gone.arrayBuffer(); // read: an unread body holds its connection, and the app's close waits for it
    expect(gone.status).toBe(404);
  }, 90_000);

  it('keeps an uploaded clip as an object, with a signed link to it; retention deletes it', async () => {
    const created = await api(t.url, 'POST', '/music-a/uploads/audio-url', { key, body: { url: `${files.url}/tone.wav` } });
    const id = created.body.data as string;
    const done = await pollUntil(() => get(`/music-a/uploads/${id}`), (r) => r.body.data.status !== 'pending', { what: 'the upload' });
    expect(done.body.data.status).toBe('ready');
    const keys = await storageKeys(id);
    expect(keys).toEqual([`${id}/clip-0-a1.wav`]);
    expect(await s3.keys(`${id}/`)).toEqual(keys);
    const clip = await fetch(done.body.data.clip_url);
    expect([clip.status, clip.headers.get('content-type'), Buffer.from(await clip.arrayBuffer()).equals(tone)]).toEqual([200, 'audio/wav', true]);

    await t.app.get(MediaService).runRetention(new Date(Date.now() + (t.config.resultRetentionDays + 1) * 24 * 3600 * 1000));
    expect(await s3.keys(`${id}/`)).toEqual([]);
    expect((await get(`/music-a/uploads/${id}`)).body.data.clip_url).toBeNull();
  });

  it('with MEDIA_DELIVERY=redirect, answers 302 to a presigned URL of the bucket', async () => {
    const other = await startTestApp({ ...s3.env, MEDIA_DELIVERY: 'redirect', MEDIA_REDIRECT_TTL_S: '60' }, { db: t.db });
    try {
      const created = await api(t.url, 'POST', EXPAND, { key, body: { image: (await png(320, 320)).toString('base64'), up_expansion_ratio: 0, bottom_expansion_ratio: 0, left_expansion_ratio: 0.5, right_expansion_ratio: 0 } });
      const id = created.body.data.task_id as string;
      const done = await pollUntil(() => get(`${EXPAND}/${id}`), (r) => r.body.data.task_status === 'succeed', { what: 'the expand task' });
      const link = new URL(done.body.data.task_result.images[0].url);
      const answer = await fetch(`${other.url}${link.pathname}${link.search}`, { redirect: 'manual' });
      expect(answer.status).toBe(302);
      await answer.arrayBuffer();
      const location = answer.headers.get('location')!;
      expect(location.startsWith(`${s3.url}/${s3.bucket}/${(await storageKeys(id))[0]}?`)).toBe(true);
      expect(new URL(location).searchParams.get('X-Amz-Expires')).toBe('60');
      const image = await fetch(location);
      expect([image.status, image.headers.get('content-type')]).toEqual([200, 'image/png']);
      expect((await fetch(`${t.url}${link.pathname}${link.search}`).then((r) => r.arrayBuffer())).byteLength).toBe((await image.arrayBuffer()).byteLength);
    } finally {
      await other.close();
    }
  });

  it('refuses to start when the bucket cannot be reached or does not exist, saying which and why', async () => {
    const db = await createTestDatabase({ migrated: true });
    try {
      const start = async (env: Record<string, string>) => {
        const child = Child.start('dist/main.js', [], { ...s3.env, ...env, DATABASE_URL: db.url, PORT: String(await freePort()), DATA_DIR: t.config.dataDir });
        return { exit: await child.exited, output: child.output };
      };
      const missing = await start({ S3_BUCKET: 'no-such-bucket' });
      expect(missing.exit.code).toBe(1);
      expect(missing.output).toMatch(/STORAGE_DRIVER=s3: the bucket "no-such-bucket" at http:\/\/127\.0\.0\.1:\d+ cannot be reached or does not exist \(NotFound, HTTP 404\)/);
      const down = await start({ S3_ENDPOINT: `http://127.0.0.1:${await freePort()}` });
      expect(down.exit.code).toBe(1);
      expect(down.output).toMatch(/the bucket "media" at http:\/\/127\.0\.0\.1:\d+ cannot be reached .*ECONNREFUSED/);
      expect(() => loadConfig({ STORAGE_DRIVER: 's3' })).toThrow(/S3_BUCKET must be set when STORAGE_DRIVER=s3/);
      expect(() => loadConfig({ MEDIA_DELIVERY: 'redirect' })).toThrow(/MEDIA_DELIVERY=redirect needs STORAGE_DRIVER=s3/);
    } finally {
      await db.drop();
    }
    // two processes started to their refusal: 36 s of 60 beside the full suite
  }, 150_000);
});
