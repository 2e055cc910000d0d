import { VENDORS } from '../../src/vendors/registry.js';
import type { Page } from 'puppeteer-core';
import { jest } from '@jest/globals';
import { BROWSER_TEST_BUDGET_MS, CHROMIUM, launchBrowser, type TestBrowser } from '../support/browser.js';
import { png } from '../support/images.js';
import { pollUntil } from '../support/poll.js';
import { startS3 } from '../support/s3-server.js';
import { api, queryDb, startTestApp, type TestApp } from '../support/test-app.js';
import { startReceiver } from '../support/webhook-receiver.js';

/** Code passed to page functions runs in the browser; the project's types are Node's. */
declare const document: any;
declare const window: any;

const ADMIN = 'admin-secret-0123456789';
const GEN = '/video-b/v1/generations';
const CSP =
  "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data: blob:; media-src 'self' blob:; connect-src 'self'; object-src 'none'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'";

const describeWithBrowser = CHROMIUM ? describe : describe.skip;
jest.setTimeout(BROWSER_TEST_BUDGET_MS);
if (!CHROMIUM) process.stderr.write('console.e2e: no Chromium found (set CHROMIUM_PATH, or apt-get install chromium); the browser tests are skipped\n');

describe('the console is served by the service at /console', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp({ ADMIN_API_KEY: ADMIN, LOG_LEVEL: 'warn' });
  });
  afterAll(() => t.close());

  it('answers index.html with a strict Content-Security-Policy, nosniff, no referrer and no-cache; no inline script or style', async () => {
    for (const p of ['/console', '/console/']) {
      const res = await fetch(t.url + p);
      expect([p, res.status, res.headers.get('content-type')]).toEqual([p, 200, expect.stringMatching(/^text\/html/)]);
      expect(res.headers.get('content-security-policy')).toBe(CSP);
      expect(res.headers.get('x-content-type-options')).toBe('nosniff');
      expect(res.headers.get('referrer-policy')).toBe('no-referrer');
      expect(res.headers.get('cache-control')).toBe('no-cache');
      const html = await res.text();
      const scripts = [...html.matchAll(/<script\b[^>]*>([\s\S]*?)<\/script>/g)];
      expect(scripts.length).toBeGreaterThan(0);
      for (const [tag, body] of scripts) {
        expect(tag).toMatch(/\bsrc="\/console\/assets\/[^"]+\.js"/);
        expect(body.trim()).toBe('');
      }
      expect(html).not.toMatch(/<style\b|\sstyle=|\son[a-z]+=|https?:\/\//i);
    }
  });

  it('serves hashed assets as immutable, deep links as index.html (the SPA fallback), and a missing asset as the 404 envelope', async () => {
    const index = await (await fetch(`${t.url}/console/`)).text();
    const asset = /src="(\/console\/assets\/[^"]+\.js)"/.exec(index)![1];
    const js = await fetch(t.url + asset);
    expect([js.status, js.headers.get('content-type'), js.headers.get('cache-control'), js.headers.get('content-security-policy')]).toEqual([
      200,
      expect.stringMatching(/javascript/),
      'public, max-age=31536000, immutable',
      CSP,
    ]);
    // read to its end: a response left unread keeps its connection busy, and the app's close waits for it
    expect((await js.arrayBuffer()).byteLength).toBeGreaterThan(0);
    for (const deep of ['/console/tasks/0b6f3c1e-5d2a-4f7e-9c1b-2a3d4e5f6a7b', '/console/usage', '/console/owners/team-a']) {
      const res = await fetch(t.url + deep);
      expect([deep, res.status, res.headers.get('content-security-policy'), await res.text()]).toEqual([deep, 200, CSP, index]);
    }
    const missing = await api(t.url, 'GET', '/console/assets/missing-0000.js', { unchecked: true });
    expect([missing.status, missing.body.code, missing.headers.get('x-content-type-options')]).toEqual([404, 1203, 'nosniff']);
    expect((await api(t.url, 'POST', '/console/', { unchecked: true })).status).toBe(404);
  });

  it('is not part of the API: no /console route in the OpenAPI document', async () => {
    const doc = (await api(t.url, 'GET', '/docs-json')).body;
    expect(Object.keys(doc.paths).filter((p) => p.startsWith('/console'))).toEqual([]);
    expect(Object.keys(doc.paths)).toEqual(expect.arrayContaining(['/tasks', '/tasks/{id}', '/tasks/{id}/callbacks']));
  });
});

describe("the console's media sources follow where /media sends the browser", () => {
  it('adds the bucket (MEDIA_DELIVERY=redirect) and PUBLIC_BASE_URL to img-src and media-src, and nothing else', async () => {
    const s3 = await startS3();
    const t = await startTestApp({ ...s3.env, MEDIA_DELIVERY: 'redirect', PUBLIC_BASE_URL: 'https://media.example.com', LOG_LEVEL: 'warn' });
    try {
      const index = await fetch(`${t.url}/console/`);
      await index.text(); // read to its end, so this app's close does not wait for the connection
      const csp = index.headers.get('content-security-policy')!;
      const directive = (name: string) => csp.split('; ').find((d) => d.startsWith(`${name} `));
      expect(directive('img-src')).toBe(`img-src 'self' data: blob: https://media.example.com ${s3.url}`);
      expect(directive('media-src')).toBe(`media-src 'self' blob: https://media.example.com ${s3.url}`);
      expect([directive('script-src'), directive('connect-src'), directive('default-src')]).toEqual(["script-src 'self'", "connect-src 'self'", "default-src 'self'"]);
    } finally {
      await t.close();
      await s3.close();
    }
  });
});

describeWithBrowser('the console in a real browser', () => {
  let t: TestApp;
  let browser: TestBrowser;
  let receiver: Awaited<ReturnType<typeof startReceiver>>;
  let keyA: string;
  let keyB: string;
  let otherTeamsTask: string;
  /** Content-Security-Policy violations any page reported, and page errors. */
  const violations: string[] = [];
  const pageErrors: string[] = [];

  beforeAll(async () => {
    receiver = await startReceiver();
    // a short sandbox delay: a new task is seen queued or running before it ends
    t = await startTestApp({ ADMIN_API_KEY: ADMIN, ALLOW_PRIVATE_URLS: 'true', SANDBOX_DELAY_MS: '1500', AUTH_CACHE_TTL_MS: '200', CHANNEL_SECRET_KEY: '0f'.repeat(32), LOG_LEVEL: 'warn' });
    keyA = await t.createKey('team-a');
    keyB = await t.createKey('team-b');
    otherTeamsTask = (await api(t.url, 'POST', GEN, { key: keyB, body: { prompt: 'Team B only' } })).body.id;
    browser = await launchBrowser(['--autoplay-policy=no-user-gesture-required']);
  });
  afterAll(async () => {
    await browser?.close();
    await t.close();
    await receiver.close();
  });

  async function newPage(): Promise<Page> {
    const page = await browser.newPage();
    await page.setViewport({ width: 1366, height: 768 });
    page.on('console', (m) => {
      if (/Content[- ]Security[- ]Policy/i.test(m.text())) violations.push(m.text());
    });
    page.on('pageerror', (err) => pageErrors.push(String(err)));
    await page.evaluateOnNewDocument(() => {
      document.addEventListener('securitypolicyviolation', (e: any) => {
        (window.__csp ??= []).push(`${e.violatedDirective} ${e.blockedURI}`);
      });
    });
    return page;
  }

  const button = (page: Page, name: string) => page.locator(`::-p-aria([name="${name}"][role="button"])`);
  const heading = (page: Page, text: string) => page.waitForFunction((x: string) => document.querySelector('main h1')?.textContent?.trim() === x, {}, text);
  const cspOf = (page: Page) => page.evaluate(() => window.__csp ?? []);

  async function signIn(page: Page, key: string, expect_: RegExp): Promise<void> {
    await page.goto(`${t.url}/console/`, { waitUntil: 'networkidle0' });
    await heading(page, 'Sign in');
    await page.type('#key', key);
    await button(page, 'Sign in').click();
    await page.waitForFunction((re: string) => new RegExp(re).test(document.querySelector('#signed-in-as')?.textContent ?? ''), {}, expect_.source);
  }

  async function rowIds(page: Page): Promise<string[]> {
    return page.$$eval('table.tasks tbody tr', (rows: any[]) => rows.map((r) => r.getAttribute('data-task-id')));
  }

  let videoId: string;

  it("signs a team in: its tasks and none of another team's; a task submitted through the API appears and ends without a reload; the key is only in session storage", async () => {
    const page = await newPage();
    const before = (await api(t.url, 'POST', GEN, { key: keyA, body: { prompt: 'Before sign-in' } })).body.id;
    await signIn(page, keyA, /^Signed in as team team-a$/);
    await heading(page, 'Tasks');
    await page.waitForSelector(`tr[data-task-id="${before}"]`);
    expect(await rowIds(page)).not.toContain(otherTeamsTask);
    await page.evaluate(() => {
      window.__sameDocument = true;
    });

    videoId = (await api(t.url, 'POST', GEN, { key: keyA, body: { prompt: 'A lighthouse at dusk', duration: '5s', callback_url: `${receiver.url}/hooks/a` } })).body.id;
    await page.waitForSelector(`tr[data-task-id="${videoId}"]`);
    await page.waitForSelector(`tr[data-task-id="${videoId}"][data-state="succeeded"]`);
    expect(await page.$eval(`tr[data-task-id="${videoId}"]`, (r: any) => r.textContent)).toMatch(/succeeded \(completed\)/);
    expect(await page.evaluate(() => window.__sameDocument)).toBe(true); // no reload happened
    expect(await rowIds(page)).not.toContain(otherTeamsTask);

    // filters: one operation, and a search by id
    await page.select('#f-kind', 'audio');
    await button(page, 'Apply filters').click();
    await page.waitForFunction(() => document.querySelector('.empty')?.textContent === 'No tasks match these filters.');
    await button(page, 'Clear filters').click();
    await page.waitForSelector(`tr[data-task-id="${videoId}"]`);

    // the key: in this tab's session storage only; never in the URL, a cookie or local storage
    const storage = await page.evaluate(() => ({ url: window.location.href, session: JSON.stringify({ ...window.sessionStorage }), local: JSON.stringify({ ...window.localStorage }), cookie: document.cookie }));
    expect(storage.session).toContain(keyA);
    expect([storage.url, storage.local, storage.cookie].join(' ')).not.toContain(keyA);
    expect(await page.cookies()).toEqual([]);
    expect(await cspOf(page)).toEqual([]);
    await page.close();
  });

  it('shows a task: its timeline, its callback attempts, and plays its video and seeks in it', async () => {
    const page = await newPage();
    await signIn(page, keyA, /team-a/);
    await page.waitForSelector(`tr[data-task-id="${videoId}"] a`);
    await page.click(`tr[data-task-id="${videoId}"] a`);
    await heading(page, `Task ${videoId}`);
    expect(page.url()).toBe(`${t.url}/console/tasks/${videoId}`);
    await page.waitForFunction(() => document.querySelectorAll('table.attempts tbody tr').length >= 2);
    const deliveries = await page.$$eval('article.delivery', (els: any[]) => els.map((e) => ({ title: e.querySelector('h3').textContent, attempts: [...e.querySelectorAll('tbody tr')].map((r: any) => r.children[1].textContent) })));
    expect(deliveries).toEqual([
      { title: 'Notification “dreaming”: delivered', attempts: ['200'] },
      { title: 'Notification “completed”: delivered', attempts: ['200'] },
    ]);
    expect(await page.$$eval('.timeline li', (els: any[]) => els.map((e) => e.textContent.split(' ')[0]))).toEqual(['queued', 'running', 'succeeded']);
    expect(await page.$eval('pre.record', (e: any) => JSON.parse(e.textContent))).toEqual(expect.objectContaining({ id: videoId, state: 'completed' }));
    // no redeliver button for a team
    expect(await page.$$eval('article.delivery button', (els: any[]) => els.length)).toBe(0);

    // the video plays, from a signed link that needs no key, and seeks (the media route answers Range)
    await page.waitForSelector('video');
    const played = await page.$eval('video', async (v: any) => {
      v.muted = true;
      await v.play();
      await new Promise((resolve) => (v.currentTime > 0 ? resolve(null) : v.addEventListener('timeupdate', resolve, { once: true })));
      v.pause();
      const seeked = new Promise((resolve) => v.addEventListener('seeked', resolve, { once: true }));
      v.currentTime = 3.5;
      await seeked;
      return { readyState: v.readyState, duration: v.duration, currentTime: v.currentTime, error: v.error?.message ?? null };
    });
    expect(played.error).toBeNull();
    expect(played.duration).toBeGreaterThan(4);
    expect(played.currentTime).toBeCloseTo(3.5, 0);
    expect(played.readyState).toBeGreaterThanOrEqual(1);
    expect(await page.$eval('video', (v: any) => new URL(v.src).pathname)).toMatch(/^\/media\/[0-9a-f-]{36}$/);
    expect(await cspOf(page)).toEqual([]);
    await page.close();
  });

  it("plays an audio upload's clip in place", async () => {
    const upload = (await api(t.url, 'POST', '/music-a/uploads/audio-url', { key: keyA, body: { url: `${t.url}/samples/clip.wav` } })).body.data;
    await pollUntil(() => api(t.url, 'GET', `/music-a/uploads/${upload}`, { key: keyA }), (r) => r.body.data.status !== 'pending', { timeoutMs: 120_000, what: 'the upload to end' });
    const page = await newPage();
    await signIn(page, keyA, /team-a/);
    await page.goto(`${t.url}/console/tasks/${upload}`, { waitUntil: 'networkidle0' }); // a deep link: the SPA fallback
    await heading(page, `Task ${upload}`);
    await page.waitForSelector('audio');
    const audio = await page.$eval('audio', async (a: any) => {
      a.muted = true;
      await a.play();
      await new Promise((resolve) => (a.currentTime > 0 ? resolve(null) : a.addEventListener('timeupdate', resolve, { once: true })));
      return { duration: a.duration, playing: a.currentTime > 0, error: a.error?.message ?? null };
    });
    expect(audio).toEqual({ duration: expect.any(Number), playing: true, error: null });
    expect(audio.duration).toBeGreaterThan(0);
    expect(await page.$eval('.delivery, .empty', (e: any) => e.textContent)).toBeTruthy();
    expect(await cspOf(page)).toEqual([]);
    await page.close();
  });

  it('shows raw PCM speech as what it is, no dead player, with its file to download as .pcm', async () => {
    const res = await api(t.url, 'POST', '/openai/v1/audio/speech', { key: keyA, body: { model: 'gpt-4o-mini-tts', input: 'Raw samples.', voice: 'coral', response_format: 'pcm' } });
    expect(res.status).toBe(200);
    const id = res.headers.get('x-task-id')!;
    const page = await newPage();
    await signIn(page, keyA, /team-a/);
    await page.goto(`${t.url}/console/tasks/${id}`, { waitUntil: 'networkidle0' });
    await heading(page, `Task ${id}`);
    const figure = await page.$eval('figure.media', (f: any) => ({ players: f.querySelectorAll('audio').length, text: f.textContent, link: f.querySelector('a').href }));
    expect([figure.players, figure.text]).toEqual([0, expect.stringContaining('Raw PCM (16-bit little-endian mono at 24 kHz)')]);
    const file = await fetch(figure.link);
    expect([file.status, file.headers.get('content-type'), file.headers.get('content-disposition')]).toEqual([200, 'audio/pcm', expect.stringMatching(/\.pcm"?$/)]);
    expect(await cspOf(page)).toEqual([]);
    await page.close();
  });

  it("plays every take of a song with its title and lyrics, marks the word sung, and links what it continues and joins to their tasks", async () => {
    const music = async (path: string, body: unknown) => {
      const id = (await api(t.url, 'POST', path, { key: keyA, body })).body.data as string;
      return pollUntil(() => api(t.url, 'GET', `/music-a/fetch/${id}`, { key: keyA }), (r) => r.body.data.status === 'SUCCESS' || r.body.data.status === 'FAILURE', { timeoutMs: 120_000, what: 'the music task to end' }).then((r) => r.body.data);
    };
    const song = await music('/music-a/submit/music', { prompt: '[Verse]\nMorning tide upon the sand', tags: 'folk', title: 'Morning tide' });
    const cont = await music('/music-a/submit/music', { continue_clip_id: song.data[0].id, continue_at: 2, prompt: 'and the tide goes out', title: 'Ebb' });
    expect([song.status, cont.status]).toEqual(['SUCCESS', 'SUCCESS']);
    const page = await newPage();
    await signIn(page, keyA, /team-a/);
    await page.goto(`${t.url}/console/tasks/${cont.task_id}`, { waitUntil: 'networkidle0' });
    await heading(page, `Task ${cont.task_id}`);
    await page.waitForFunction(() => document.querySelectorAll('article.take audio').length === 2);
    const takes = await page.$$eval('article.take', (els: any[]) =>
      els.map((e) => ({ id: e.getAttribute('data-clip-id'), title: e.querySelector('h3').textContent, lyrics: e.querySelector('.lyrics-text')?.textContent, lineage: e.querySelector('.continues')?.textContent, link: e.querySelector('.continues a')?.getAttribute('href') })),
    );
    expect(takes).toEqual(
      cont.data.map((c: any, i: number) => ({
        id: c.id,
        title: `Take ${i + 1}: Ebb`,
        lyrics: 'and the tide goes out',
        lineage: `Continues clip ${song.data[0].id} of task ${song.task_id} from 0:02.0.`,
        link: `/console/tasks/${song.task_id}`,
      })),
    );
    // the takes' audio is not also listed among the other media
    expect(await page.$$eval('.media-grid audio', (els: any[]) => els.length)).toBe(0);
    // every take plays; seeking into the third word marks it as the one sung
    for (const i of [0, 1]) {
      const played = await page.evaluate(async (n: number) => {
        const a = document.querySelectorAll('article.take audio')[n];
        a.muted = true;
        await a.play();
        await new Promise((resolve) => (a.currentTime > 0 ? resolve(null) : a.addEventListener('timeupdate', resolve, { once: true })));
        a.pause();
        return { playing: a.currentTime > 0, error: a.error?.message ?? null };
      }, i);
      expect(played).toEqual({ playing: true, error: null });
    }
    const third = cont.data[1].id;
    const words = (await api(t.url, 'GET', `/music-a/clips/${third}/lyrics`, { key: keyA })).body.data.aligned_words;
    await page.click(`article.take[data-clip-id="${third}"] details.timed-lyrics summary`);
    expect(await page.$eval(`article.take[data-clip-id="${third}"] details.timed-lyrics summary`, (e: any) => e.textContent)).toBe('Words with their times (5)');
    await page.evaluate(
      (id: string, at: number) => {
        const a = document.querySelector(`article.take[data-clip-id="${id}"] audio`);
        a.currentTime = at;
      },
      third,
      (words[2].start_s + words[2].end_s) / 2,
    );
    await page.waitForFunction((id: string) => document.querySelector(`article.take[data-clip-id="${id}"] li.sung`)?.textContent?.endsWith(' tide'), {}, third);

    // the lineage link opens the song it continues: its two takes, its own lyrics, continuing nothing
    await page.click(`article.take[data-clip-id="${cont.data[0].id}"] .continues a`);
    await heading(page, `Task ${song.task_id}`);
    await page.waitForFunction(() => document.querySelectorAll('article.take').length === 2);
    expect(await page.$$eval('article.take', (els: any[]) => els.map((e) => [e.querySelector('h3').textContent, e.querySelector('.lyrics-text').textContent, !!e.querySelector('.lineage')]))).toEqual([
      ['Take 1: Morning tide', '[Verse]\nMorning tide upon the sand', false],
      ['Take 2: Morning tide', '[Verse]\nMorning tide upon the sand', false],
    ]);

    // a joined song: its parts in order, each linking to its task, with its cut
    const joined = await music('/music-a/submit/concat', { clip_id: cont.data[0].id });
    await page.goto(`${t.url}/console/tasks/${joined.task_id}`, { waitUntil: 'networkidle0' });
    await page.waitForSelector('article.take ol.parts li');
    expect(await page.$eval('article.take h3', (e: any) => e.textContent)).toBe('Joined song: Ebb');
    expect(await page.$$eval('article.take ol.parts li', (els: any[]) => els.map((e) => [e.textContent, e.querySelector('a').getAttribute('href')]))).toEqual([
      [`clip ${song.data[0].id} of task ${song.task_id} up to 0:02.0`, `/console/tasks/${song.task_id}`],
      [`clip ${cont.data[0].id} of task ${cont.task_id} whole`, `/console/tasks/${cont.task_id}`],
    ]);
    expect(await page.$$eval('article.take audio', (els: any[]) => els.length)).toBe(1);
    expect(await cspOf(page)).toEqual([]);
    await page.close();
  });

  it("shows a generated image's thumbnails, decoded from signed links", async () => {
    const res = await api(t.url, 'POST', '/openai/v1/images/generations', { key: keyA, body: { prompt: 'Two paper cranes', n: 2, size: '1024x1536', output_format: 'webp' } });
    expect(res.status).toBe(200);
    const taskId = res.body.task_id as string;
    const page = await newPage();
    await signIn(page, keyA, /team-a/);
    await page.goto(`${t.url}/console/tasks/${taskId}`, { waitUntil: 'networkidle0' });
    await heading(page, `Task ${taskId}`);
    await page.waitForFunction(() => [...document.querySelectorAll('img')].filter((i: any) => i.complete && i.naturalWidth > 0).length === 2);
    const images = await page.$$eval('img', (els: any[]) => els.map((i) => ({ width: i.naturalWidth, height: i.naturalHeight, path: new URL(i.src).pathname })));
    expect(images).toEqual([0, 1].map(() => ({ width: 1024, height: 1536, path: expect.stringMatching(/^\/media\/[0-9a-f-]{36}$/) })));
    expect(await cspOf(page)).toEqual([]);
    await page.close();
  });

  it("shows what a task asked beside its result, its door and its first frame as a thumbnail; the list filters by door and model", async () => {
    const frame = (await png(320, 180)).toString('base64');
    const created = await api(t.url, 'POST', '/video-a/v1/videos/image2video', { key: keyA, body: { model_name: 'kling-v1-6', prompt: 'A kite over the dunes', image: frame, mode: 'std', duration: '5' } });
    const klingId = created.body.data.task_id as string;
    await pollUntil(() => api(t.url, 'GET', `/tasks/${klingId}`, { key: keyA }), (r) => r.body.state === 'succeeded', { timeoutMs: 120_000, what: 'the Kling video to succeed' });
    const page = await newPage();
    await signIn(page, keyA, /team-a/);
    await page.goto(`${t.url}/console/tasks/${klingId}`, { waitUntil: 'networkidle0' });
    await heading(page, `Task ${klingId}`);
    await page.waitForSelector('#request-main');
    const asked = await page.$$eval('#request-main dt', (dts: any[]) => dts.map((dt) => [dt.textContent, dt.nextElementSibling.textContent]));
    expect(asked).toEqual([
      ['Prompt', 'A kite over the dunes'],
      ['Model', 'kling-v1-6'],
      ['Shape', '720p · 5 s'],
    ]);
    expect(await page.$eval('#task-door', (e: any) => e.textContent)).toBe('Kling');
    // the first frame: a thumbnail decoded from its signed link, linking to the file; the result's video beside it
    await page.waitForFunction(() => [...document.querySelectorAll('figure.thumb img')].some((i: any) => i.complete && i.naturalWidth > 0));
    const thumbs = await page.$$eval('figure.thumb', (els: any[]) => els.map((f) => ({ role: f.getAttribute('data-role'), width: f.querySelector('img').naturalWidth, img: new URL(f.querySelector('img').src).pathname, link: new URL(f.querySelector('a').href).pathname, caption: f.querySelector('figcaption').textContent })));
    expect(thumbs).toEqual([{ role: 'frame0', width: 320, img: expect.stringMatching(/^\/media\/[0-9a-f-]{36}$/), link: expect.stringMatching(/^\/media\/[0-9a-f-]{36}$/), caption: 'frame0' }]);
    expect(thumbs[0].link).toBe(thumbs[0].img);
    expect(await page.$$eval('section[aria-labelledby="media-h"] video', (els: any[]) => els.length)).toBe(1);
    expect(await page.$$eval('section[aria-labelledby="media-h"] figure.thumb', (els: any[]) => els.length)).toBe(0);

    // the list: a door and a model column, and filters on each
    await page.goto(`${t.url}/console/`, { waitUntil: 'networkidle0' });
    await page.waitForSelector(`tr[data-task-id="${klingId}"]`);
    expect(await page.$eval(`tr[data-task-id="${klingId}"]`, (r: any) => [r.querySelector('[data-col="door"]').textContent, r.querySelector('[data-col="model"]').textContent])).toEqual(['Kling', 'kling-v1-6']);
    await page.waitForSelector(`tr[data-task-id="${videoId}"]`);
    await page.select('#f-door', 'kling');
    await button(page, 'Apply filters').click();
    await page.waitForFunction((gone: string) => !document.querySelector(`tr[data-task-id="${gone}"]`), {}, videoId);
    expect(await rowIds(page)).toEqual([klingId]);
    await page.select('#f-door', 'luma');
    await button(page, 'Apply filters').click();
    await page.waitForSelector(`tr[data-task-id="${videoId}"]`);
    expect(await rowIds(page)).not.toContain(klingId);
    await page.select('#f-door', '');
    await page.type('#f-model', 'kling-v1-6');
    await button(page, 'Apply filters').click();
    await page.waitForFunction((gone: string) => !document.querySelector(`tr[data-task-id="${gone}"]`), {}, videoId);
    expect(await rowIds(page)).toEqual([klingId]);
    expect(await cspOf(page)).toEqual([]);
    await page.close();
  });

  it('shows usage: credits, tasks per day as a chart, refusals by code; signing out forgets the key', async () => {
    const page = await newPage();
    await signIn(page, keyA, /team-a/);
    await page.click('nav a[href="/console/usage"]');
    await heading(page, 'Usage');
    await page.waitForSelector('#credits-used');
    await page.waitForSelector('figure.chart svg[role="img"] rect.bar');
    expect(await page.$eval('table.refusals', (e: any) => e.textContent)).toMatch(/1302/);
    await button(page, 'Sign out').click();
    await heading(page, 'Sign in');
    expect(await page.evaluate(() => window.sessionStorage.length)).toBe(0);
    // a reload stays signed out
    await page.reload({ waitUntil: 'networkidle0' });
    await heading(page, 'Sign in');
    await page.close();
  });

  it('signs the admin in: every owner; creates a key (shown once), sets limits, revokes the key and redelivers a callback, each visible through the API', async () => {
    const page = await newPage();
    await signIn(page, ADMIN, /^Signed in as admin$/);
    await heading(page, 'Tasks');
    await page.waitForSelector(`tr[data-task-id="${otherTeamsTask}"]`);
    await page.waitForSelector(`tr[data-task-id="${videoId}"]`);

    // create a key: shown once
    await page.click('nav a[href="/console/owners"]');
    await heading(page, 'Owners and keys');
    await page.type('#new-key-owner', 'team-c');
    await page.type('#new-key-name', 'laptop');
    await button(page, 'Create key').click();
    await page.waitForSelector('#new-key-value');
    const newKey = await page.$eval('#new-key-value', (e: any) => e.value);
    expect(newKey).toMatch(/^mgw_[A-Za-z0-9]{48}$/);
    expect((await api(t.url, 'GET', '/usage', { key: newKey })).body.owner).toBe('team-c');
    await page.reload({ waitUntil: 'networkidle0' });
    await heading(page, 'Owners and keys');
    await page.waitForSelector('table.keys');
    expect(await page.content()).not.toContain(newKey);

    // set limits of team-c
    await page.click('a[href="/console/owners/team-c"]');
    await heading(page, 'Owner team-c');
    await page.waitForSelector('#monthly_credits-mode');
    await page.select('#monthly_credits-mode', 'limit');
    await page.waitForSelector('#monthly_credits-value');
    await page.type('#monthly_credits-value', '77');
    await page.select('#requests_per_minute-mode', 'unlimited');
    await button(page, 'Save limits').click();
    await page.waitForFunction(() => /Limits of team-c saved/.test(document.querySelector('.notice')?.textContent ?? ''));
    const limits = (await api(t.url, 'GET', '/admin/owners/team-c/limits', { key: ADMIN })).body;
    expect([limits.monthly_credits, limits.requests_per_minute, limits.defaults]).toEqual([77, null, ['max_concurrent_tasks']]);

    // a bad value: the API's message, in words
    await page.select('#max_concurrent_tasks-mode', 'limit');
    await page.waitForSelector('#max_concurrent_tasks-value');
    await page.type('#max_concurrent_tasks-value', '5000000');
    await button(page, 'Save limits').click();
    await page.waitForFunction(() => /max_concurrent_tasks must be at most 1000000/.test(document.querySelector('[role="alert"]')?.textContent ?? ''));

    // rotate the webhook secret
    const secretBefore = (await api(t.url, 'GET', '/admin/owners/team-c/webhook-secret', { key: ADMIN })).body.secret;
    await button(page, 'Rotate secret').click();
    await page.waitForFunction(() => /was rotated/.test(document.body.textContent));
    const rotated = (await api(t.url, 'GET', '/admin/owners/team-c/webhook-secret', { key: ADMIN })).body;
    expect([rotated.previous_secret, rotated.secret === secretBefore]).toEqual([secretBefore, false]);

    // revoke the key
    const prefix = newKey.slice(0, 12);
    await button(page, `Revoke key ${prefix} (laptop) of team-c`).click();
    await page.waitForFunction(() => /is revoked/.test(document.body.textContent));
    const keys = (await api(t.url, 'GET', '/admin/keys?owner=team-c', { key: ADMIN })).body;
    expect(keys.map((k: any) => [k.prefix, k.revoked_at !== null])).toEqual([[prefix, true]]);
    await pollUntil(() => api(t.url, 'GET', '/usage', { key: newKey }), (r) => r.status === 401, { timeoutMs: 30_000, what: 'the revoked key to stop working' });

    // redeliver the video's "completed" notification
    const received = () => receiver.received.filter((r) => r.path === '/hooks/a' && r.json?.state === 'completed');
    const deliveredBefore = received().length;
    await page.goto(`${t.url}/console/tasks/${videoId}`, { waitUntil: 'networkidle0' });
    await heading(page, `Task ${videoId}`);
    await page.waitForSelector('article.delivery');
    expect(await page.$eval('#attempts-h', (e: any) => e.textContent)).toBe('Upstream attempts');
    await button(page, 'Redeliver the “completed” notification').click();
    await page.waitForFunction(() => /being delivered again/.test(document.querySelector('.notice')?.textContent ?? ''));
    await pollUntil(async () => received().length, (n) => n === deliveredBefore + 1, { timeoutMs: 60_000, what: 'the redelivered notification' });
    expect(new Set(received().map((r) => r.headers['webhook-id'])).size).toBe(1); // the same webhook-id
    const log = await pollUntil(
      () => api(t.url, 'GET', `/tasks/${videoId}/callbacks`, { key: ADMIN }),
      (r) => r.body.deliveries[1].state === 'delivered' && r.body.deliveries[1].attempt_log.length >= 1,
      { what: 'the redelivery logged' },
    );
    expect(log.body.deliveries[1].status).toBe('completed');
    // and the page shows the new attempt by itself
    await page.waitForFunction(() => [...document.querySelectorAll('article.delivery')].at(-1)?.querySelectorAll('tbody tr').length >= 1);

    expect(await cspOf(page)).toEqual([]);
    await page.close();
  });

  it('lets the admin add a channel with write-only credentials, disable, enable and test it, each visible through the API', async () => {
    const page = await newPage();
    await signIn(page, ADMIN, /admin/);
    await page.click('nav a[href="/console/channels"]');
    await heading(page, 'Channels');
    await page.waitForFunction(() => /No channels yet/.test(document.body.textContent));
    await page.type('#new-channel-name', 'gateway-b');
    // the form's protocols are the vendors' descriptors (GET /admin/protocols), with their credential fields
    await page.waitForSelector('#new-channel-protocol option[value="gateway"]');
    expect(await page.$$eval('#new-channel-protocol option', (os) => os.map((o) => (o as unknown as { value: string }).value))).toEqual(VENDORS.map((v) => v.protocol));
    const credentialInputs = () => page.$$eval('input[type="password"][id^="new-channel-"]', (es) => es.map((e) => e.id.replace('new-channel-', '')));
    expect(await credentialInputs()).toEqual(['access_key', 'secret_key']);
    await page.select('#new-channel-protocol', 'seedance');
    expect(await credentialInputs()).toEqual(['api_key']);
    expect(await page.$eval('#new-channel-base_url', (e) => (e as unknown as { placeholder: string }).placeholder)).toBe('https://ark.ap-southeast.bytepluses.com/api/v3');
    await page.select('#new-channel-protocol', 'gateway');
    await page.type('#new-channel-base_url', 'http://127.0.0.1:1/video-a');
    await page.type('#new-channel-api_key', 'upstream-secret-1234');
    await button(page, 'Add channel').click();
    await page.waitForFunction(() => /Channel gateway-b added/.test(document.querySelector('.notice')?.textContent ?? ''));
    const [channel] = (await api(t.url, 'GET', '/admin/channels', { key: ADMIN })).body;
    expect([channel.name, channel.protocol, channel.credentials, channel.status]).toEqual(['gateway-b', 'gateway', { api_key: '…1234' }, 'enabled']);
    expect(await page.content()).not.toContain('upstream-secret-1234');

    await button(page, 'Disable gateway-b').click();
    await page.waitForFunction(() => /disabled\./.test(document.querySelector('.notice')?.textContent ?? ''));
    expect((await api(t.url, 'GET', `/admin/channels/${channel.id}`, { key: ADMIN })).body.status).toBe('disabled');
    await button(page, 'Enable gateway-b').click();
    await page.waitForFunction(() => /enabled\./.test(document.querySelector('.notice')?.textContent ?? ''));
    expect((await api(t.url, 'GET', `/admin/channels/${channel.id}`, { key: ADMIN })).body.status).toBe('enabled');

    // a test against an address where nothing listens: the outcome, in words
    await button(page, 'Test gateway-b').click();
    await page.waitForFunction(() => /Test of gateway-b: failed/.test(document.querySelector('.notice')?.textContent ?? ''));

    // edit: a new weight; the credentials left empty stay as they were
    await button(page, 'Edit gateway-b').click();
    const weight = `#edit-${channel.id}-weight`;
    await page.waitForSelector(weight);
    await page.$eval(weight, (e: any) => (e.value = ''));
    await page.type(weight, '250');
    await button(page, 'Save channel').click();
    await page.waitForFunction(() => /Channel gateway-b saved/.test(document.querySelector('.notice')?.textContent ?? ''));
    const edited = (await api(t.url, 'GET', `/admin/channels/${channel.id}`, { key: ADMIN })).body;
    expect([edited.weight, edited.credentials]).toEqual([250, { api_key: '…1234' }]);
    expect(await cspOf(page)).toEqual([]);
    await page.close();
  });

  it("shows what a vendor billed beside what we priced, on a task's attempts and in the usage, and flags the mismatch", async () => {
    // a generation that had two upstream tasks on gateway-b (a failover): the first billed twice its price, the
    // second what it was priced. The relay writes these figures (vendor-billing.e2e); here they are set as it would.
    const id = (await api(t.url, 'POST', GEN, { key: keyA, body: { prompt: 'Billed twice', duration: '5s' } })).body.id as string;
    await pollUntil(() => api(t.url, 'GET', `${GEN}/${id}`, { key: keyA }), (r) => r.body.state === 'completed', { timeoutMs: 120_000, what: 'the sandbox generation' });
    const [channel] = (await api(t.url, 'GET', '/admin/channels', { key: ADMIN })).body;
    await queryDb(
      t.db,
      `INSERT INTO task_attempts (id, task_id, channel_id, at, outcome, latency_ms, model, upstream_id, cost, billed_amount, billed_unit, billed_cost)
       VALUES (gen_random_uuid(), $1, $2, now() - interval '2 seconds', 'accepted', 200, 'veo', 'up-1', 0.5, 10, 'seconds', 1),
              (gen_random_uuid(), $1, $2, now() - interval '1 second', 'accepted', 210, 'veo', 'up-2', 0.5, 5, 'seconds', 0.5)`,
      [id, channel.id],
    );
    const page = await newPage();
    await signIn(page, ADMIN, /^Signed in as admin$/);
    await page.goto(`${t.url}/console/tasks/${id}`, { waitUntil: 'networkidle0' });
    await heading(page, `Task ${id}`);
    await page.waitForSelector('section[aria-labelledby="attempts-h"] tbody tr');
    const attempts = await page.$$eval('section[aria-labelledby="attempts-h"] tbody tr', (rows: any[]) => rows.map((r) => [...r.children].slice(1, 6).map((c: any) => c.textContent.trim())));
    expect(attempts).toEqual([
      ['gateway-b', 'accepted', 'veo', '0.5', '10 seconds'],
      ['gateway-b', 'accepted', 'veo', '0.5', '5 seconds'],
    ]);
    const billedCells = await page.$$eval('section[aria-labelledby="attempts-h"] tbody tr', (rows: any[]) => rows.map((r) => [r.children[6].textContent.trim(), r.children[6].querySelectorAll('strong.mismatch').length]));
    expect(billedCells).toEqual([
      ['1 beyond tolerance', 1],
      ['0.5', 0],
    ]);

    await page.click('nav a[href="/console/usage"]');
    await heading(page, 'Usage');
    const row = 'tr[data-upstream-cost="team-a/video/gateway-b/veo"]';
    await page.waitForSelector(row);
    const cells = await page.$eval(row, (r: any) => [...r.children].slice(4).map((c: any) => c.textContent.trim()));
    expect(cells).toEqual(['2', '1', '15 seconds', '1.5', '1 beyond tolerance']);
    expect(await page.$eval(row, (r: any) => [r.className, r.querySelectorAll('strong.mismatch').length])).toEqual(['mismatch-row', 1]);
    expect(await cspOf(page)).toEqual([]);
    await page.close();
  });

  it('declares a model the catalog does not know: the form gives a spec to complete, shows the refusal naming its field, and the list marks it declared', async () => {
    const page = await newPage();
    await signIn(page, ADMIN, /admin/);
    await page.click('nav a[href="/console/channels"]');
    await heading(page, 'Channels');
    await page.type('#new-channel-name', 'seedance-lite');
    await page.waitForSelector('#new-channel-protocol option[value="seedance"]');
    await page.select('#new-channel-protocol', 'seedance');
    await page.type('#new-channel-base_url', 'http://127.0.0.1:1/api/v3');
    await page.type('#new-channel-api_key', 'ark-secret-5678');
    await button(page, 'Declare a video model').click();
    const models = '#new-channel-models';
    await page.waitForFunction((sel: string) => (document.querySelector(sel) as unknown as { value: string } | null)?.value.includes('"spec"'), {}, models);
    const template = JSON.parse(await page.$eval(models, (e) => (e as unknown as { value: string }).value));
    expect(template).toEqual([expect.objectContaining({ operation: 'video', spec: expect.objectContaining({ durations: expect.any(Array), resolutions: expect.any(Array) }) })]);
    const typeModels = (value: unknown) =>
      page.$eval(
        models,
        (e, text) => {
          const area = e as unknown as { value: string; dispatchEvent(event: Event): boolean };
          area.value = text as string;
          area.dispatchEvent(new Event('input', { bubbles: true }));
        },
        JSON.stringify(value),
      );
    const lite = { ...template[0], name: 'seedance-lite', vendor_model: 'seedance-1-0-lite-i2v-250428' };
    await typeModels([{ ...lite, spec: { ...lite.spec, durations: [2, 3, 100] } }]);
    await button(page, 'Add channel').click();
    await page.waitForFunction(() => /models\[0\]\.spec\.durations\[2\] must be a whole number of seconds from 1 to 99/.test(document.body.textContent ?? ''));
    await typeModels([{ ...lite, spec: { ...lite.spec, durations: [2, 12], resolutions: ['480p', '720p'], reference_images: 4 } }]);
    await button(page, 'Add channel').click();
    await page.waitForFunction(() => /Channel seedance-lite added/.test(document.querySelector('.notice')?.textContent ?? ''));
    const saved = ((await api(t.url, 'GET', '/admin/channels', { key: ADMIN })).body as { name: string; models: unknown[] }[]).find((c) => c.name === 'seedance-lite')!;
    expect(saved.models).toEqual([expect.objectContaining({ name: 'seedance-lite', vendor_model: 'seedance-1-0-lite-i2v-250428', operation: 'video', spec: expect.objectContaining({ durations: [2, 12], resolutions: ['480p', '720p'], reference_images: 4 }) })]);
    await page.waitForFunction(() => /seedance-lite \(seedance-1-0-lite-i2v-250428\) · declared video model/.test(document.body.textContent ?? ''));
    await page.close();
  });

  it('reported no Content-Security-Policy violation and no script error on any page', () => {
    expect(violations).toEqual([]);
    expect(pageErrors).toEqual([]);
  });
});
