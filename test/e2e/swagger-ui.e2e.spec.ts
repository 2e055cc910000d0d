import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import puppeteer, { type Browser, type Page } from 'puppeteer-core';
import { pollUntil } from '../support/poll.js';
import { api, startTestApp, type TestApp } from '../support/test-app.js';

/** Code passed to page functions runs in the browser; the project's types are Node's. */
declare const document: any;

/** Debian's chromium (installed by .ci/run); CHROMIUM_PATH names another. */
const CHROMIUM = [process.env.CHROMIUM_PATH, '/usr/bin/chromium', '/usr/bin/chromium-browser', '/usr/bin/google-chrome'].find((p): p is string => !!p && existsSync(p));
const describeWithBrowser = CHROMIUM ? describe : describe.skip;
if (!CHROMIUM) process.stderr.write('swagger-ui.e2e: no Chromium found (set CHROMIUM_PATH, or apt-get install chromium); the browser test is skipped\n');

async function generationState(key: string, t: TestApp, id: string): Promise<string> {
  const { state, failure_reason } = (await api(t.url, 'GET', `/video-b/v1/generations/${id}`, { key })).body;
  return state === 'failed' ? `failed: ${failure_reason}` : state;
}

/** Each pre-filled example, by operation: what its answer names, and the state the task must reach. */
const EXAMPLES: { operation: string; examples: string[]; success: string; idOf: (body: any) => string; state: (key: string, t: TestApp, id: string) => Promise<string> }[] = [
  {
    operation: 'operations-image_expand-createExpandTask',
    examples: ['base64', 'url', 'kling'],
    success: 'succeed',
    idOf: (body) => body.data.task_id,
    state: async (key, t, id) => {
      const { task_status, task_status_msg } = (await api(t.url, 'GET', `/video-a/v1/images/editing/expand/${id}`, { key })).body.data;
      return task_status === 'failed' ? `failed: ${task_status_msg}` : task_status;
    },
  },
  {
    operation: 'operations-video_generation-createGeneration',
    examples: ['keyframe', 'text', 'luma'],
    success: 'completed',
    idOf: (body) => body.id,
    state: generationState,
  },
  {
    operation: 'operations-video_generation-createVideoGeneration',
    examples: ['keyframe'],
    success: 'completed',
    idOf: (body) => body.id,
    state: generationState,
  },
  {
    operation: 'operations-audio-uploadAudioUrl',
    examples: ['sample'],
    success: 'ready',
    idOf: (body) => body.data,
    state: async (key, t, id) => {
      const { status, error } = (await api(t.url, 'GET', `/music-a/uploads/${id}`, { key })).body.data;
      return status === 'failed' ? `failed: ${error}` : status;
    },
  },
];

/** Clicks Execute and returns the answer shown, once it differs from `previous`. */
async function execute(page: Page, op: string, previous: string): Promise<{ status: string; body: string }> {
  await page.click(`#${op} .execute`);
  const selector = `#${op} .live-responses-table .response-col_description pre`;
  await page.waitForFunction((s, p) => document.querySelector(s)?.textContent && document.querySelector(s)!.textContent !== p, { timeout: 30_000 }, selector, previous);
  return {
    status: await page.$eval(`#${op} .live-responses-table .response .response-col_status`, (e) => e.textContent?.trim() ?? ''),
    body: await page.$eval(selector, (e) => e.textContent ?? ''),
  };
}

describeWithBrowser('Swagger UI in a real browser', () => {
  let t: TestApp;
  let key: string;
  let browser: Browser;
  let profile: string;
  beforeAll(async () => {
    // No ALLOW_PRIVATE_URLS and no network: the examples must work as they are.
    t = await startTestApp({ ADMIN_API_KEY: 'admin-secret-0123456789' });
    key = await t.createKey('swagger');
    profile = await mkdtemp(path.join(tmpdir(), 'mgw-chromium-'));
    browser = await puppeteer.launch({
      executablePath: CHROMIUM,
      headless: true,
      userDataDir: profile,
      args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
    });
  });
  afterAll(async () => {
    await browser?.close();
    await t.close();
    await rm(profile, { recursive: true, force: true });
  });

  it('authorizes the API key when one is pasted and Enter pressed, and runs every pre-filled example as it is, twice, to success', async () => {
    const page = await browser.newPage();
    await page.goto(`${t.url}/docs`, { waitUntil: 'networkidle0' });
    await page.waitForSelector('.btn.authorize');
    await page.click('.btn.authorize');
    await page.waitForSelector('.modal-ux input');
    await page.keyboard.type(key);
    await page.keyboard.press('Enter');
    await page.waitForFunction(() => document.querySelector('.modal-ux .auth-container')?.textContent?.includes('Authorized'), { timeout: 5000 });
    const forms = await page.$$eval('.modal-ux .auth-container', (els) => els.map((e) => [e.querySelector('h4')?.textContent?.trim(), e.textContent?.includes('Logout')]));
    expect(forms).toEqual([
      [expect.stringMatching(/^api-key/), true],
      [expect.stringMatching(/^operator-admin-key/), false],
    ]);
    await page.click('.modal-ux .btn-done');

    const created: { what: string; id: string; success: string; state: (id: string) => Promise<string> }[] = [];
    for (const { operation, examples, success, idOf, state } of EXAMPLES) {
      await page.click(`#${operation} .opblock-summary`);
      await page.waitForSelector(`#${operation} .try-out__btn`);
      await page.click(`#${operation} .try-out__btn`);
      let shown = '';
      for (const example of examples) {
        await page.select(`#${operation} .opblock-section-request-body .examples-select-element`, example);
        for (let run = 1; run <= 2; run++) {
          const answer = await execute(page, operation, shown);
          shown = answer.body;
          const body = JSON.parse(answer.body);
          const what = `${operation} "${example}" run ${run}`;
          expect([what, answer.status]).toEqual([what, expect.stringMatching(/^20[01]$/)]);
          created.push({ what, id: idOf(body), success, state: (id) => state(key, t, id) });
        }
      }
    }
    for (const task of created) {
      const final = await pollUntil(() => task.state(task.id), (s) => !['submitted', 'processing', 'pending', 'dreaming'].includes(s), { timeoutMs: 90_000, what: task.what });
      expect([task.what, final]).toEqual([task.what, task.success]);
    }
  }, 300_000);
});
