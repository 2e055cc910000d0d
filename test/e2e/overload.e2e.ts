import http from 'node:http';
import pg from 'pg';
import { padPng, png } from '../support/images.js';
import { pollUntil } from '../support/poll.js';
import { api, startTestApp, type TestApp } from '../support/test-app.js';

const EXPAND = '/video-a/v1/images/editing/expand';
const MB = 1024 * 1024;

/** Starts a request that declares `length` bytes and sends only the first part, so it stays in flight; returns how to finish it. */
function holdRequest(url: string, key: string, body: string): { finish(): Promise<{ status: number; body: string }> } {
  const { hostname, port } = new URL(url);
  const head = body.slice(0, 1000);
  const req = http.request({ hostname, port, path: EXPAND, method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) } });
  const answer = new Promise<{ status: number; body: string }>((resolve, reject) => {
    req.on('response', (res) => {
      let text = '';
      res.on('data', (c: Buffer) => (text += c.toString()));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text }));
    });
    req.on('error', reject);
  });
  req.write(head);
  return {
    finish: () => {
      req.end(body.slice(head.length));
      return answer;
    },
  };
}

describe('overload is answered, not failed', () => {
  let t: TestApp;
  let key: string;
  let image: string;
  beforeAll(async () => {
    // the pool's one connection is waited for 3 s: long enough that on a loaded machine the service's own
    // background queries never make the requests of the first test wait out of it, short enough for the second
    t = await startTestApp({ ROLE: 'api', BODY_INFLIGHT_MAX_BYTES: String(MB), DATABASE_POOL_SIZE: '1', DATABASE_POOL_TIMEOUT_MS: '3000' });
    key = await t.createKey();
    // a real PNG padded to ~450 kB: two of them in flight exceed the 1 MB bound, one does not
    image = padPng(await png(320, 320), 450 * 1024).toString('base64');
  });
  afterAll(() => t.close());

  const expandBody = () => JSON.stringify({ image, up_expansion_ratio: 0.1, bottom_expansion_ratio: 0, left_expansion_ratio: 0, right_expansion_ratio: 0 });

  it('refuses a large body with 503 and Retry-After while others fill the in-flight bound, before reading it', async () => {
    const first = holdRequest(t.url, key, expandBody());
    const second = holdRequest(t.url, key, expandBody());
    let answers: { status: number; body: string }[] | undefined;
    try {
      // the held requests reach the service in their own time: until both are read in part, a third is taken
      const third = await pollUntil(() => api(t.url, 'POST', EXPAND, { key, rawBody: expandBody(), headers: { 'content-type': 'application/json' } }), (r) => r.status !== 200, { what: 'a refusal' });
      expect([third.status, third.body.code, third.headers.get('retry-after')]).toEqual([503, 5001, '2']);
      expect(third.body.message).toMatch(/busy reading other large requests/);
      expect(third.body.request_id).toBe(third.headers.get('x-request-id'));
    } finally {
      answers = [await first.finish(), await second.finish()];
    }
    expect(answers.map((a) => a.status).sort()).toEqual([200, 503]); // the second found the first in flight
    expect(answers.find((a) => a.status === 503)?.body).toMatch(/busy reading other large requests/);
    // once they are answered, the bound is free again
    expect((await api(t.url, 'POST', EXPAND, { key, rawBody: expandBody(), headers: { 'content-type': 'application/json' } })).status).toBe(200);
  });

  it('answers 503 with Retry-After when no database connection comes in time, while /health/ready still answers at once', async () => {
    const blocker = new pg.Client({ connectionString: t.db.url });
    await blocker.connect();
    try {
      await blocker.query('BEGIN');
      // the admission of a new task locks its owner's counters; reading tasks does not touch them
      await blocker.query('LOCK TABLE owner_counters IN ACCESS EXCLUSIVE MODE');
      // this insert takes the pool's only connection and waits on the lock
      const stuck = api(t.url, 'POST', EXPAND, { key, rawBody: expandBody(), headers: { 'content-type': 'application/json' } });
      const waiting = await pollUntil(() => api(t.url, 'GET', '/video-b/v1/generations', { key }), (r) => r.status !== 200, { what: 'a request to find no connection' });
      expect([waiting.status, waiting.body.code, waiting.headers.get('retry-after')]).toEqual([503, 5001, expect.stringMatching(/^\d+$/)]);
      const started = Date.now();
      expect((await api(t.url, 'GET', '/health/ready')).status).toBe(200);
      expect(Date.now() - started).toBeLessThan(1000);
      await blocker.query('ROLLBACK');
      expect((await stuck).status).toBe(200);
    } finally {
      await blocker.end();
    }
  });
});
