import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { Page } from 'puppeteer-core';
import { jest } from '@jest/globals';
import { BROWSER_TEST_BUDGET_MS, BROWSER_WAIT_MS, CHROMIUM, launchBrowser, type TestBrowser } from '../support/browser.js';
import { pollUntil } from '../support/poll.js';
import { api, startTestApp, type TestApp } from '../support/test-app.js';

/** Code passed to page functions runs in the browser; the project's types are Node's. */
declare const document: any;
declare const window: any;

const describeWithBrowser = CHROMIUM ? describe : describe.skip;
jest.setTimeout(BROWSER_TEST_BUDGET_MS);
if (!CHROMIUM) process.stderr.write('swagger-ui.e2e: no Chromium found (set CHROMIUM_PATH, or apt-get install chromium); the browser test is skipped\n');

async function generationState(key: string, t: TestApp, id: string): Promise<string> {
  const { state, failure_reason } = (await api(t.url, 'GET', `/video-b/v1/generations/${id}`, { key })).body;
  return state === 'failed' ? `failed: ${failure_reason}` : state;
}

async function musicState(key: string, t: TestApp, id: string): Promise<string> {
  const { status, fail_reason } = (await api(t.url, 'GET', `/music-a/fetch/${id}`, { key })).body.data;
  return status === 'FAILURE' ? `failed: ${fail_reason}` : status;
}

/** States a task passes through before it ends, in every API's words. */
const UNDER_WAY = ['submitted', 'processing', 'pending', 'dreaming', 'SUBMITTED', 'QUEUED', 'IN_PROGRESS', 'queued', 'in_progress'];

interface Operation {
  /** Swagger UI's id of the operation: operations-<its tag, spaces as _>-<its operationId>. */
  operation: string;
  /** The examples that run as they are to success (200 or 201), and are accepted again when sent a second time. */
  examples: string[];
  /** The task a success starts: where its answer names it, how to read its state, and the state it must reach. */
  task?: { success: string; idOf: (body: any) => string; state: (key: string, t: TestApp, id: string) => Promise<string> };
  /** For an operation that starts no task: the answer its examples give as they are. */
  answer?: unknown;
  /**
   * Examples that need the caller's own ids (their summaries say "put your clip id"): their placeholder
   * clip ids are nobody's, so as they are each must answer 404 not_found, the envelope naming `field`;
   * never a 5xx, never a 400 (the body itself is valid).
   */
  ownIds?: { examples: string[]; field: RegExp; code?: number };
  /** The request is answered when its task ends (OpenAI's image door holds it): sent again only while a worker runs. */
  held?: true;
  /**
   * The answer is audio (OpenAI's speech door), which Swagger UI offers as a download rather than showing: its
   * examples are sent as the served document has them, outside the browser, and must answer 200 with audio or
   * its events.
   */
  audio?: true;
}

/**
 * Each pre-filled example, by operation. The test first checks this list against the served document:
 * every example of every operation is here, as one that succeeds or one that needs the caller's own ids.
 */
const OPERATIONS: Operation[] = [
  {
    operation: 'operations-image_expand-createExpandTask',
    examples: ['base64', 'url', 'kling'],
    task: {
      success: 'succeed',
      idOf: (body) => body.data.task_id,
      state: async (key, t, id) => {
        const { task_status, task_status_msg } = (await api(t.url, 'GET', `/video-a/v1/images/editing/expand/${id}`, { key })).body.data;
        return task_status === 'failed' ? `failed: ${task_status_msg}` : task_status;
      },
    },
  },
  {
    operation: 'operations-video_generation-createGeneration',
    examples: ['keyframe', 'text', 'luma'],
    task: { success: 'completed', idOf: (body) => body.id, state: generationState },
  },
  {
    operation: 'operations-video_generation-createVideoGeneration',
    examples: ['keyframe', 'text', 'luma'],
    task: { success: 'completed', idOf: (body) => body.id, state: generationState },
  },
  ...(['createKlingTextToVideo', 'createKlingImageToVideo', 'createKlingMultiImageToVideo'] as const).map((id) => ({
    operation: `operations-video_generation_Kling-style-${id}`,
    examples: id === 'createKlingTextToVideo' ? ['camera', 'prompt'] : id === 'createKlingImageToVideo' ? ['image', 'tail'] : ['references'],
    task: {
      success: 'succeed',
      idOf: (body: any) => body.data.task_id,
      state: async (key: string, t: TestApp, taskId: string) => {
        const { task_status, task_status_msg } = (await api(t.url, 'GET', `/video-a/v1/videos/text2video/${taskId}`, { key })).body.data;
        return task_status === 'failed' ? `failed: ${task_status_msg}` : task_status;
      },
    },
  })),
  {
    operation: 'operations-video_generation_OpenAI-style-createOpenAiVideo',
    examples: ['reference', 'sized', 'text'],
    task: {
      success: 'completed',
      idOf: (body) => body.id,
      state: async (key, t, id) => {
        const { status, error } = (await api(t.url, 'GET', `/openai/v1/videos/${id}`, { key })).body;
        return status === 'failed' ? `failed: ${error?.message}` : status;
      },
    },
  },
  ...(['createKlingImageTask', 'createOpenAiImage'] as const).map((id) => ({
    operation: `operations-image_generation-${id}`,
    examples: id === 'createKlingImageTask' ? ['reference', 'text'] : ['link', 'simple', 'transparent'],
    ...(id === 'createOpenAiImage' ? { held: true as const } : {}),
    task: {
      success: 'succeed',
      // OpenAI's door answers once the images are made, naming its task
      idOf: (body: any) => (id === 'createOpenAiImage' ? body.task_id : body.data.task_id),
      state: async (key: string, t: TestApp, taskId: string) => {
        const { task_status, task_status_msg } = (await api(t.url, 'GET', `/video-a/v1/images/generations/${taskId}`, { key })).body.data;
        return task_status === 'failed' ? `failed: ${task_status_msg}` : task_status;
      },
    },
  })),
  {
    operation: 'operations-audio-uploadAudioUrl',
    examples: ['sample'],
    task: {
      success: 'ready',
      idOf: (body) => body.data,
      state: async (key, t, id) => {
        const { status, error } = (await api(t.url, 'GET', `/music-a/uploads/${id}`, { key })).body.data;
        return status === 'failed' ? `failed: ${error}` : status;
      },
    },
  },
  {
    operation: 'operations-music-submitMusic',
    examples: ['song', 'description'],
    task: { success: 'SUCCESS', idOf: (body) => body.data, state: musicState },
    ownIds: { examples: ['continuation'], field: /^continue_clip_id\b/ },
  },
  // new-api's lyrics: written by the sandbox, fetched with the music tasks
  { operation: 'operations-lyrics-submitLyrics', examples: ['model', 'simple'], task: { success: 'SUCCESS', idOf: (body) => body.data, state: musicState } },
  {
    operation: 'operations-music-submitConcat',
    examples: [],
    ownIds: { examples: ['chain', 'list'], field: /^clip_ids?\b/ },
  },
  {
    operation: 'operations-music-submitStems',
    examples: [],
    ownIds: { examples: ['two', 'all'], field: /^clip_id\b/ },
  },
  { operation: 'operations-speech-createOpenAiSpeech', examples: ['simple', 'sse', 'wav'], held: true, audio: true },
  // ElevenLabs' music door answers the song when its task ends, as audio
  { operation: 'operations-music-composeElevenLabsMusic', examples: ['instrumental', 'plan', 'prompt'], held: true, audio: true },
  { operation: 'operations-music-streamElevenLabsMusic', examples: ['instrumental', 'plan', 'prompt'], held: true, audio: true },
  // sunoapi.org's shape: its answers and refusals carry its codes ({code: 404, msg, …} for a clip that is nobody's)
  { operation: 'operations-music-sunoapiGenerate', examples: ['custom', 'description'], task: { success: 'SUCCESS', idOf: (body) => body.data.taskId, state: musicState } },
  { operation: 'operations-music-sunoapiExtend', examples: [], ownIds: { examples: ['extend'], field: /^audioId\b/, code: 404 } },
  { operation: 'operations-music-sunoapiTimestampedLyrics', examples: [], ownIds: { examples: ['take'], field: /^taskId\b/, code: 404 } },
  { operation: 'operations-music-sunoapiWavGenerate', examples: [], ownIds: { examples: ['wav'], field: /^taskId\b/, code: 404 } },
  // its upload-extend answers once the sample clip it registers is checked: sent again while the worker runs
  { operation: 'operations-music-sunoapiUploadExtend', examples: ['sample'], held: true, task: { success: 'SUCCESS', idOf: (body) => body.data.taskId, state: musicState } },
  {
    // its example's id is nobody's task: left out, an empty list
    operation: 'operations-music-fetchMusicTasks',
    examples: ['ids'],
    answer: { code: 'success', message: '', data: [] },
  },
];

/** The new song fetched in the browser: the example that makes it, and the operation that fetches it. */
const SONG = { operation: 'operations-music-submitMusic', example: 'song', fetch: 'operations-music-fetchMusicTask' };

/**
 * Clicks Execute and returns the answer shown once it differs from `previous` (the whole answer shown:
 * its headers carry the request's own X-Request-Id, so two equal bodies in a row still differ).
 */
async function execute(page: Page, op: string, previous: string): Promise<{ status: string; body: string; shown: string }> {
  await page.click(`#${op} .execute`);
  const response = `#${op} .live-responses-table .response`;
  const selector = `${response} .response-col_description pre`;
  await page
    .waitForFunction((r, s, p) => document.querySelector(s)?.textContent && document.querySelector(r)!.textContent !== p, {}, response, selector, previous)
    .catch((err: unknown) => {
      throw new Error(`${op}: no new answer shown within ${BROWSER_WAIT_MS / 1000} s of Execute (${String(err)})`);
    });
  return {
    status: await page.$eval(`${response} .response-col_status`, (e) => e.textContent?.trim() ?? ''),
    body: await page.$eval(selector, (e) => e.textContent ?? ''),
    shown: await page.$eval(response, (e) => e.textContent ?? ''),
  };
}

/** Opens /docs and authorizes the API key as a user does (pasted, Enter): the Authorize dialog is left open. */
async function openAuthorized(page: Page, base: string, key: string): Promise<void> {
  await page.goto(`${base}/docs`, { waitUntil: 'networkidle0' });
  await page.waitForSelector('.btn.authorize');
  await page.click('.btn.authorize');
  await page.waitForSelector('.modal-ux input');
  await page.keyboard.type(key);
  await page.keyboard.press('Enter');
  await page.waitForFunction(() => document.querySelector('.modal-ux .auth-container')?.textContent?.includes('Authorized'));
}

describeWithBrowser('Swagger UI in a real browser', () => {
  /** The instance the browser talks to (ROLE=api), and the one that runs the tasks (ROLE=worker), on one database. */
  let t: TestApp;
  let worker: TestApp | undefined;
  let key: string;
  let browser: TestBrowser;
  let dataDir: string;
  beforeAll(async () => {
    // No ALLOW_PRIVATE_URLS and no network: the examples must work as they are.
    // one data directory, as instances sharing the local storage driver have: OpenAI's image door answers with the worker's images
    dataDir = await mkdtemp(path.join(tmpdir(), 'mgw-swagger-'));
    const env = { ADMIN_API_KEY: 'admin-secret-0123456789', MUSIC_SANDBOX_DURATION_S: '3', DATA_DIR: dataDir };
    t = await startTestApp({ ...env, ROLE: 'api' });
    worker = await startTestApp({ ...env, ROLE: 'worker' }, { db: t.db });
    key = await t.createKey('swagger');
    browser = await launchBrowser();
  });
  afterAll(async () => {
    await browser?.close();
    await worker?.close();
    await t.close();
    await rm(dataDir, { recursive: true, force: true });
  });

  it('keeps what Authorize was given for the tab only: in sessionStorage, never localStorage; a reload keeps it, another tab and Logout do not', async () => {
    const ADMIN = 'admin-secret-0123456789';
    const page = await browser.newPage();
    // what an earlier version (persistAuthorization) left in localStorage is removed at the next visit
    await page.goto(`${t.url}/docs`, { waitUntil: 'networkidle0' });
    await page.evaluate((admin) => window.localStorage.setItem('authorized', JSON.stringify({ 'operator-admin-key': { name: 'operator-admin-key', value: admin } })), ADMIN);
    await page.reload({ waitUntil: 'networkidle0' });
    await page.waitForSelector('.btn.authorize');
    expect(await page.evaluate(() => JSON.stringify(window.localStorage))).toBe('{}');

    // the API key (Enter) and the admin key (its form's Authorize button)
    await page.click('.btn.authorize');
    await page.waitForSelector('.modal-ux input');
    await page.keyboard.type(key);
    await page.keyboard.press('Enter');
    await page.waitForFunction(() => document.querySelectorAll('.modal-ux .auth-container')[0]?.textContent?.includes('Logout'));
    await page.type('.modal-ux .auth-container:nth-of-type(2) input', ADMIN);
    await page.click('.modal-ux .auth-container:nth-of-type(2) .btn.modal-btn.auth.authorize');
    await page.waitForFunction(() => document.querySelectorAll('.modal-ux .auth-container')[1]?.textContent?.includes('Logout'));
    await page.click('.modal-ux .btn-done');
    const stored = async (p: Page) => p.evaluate(() => ({ local: JSON.stringify(window.localStorage), session: JSON.stringify(window.sessionStorage) }));
    const afterAuthorize = await stored(page);
    expect(afterAuthorize.local).toBe('{}');
    expect(afterAuthorize.session).toContain(key);
    expect(afterAuthorize.session).toContain(ADMIN);

    // a reload of the same tab keeps both, and a request made in it carries the API key
    await page.reload({ waitUntil: 'networkidle0' });
    await page.waitForSelector('.btn.authorize');
    const authorized = () => page.evaluate(() => Object.keys((window as any).ui.authSelectors.authorized().toJS()).sort());
    await pollUntil(authorized, (names) => names.length === 2, { timeoutMs: BROWSER_WAIT_MS, what: 'the authorizations to be restored after the reload' });
    expect(await authorized()).toEqual(['api-key', 'operator-admin-key']);
    const usage = 'operations-usage-getUsage';
    await page.click(`#${usage} .opblock-summary`);
    await page.waitForSelector(`#${usage} .try-out__btn`);
    await page.click(`#${usage} .try-out__btn`);
    const answer = await execute(page, usage, '');
    expect([answer.status, JSON.parse(answer.body).owner]).toEqual(['200', 'swagger']);
    expect((await stored(page)).local).toBe('{}');

    // another tab of the same browser starts without them
    const other = await browser.newPage();
    await other.goto(`${t.url}/docs`, { waitUntil: 'networkidle0' });
    await other.waitForSelector('.btn.authorize');
    expect(await other.evaluate(() => Object.keys((window as any).ui.authSelectors.authorized().toJS()))).toEqual([]);
    await other.close();

    // Logout forgets them, and a reload then has nothing to restore
    await page.click('.btn.authorize');
    await page.waitForSelector('.modal-ux .auth-container');
    const logouts = () => page.$$eval('.modal-ux button', (buttons) => buttons.filter((b) => b.textContent?.trim() === 'Logout').length);
    expect(await logouts()).toBe(2);
    for (let left = 2; left > 0; left--) {
      await page.$$eval('.modal-ux button', (buttons) => buttons.find((b) => b.textContent?.trim() === 'Logout')?.click());
      await page.waitForFunction((n) => [...document.querySelectorAll('.modal-ux button')].filter((b: any) => b.textContent?.trim() === 'Logout').length === n, {}, left - 1);
    }
    expect(await stored(page)).toEqual({ local: '{}', session: '{}' });
    await page.reload({ waitUntil: 'networkidle0' });
    await page.waitForSelector('.btn.authorize');
    expect(await authorized()).toEqual([]);
    await page.close();
    // 20 s of browser work when the machine is quiet: its budget allows for CI's six files at once on two cores
  });

  it("offers a speech example's answer as a download of the bytes it answered (not a player of its URL, which has no GET), which plays", async () => {
    const op = 'operations-speech-createOpenAiSpeech';
    const page = await browser.newPage();
    await openAuthorized(page, t.url, key);
    await page.click('.modal-ux .btn-done');
    await page.click(`#${op} .opblock-summary`);
    await page.waitForSelector(`#${op} .try-out__btn`);
    await page.click(`#${op} .try-out__btn`);
    await page.select(`#${op} .opblock-section-request-body .examples-select-element`, 'simple');
    await page.click(`#${op} .execute`);
    // offered as a download of the answer's own bytes (a blob: URL), which decode and play
    await page.waitForSelector(`#${op} .live-responses-table a[download]`);
    const offered = await page.$eval(`#${op} .live-responses-table a[download]`, async (link: any) => {
      const audio = document.createElement('audio');
      audio.src = link.href;
      audio.muted = true;
      await audio.play();
      await new Promise((resolve) => (audio.currentTime > 0 ? resolve(null) : audio.addEventListener('timeupdate', resolve, { once: true })));
      return { text: link.textContent, href: link.href, file: link.getAttribute('download'), playing: audio.currentTime > 0, seconds: audio.duration, error: audio.error?.message ?? null };
    });
    expect(offered).toEqual({ text: 'Download file', href: expect.stringMatching(/^blob:/), file: 'speech.mp3', playing: true, seconds: expect.any(Number), error: null });
    expect(offered.seconds).toBeGreaterThan(1);
    expect(await page.$eval(`#${op} .live-responses-table .response .response-col_status`, (e) => e.textContent?.trim())).toBe('200');
    expect(await page.$eval(`#${op} .request-url pre`, (e) => e.textContent)).toBe(`${t.url}/openai/v1/audio/speech`);
    await page.close();
  });

  /**
   * Every pre-filled example, run as it is in one authorized page: one test per operation (each a few seconds of
   * browser work; as one test of them all, 90 s quiet, it passed its budget on a loaded CI machine), then the
   * tasks they started to their success, then each example sent again. The tests share the page and what was
   * started, so they run in order.
   */
  describe('every pre-filled example', () => {
    let page: Page;
    let doc: any;
    let songFetched = false;
    const created: { what: string; id: string; success: string; state: (id: string) => Promise<string> }[] = [];

    it('authorizes the API key when one is pasted and Enter pressed, and the examples listed here are those the served document pre-fills', async () => {
      page = await browser.newPage();
      await openAuthorized(page, t.url, key);
      const forms = await page.$$eval('.modal-ux .auth-container', (els) => els.map((e) => [e.querySelector('h4')?.textContent?.trim(), e.textContent?.includes('Logout')]));
      expect(forms).toEqual([
        [expect.stringMatching(/^api-key/), true],
        [expect.stringMatching(/^operator-admin-key/), false],
        [expect.stringMatching(/^operator-metrics-token/), false],
        // the same team key as ElevenLabs' SDKs send it (xi-api-key), for its music door, which takes the Bearer one too
        [expect.stringMatching(/^elevenlabs-xi-api-key/), false],
      ]);
      await page.click('.modal-ux .btn-done');

      // Which examples run: every one the served document pre-fills, each listed above as one that succeeds or one that needs the caller's own ids.
      doc = (await api(t.url, 'GET', '/docs-json')).body;
      const documented: Record<string, string[]> = {};
      for (const item of Object.values<any>(doc.paths)) {
        for (const op of Object.values<any>(item)) {
          const examples = op?.requestBody?.content?.['application/json']?.examples;
          if (examples) documented[`operations-${op.tags[0].replace(/\s/g, '_')}-${op.operationId}`] = Object.keys(examples).sort();
        }
      }
      expect(Object.fromEntries(OPERATIONS.map((o) => [o.operation, [...o.examples, ...(o.ownIds?.examples ?? [])].sort()]))).toEqual(documented);
    });

    // The new song in the browser, as soon as its example answered: its id, read from that answer in the panel, typed into
    // GET /music-a/fetch/{task_id}'s Try it out, executed again until the panel shows the task ended (a deadline, no fixed
    // sleeps); it must be SUCCESS, with its two takes complete.
    const fetchSongInBrowser = async (songId: string) => {
      expect(songId).toMatch(/^[0-9a-f-]{36}$/);
      await page.click(`#${SONG.fetch} .opblock-summary`);
      await page.waitForSelector(`#${SONG.fetch} .try-out__btn`);
      await page.click(`#${SONG.fetch} .try-out__btn`);
      await page.type(`#${SONG.fetch} tr[data-param-name="task_id"] input`, songId);
      let shown = '';
      const fetched = await pollUntil(
        async () => {
          const answer = await execute(page, SONG.fetch, shown);
          shown = answer.shown;
          return { status: answer.status, text: answer.body, body: JSON.parse(answer.body) };
        },
        (a) => a.status !== '200' || !UNDER_WAY.includes(a.body.data?.status),
        // each Execute renders the whole answer again in the page: twice a second is enough to see it end
        { timeoutMs: 180_000, intervalMs: 500, what: `the new song ${songId} to end, fetched in Swagger UI` },
      );
      await page.click(`#${SONG.fetch} .opblock-summary`);
      expect([fetched.status, fetched.text]).toEqual(['200', expect.stringContaining('"status": "SUCCESS"')]);
      expect(fetched.body.data).toEqual(expect.objectContaining({ task_id: songId, action: 'MUSIC', status: 'SUCCESS', fail_reason: '' }));
      expect(fetched.body.data.data).toHaveLength(2);
      for (const clip of fetched.body.data.data) {
        expect(clip).toEqual(expect.objectContaining({ status: 'complete', audio_url: expect.stringMatching(/^https?:\/\//) }));
        expect(clip.metadata.duration).toBeGreaterThan(0);
      }
      songFetched = true;
    };

    // Each example once, as it is, in the browser: every task it starts must reach its success (the new song is also
    // fetched in the browser), and an example that needs the caller's own ids answers 404 naming the field. Audio
    // examples are sent with the others again below, while the worker runs.
    it.each(OPERATIONS.filter((op) => !op.audio).map((op) => [op.operation, op] as const))('runs %s\'s examples as they are', async (_name, op) => {
      expect(page).toBeDefined();
      await page.click(`#${op.operation} .opblock-summary`);
      await page.waitForSelector(`#${op.operation} .try-out__btn`);
      await page.click(`#${op.operation} .try-out__btn`);
      let shown = '';
      for (const example of [...op.examples, ...(op.ownIds?.examples ?? [])]) {
        await page.select(`#${op.operation} .opblock-section-request-body .examples-select-element`, example);
        const answer = await execute(page, op.operation, shown);
        shown = answer.shown;
        const what = `${op.operation} "${example}"`;
        const body = JSON.parse(answer.body);
        if (!op.examples.includes(example)) {
          expect([what, answer.status, body]).toEqual([what, '404', expect.objectContaining({ code: op.ownIds!.code ?? 'not_found', message: expect.stringMatching(op.ownIds!.field), request_id: expect.any(String) })]);
          continue;
        }
        expect([what, answer.status]).toEqual([what, expect.stringMatching(/^20[01]$/)]);
        if (op.task) created.push({ what, id: op.task.idOf(body), success: op.task.success, state: (id) => op.task!.state(key, t, id) });
        else expect([what, body]).toEqual([what, op.answer]);
        if (op.operation === SONG.operation && example === SONG.example) await fetchSongInBrowser(op.task!.idOf(body));
      }
      // closed again: Swagger UI renders every open operation again at each change, the page slows with each one left open
      await page.click(`#${op.operation} .opblock-summary`);
    });

    it('brings every task an example started to its success', async () => {
      expect([created.length > 0, songFetched]).toEqual([true, true]);
      for (const task of created) {
        const final = await pollUntil(() => task.state(task.id), (s) => !UNDER_WAY.includes(s), { timeoutMs: 180_000, what: task.what });
        expect([task.what, final]).toEqual([task.what, task.success]);
      }
      await page.close();
    });

    // Each example again, as it is: accepted again, so it holds no value that must be unique among the caller's
    // tasks (such as an external_task_id). What is sent is the example's value in the served document, the body
    // the browser sent the first time; the task it starts is the same request as the first, whose run in the
    // browser to success was seen above, so the worker instance stops first and these stay queued.
    const sendAgain = async (which: (op: Operation) => boolean) => {
      expect(doc).toBeDefined();
      for (const [route, item] of Object.entries<any>(doc.paths)) {
        for (const [method, operation] of Object.entries<any>(item)) {
          const examples = operation?.requestBody?.content?.['application/json']?.examples;
          if (!examples) continue;
          const op = OPERATIONS.find((o) => o.operation === `operations-${operation.tags[0].replace(/\s/g, '_')}-${operation.operationId}`)!;
          if (!which(op)) continue;
          for (const [example, { value }] of Object.entries<any>(examples)) {
            const what = `${op.operation} "${example}" again`;
            const again = await api(t.url, method.toUpperCase(), route, { key, body: value });
            if (!op.examples.includes(example)) expect([what, again.status, again.body.code]).toEqual([what, 404, op.ownIds?.code ?? 'not_found']);
            else if (op.audio) expect([what, again.status, again.headers.get('content-type')]).toEqual([what, 200, expect.stringMatching(/^(audio\/|text\/event-stream)/)]);
            else if (op.task) expect([what, [200, 201].includes(again.status)]).toEqual([what, true]);
            else expect([what, again.status, again.body]).toEqual([what, 200, op.answer]);
          }
        }
      }
    };

    // a door that answers when its task ends (OpenAI's images, the audio doors) is sent again while the worker runs
    it('accepts each example that answers when its task ends again, while the worker runs', async () => {
      await sendAgain((op) => op.held === true);
      // each waits for its task's end: 8 s quiet, 43 s beside the full suite
    });

    it('accepts every other example again, queued with no worker', async () => {
      await worker!.close();
      worker = undefined;
      await sendAgain((op) => op.held !== true);
    });
  });
});
