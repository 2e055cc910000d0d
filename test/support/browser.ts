import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import puppeteer, { type Browser, type Page } from 'puppeteer-core';

/** Debian's chromium (installed by .ci/run); CHROMIUM_PATH names another. */
export const CHROMIUM = [process.env.CHROMIUM_PATH, '/usr/bin/chromium', '/usr/bin/chromium-browser', '/usr/bin/google-chrome'].find((p): p is string => !!p && existsSync(p));

/**
 * How long a page waits for what it is told to wait for (a navigation, a selector, a function).
 * A hang detector, not a measure of speed: CI runs six test files at once on two cores, where a
 * Swagger UI page that loads in 2 s on a quiet machine once took over 30 s (puppeteer's default; the
 * file took 609 s there against 65 s alone here, and 112 s beside the whole suite on this machine).
 */
export const BROWSER_WAIT_MS = 120_000;

/**
 * Every browser test's budget (`jest.setTimeout` in each browser file): the longest takes 14 s quiet, so this
 * is twenty times that, and more than two of the waits above, so that a step that hangs fails naming what it
 * waited for before the test's budget ends without saying where.
 */
export const BROWSER_TEST_BUDGET_MS = 300_000;

export interface TestBrowser {
  browser: Browser;
  /** A new tab whose waits all default to BROWSER_WAIT_MS. */
  newPage(): Promise<Page>;
  close(): Promise<void>;
}

/** A headless Chromium on its own profile directory, removed at close. */
export async function launchBrowser(extraArgs: string[] = []): Promise<TestBrowser> {
  if (!CHROMIUM) throw new Error('no Chromium found');
  const profile = await mkdtemp(path.join(tmpdir(), 'mgw-chromium-'));
  const browser = await puppeteer.launch({
    executablePath: CHROMIUM,
    headless: true,
    userDataDir: profile,
    args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync', ...extraArgs],
  });
  return {
    browser,
    async newPage() {
      const page = await browser.newPage();
      page.setDefaultTimeout(BROWSER_WAIT_MS);
      page.setDefaultNavigationTimeout(BROWSER_WAIT_MS);
      return page;
    },
    async close() {
      await browser.close();
      await rm(profile, { recursive: true, force: true });
    },
  };
}
