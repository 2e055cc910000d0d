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
 * Swagger UI page that loads in 3 s on a quiet machine once took over 30 s (puppeteer's default).
 * Tests give their browser steps the default budget (120 s) or more, so a step that hangs fails
 * here, naming what it waited for, before the test's budget ends without saying where.
 */
export const BROWSER_WAIT_MS = 60_000;

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
