import http from 'node:http';
import { AuthFailures } from '../../src/modules/keys/auth-failures.js';
import { generateKey } from '../../src/modules/keys/key-material.js';
import { pollUntil } from '../support/poll.js';
import { createTestDatabase, queryDb, startTestApp, TEST_METRICS_TOKEN, type TestApp, type TestDatabase } from '../support/test-app.js';

const ADMIN = 'admin-secret-0123456789';
const ROUTE = '/video-b/v1/generations';

interface Answer {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: any;
}

/**
 * GET `path` from the local address `from` (a loopback address: Linux answers on all of 127/8), so one test
 * is several clients; `key` as the Bearer credential, and any other headers.
 */
function get(t: TestApp, path: string, options: { from?: string; key?: string; headers?: Record<string, string> } = {}): Promise<Answer> {
  const { port } = new URL(t.url);
  const headers = { ...options.headers, ...(options.key ? { authorization: `Bearer ${options.key}` } : {}) };
  return new Promise((resolve, reject) => {
    const req = http.request({ host: '127.0.0.1', port, path, headers, localAddress: options.from ?? '127.0.0.1', agent: false }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        let body: unknown = text;
        try {
          body = JSON.parse(text);
        } catch {
          // not JSON (the metrics' text)
        }
        resolve({ status: res.statusCode ?? 0, headers: res.headers, body });
      });
    });
    req.on('error', reject);
    req.end();
  });
}

/** A well-formed key nobody has: its own prefix, so each is a new lookup unless remembered. */
const unknownKey = () => generateKey().key;

function expectLimited(answer: Answer, windowS: number): void {
  expect([answer.status, answer.body]).toEqual([429, { code: 1005, message: expect.stringMatching(/^Too many failed authentications from your address .*a credential from it that is not valid is refused/), request_id: answer.headers['x-request-id'] }]);
  const retryAfter = Number(answer.headers['retry-after']);
  expect([retryAfter >= 1, retryAfter <= windowS]).toEqual([true, true]);
}

const LIMITED_LOG = 'too many failed authentications: failed credentials from the address answered 429 until its window ends';

describe('failed authentications, limited per client address', () => {
  // a window far longer than the test, so nothing here depends on how fast the machine is
  const WINDOW_S = 600;
  let t: TestApp;
  let key: string;
  beforeAll(async () => {
    t = await startTestApp({ ADMIN_API_KEY: ADMIN, AUTH_FAILURE_WINDOW_S: String(WINDOW_S), ROLE: 'api' });
    key = await t.createKey('team-limited');
  });
  afterAll(() => t?.close());

  it('300 made-up keys from one address: 20 answers 401, then 429 with Retry-After; its valid key, the admin key and the metrics token are still served, and a forged X-Forwarded-For does not help (no TRUST_PROXY)', async () => {
    const from = '127.0.0.3';
    expect((await get(t, ROUTE, { from, key })).status).toBe(200);
    const statuses: number[] = [];
    for (let i = 0; i < 300; i++) {
      const answer = await get(t, ROUTE, { from, key: unknownKey() });
      statuses.push(answer.status);
      if (answer.status === 429) expectLimited(answer, WINDOW_S);
      else expect([i, answer.status, answer.body.code]).toEqual([i, 401, 1000]);
    }
    expect(statuses.slice(0, 20)).toEqual(Array(20).fill(401));
    expect(statuses.slice(20)).toEqual(Array(280).fill(429));
    // a stale client at the same address (behind one NAT, one Ingress) shuts nobody out: what is valid is served
    expect((await get(t, ROUTE, { from, key })).status).toBe(200);
    expect((await get(t, '/admin/keys?owner=team-limited', { from, key: ADMIN })).status).toBe(200);
    expect((await get(t, '/metrics', { from, key: TEST_METRICS_TOKEN })).status).toBe(200);
    // a key made on this instance after the address was limited is served at once
    expect((await get(t, ROUTE, { from, key: await t.createKey('team-later') })).status).toBe(200);
    // and what is not valid answers 429, whatever it is
    expectLimited(await get(t, ROUTE, { from, key: unknownKey() }), WINDOW_S);
    expectLimited(await get(t, ROUTE, { from, key: `${key.slice(0, -1)}${key.endsWith('x') ? 'y' : 'x'}` }), WINDOW_S); // a known prefix, a wrong secret
    expectLimited(await get(t, ROUTE, { from, key: 'not-a-key' }), WINDOW_S);
    expectLimited(await get(t, ROUTE, { from, headers: { authorization: 'Basic dXNlcjpwYXNz' } }), WINDOW_S);
    expectLimited(await get(t, '/admin/keys', { from, key: `${ADMIN}x` }), WINDOW_S);
    expectLimited(await get(t, '/metrics', { from, key: `${TEST_METRICS_TOKEN}-wrong` }), WINDOW_S);
    expectLimited(await get(t, ROUTE, { from, key: unknownKey(), headers: { 'x-forwarded-for': '198.51.100.20' } }), WINDOW_S);
    // no credential guesses nothing: 401 as always, saying what is missing
    const missing = await get(t, ROUTE, { from });
    expect([missing.status, missing.body.code]).toEqual([401, 1001]);
    // public routes are not limited
    expect((await get(t, '/health', { from })).status).toBe(200);
    // logged once, with the address
    const lines = t.logs.lines.filter((l) => l.msg === LIMITED_LOG);
    expect(lines).toEqual([expect.objectContaining({ address: from, failures: 20 })]);
  });

  it('another address is not limited: its valid key works, its wrong keys answer 401', async () => {
    const from = '127.0.0.4';
    expect((await get(t, ROUTE, { from, key })).status).toBe(200);
    const wrong = await get(t, ROUTE, { from, key: unknownKey() });
    expect([wrong.status, wrong.body.code]).toEqual([401, 1000]);
    expect((await get(t, ROUTE, { from, key })).status).toBe(200);
  });

  it('counts malformed keys, wrong admin keys and revoked keys, not a missing header; 19 refusals leave the address free, the 20th limits it', async () => {
    const from = '127.0.0.5';
    for (let i = 0; i < 30; i++) expect((await get(t, ROUTE, { from })).status).toBe(401); // no credential: nothing guessed
    const revoked = await t.createKey('team-revoked');
    const { body: list } = await get(t, '/admin/keys?owner=team-revoked', { key: ADMIN });
    const revokedId = (list as { id: string }[])[0].id;
    const res = await fetch(`${t.url}/admin/keys/${revokedId}`, { method: 'DELETE', headers: { authorization: `Bearer ${ADMIN}` } });
    expect(res.status).toBe(200);
    const refusals = [
      ...Array.from({ length: 6 }, () => ({ path: ROUTE, key: 'not-a-key', code: 1002 })),
      ...Array.from({ length: 6 }, () => ({ path: '/admin/keys', key: `${ADMIN}x`, code: 1002 })),
      ...Array.from({ length: 7 }, () => ({ path: ROUTE, key: revoked, code: 1004 })),
    ];
    for (const [i, r] of refusals.entries()) {
      const answer = await get(t, r.path, { from, key: r.key });
      expect([i, answer.status, answer.body.code]).toEqual([i, 401, r.code]);
    }
    // 19 refused: still free
    expect((await get(t, ROUTE, { from, key })).status).toBe(200);
    const twentieth = await get(t, ROUTE, { from, key: unknownKey() });
    expect(twentieth.status).toBe(401);
    // limited: the revoked key is refused with 429 now, the valid one served
    expectLimited(await get(t, ROUTE, { from, key: revoked }), WINDOW_S);
    expect((await get(t, ROUTE, { from, key })).status).toBe(200);
  });
});

describe('the limit behind a proxy, when it ends, and on /metrics', () => {
  let t: TestApp;
  let key: string;
  beforeAll(async () => {
    // the proxy is on loopback: every request here comes through it, each client named in X-Forwarded-For
    t = await startTestApp({ ADMIN_API_KEY: ADMIN, AUTH_FAILURE_LIMIT: '3', AUTH_FAILURE_WINDOW_S: '2', TRUST_PROXY: 'loopback', ROLE: 'api' });
    key = await t.createKey('team-proxied');
  });
  afterAll(() => t?.close());

  it('with TRUST_PROXY, counts each client by X-Forwarded-For: one limited, another behind the same proxy not', async () => {
    const limited = { 'x-forwarded-for': '203.0.113.7' };
    for (let i = 0; i < 3; i++) expect((await get(t, ROUTE, { key: unknownKey(), headers: limited })).status).toBe(401);
    expectLimited(await get(t, ROUTE, { key: unknownKey(), headers: limited }), 2);
    expect((await get(t, ROUTE, { key, headers: limited })).status).toBe(200);
    expect((await get(t, ROUTE, { key: unknownKey(), headers: { 'x-forwarded-for': '203.0.113.8' } })).status).toBe(401);
    // the proxy appended the client's address to what the client sent: the last entry is the one believed
    expectLimited(await get(t, ROUTE, { key: unknownKey(), headers: { 'x-forwarded-for': '198.51.100.1, 203.0.113.7' } }), 2);
    expect((await get(t, ROUTE, { key: unknownKey(), headers: { 'x-forwarded-for': '203.0.113.7, 203.0.113.9' } })).status).toBe(401);
    // and the limit ends with its window: a refused key is answered 401 again (the failures past the limit did not extend it)
    await pollUntil(() => get(t, ROUTE, { key: unknownKey(), headers: limited }), (a) => a.status === 401, { timeoutMs: 15_000, what: 'the window to end' });
  });

  it('counts wrong metrics tokens, not a team key sent there (403); from a limited address the right one is served, a wrong one answers 429', async () => {
    const from = { 'x-forwarded-for': '203.0.113.10' };
    // a scraper given its team's key: refused, never counted (more of them than the limit; the wrong tokens below still get their 401s)
    for (let i = 0; i < 4; i++) expect((await get(t, '/metrics', { key, headers: from })).status).toBe(403);
    for (let i = 0; i < 3; i++) {
      const answer = await get(t, '/metrics', { key: `${TEST_METRICS_TOKEN}-wrong`, headers: from });
      expect([answer.status, answer.body.code]).toEqual([401, 1000]);
    }
    expectLimited(await get(t, '/metrics', { key: `${TEST_METRICS_TOKEN}-wrong`, headers: from }), 2);
    expect((await get(t, '/metrics', { key, headers: from })).status).toBe(403);
    expect((await get(t, '/metrics', { key: TEST_METRICS_TOKEN, headers: from })).status).toBe(200);
    expect((await get(t, '/metrics', { key: ADMIN, headers: from })).status).toBe(200);
  });
});

describe('failed authentications counted across instances', () => {
  let a: TestApp;
  let b: TestApp;
  let key: string;
  beforeAll(async () => {
    a = await startTestApp({ ADMIN_API_KEY: ADMIN, AUTH_FAILURE_WINDOW_S: '600', ROLE: 'api' });
    b = await startTestApp({ ADMIN_API_KEY: ADMIN, AUTH_FAILURE_WINDOW_S: '600', ROLE: 'api' }, { db: a.db });
    key = await a.createKey('team-two');
  });
  afterAll(async () => {
    await b?.close();
    await a?.close();
  });

  it("19 failures on one instance and 1 on the other limit the address on both, each hearing of the other's", async () => {
    const from = '127.0.0.6';
    for (let i = 0; i < 19; i++) expect((await get(a, ROUTE, { from, key: unknownKey() })).status).toBe(401);
    expect((await get(b, ROUTE, { from, key: unknownKey() })).status).toBe(401);
    // neither counted 20 itself: each is limited when it has heard of the other's (logged once each)
    // neither counted 20 itself: each is limited once it has heard of the other's (its state read, not asked over
    // HTTP: every request with a made-up key would be a failure more)
    for (const t of [a, b]) await pollUntil(async () => t.app.get(AuthFailures).retryAfterS(from), (s) => s > 0, { what: 'the address to be limited' });
    for (const t of [a, b]) {
      expectLimited(await get(t, ROUTE, { from, key: unknownKey() }), 600);
      expect((await get(t, ROUTE, { from, key })).status).toBe(200);
    }
    // another address is free on both
    for (const t of [a, b]) expect((await get(t, ROUTE, { from: '127.0.0.7', key: unknownKey() })).status).toBe(401);
  });
});

describe('unknown keys, remembered for AUTH_CACHE_TTL_MS', () => {
  /** Index and sequential scans of api_keys: every lookup of a key is one (PostgreSQL's own statistics). */
  async function keyScans(db: TestDatabase): Promise<number> {
    // a backend's statistics reach the shared ones at the latest when it exits: wait until the app's are gone
    await pollUntil(
      async () => Number((await queryDb<{ n: string }>(db, 'SELECT count(*) AS n FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()'))[0].n),
      (n) => n === 0,
      { what: "the closed app's connections to end" },
    );
    const [row] = await queryDb<{ n: string }>(db, "SELECT coalesce(idx_scan, 0) + coalesce(seq_scan, 0) AS n FROM pg_stat_user_tables WHERE relname = 'api_keys'");
    return Number(row?.n ?? 0); // no table yet: before the first start
  }

  /**
   * Sends the same made-up key (`fresh`: a new one each time) `times` times to an app started with `env`,
   * and returns the key lookups that cost: the scans of api_keys made while it ran, less those of an app
   * started and stopped on the same database without sending anything (the first start also applies the
   * migrations, which scan it).
   */
  async function lookupsFor(env: Record<string, string>, times: number, fresh = false): Promise<number> {
    const db = await createTestDatabase();
    const run = async (send: number): Promise<number> => {
      const before = await keyScans(db);
      const t = await startTestApp({ ROLE: 'api', AUTH_FAILURE_LIMIT: '0', ...env }, { db });
      try {
        const bogus = unknownKey();
        for (let i = 0; i < send; i++) expect([401, 429]).toContain((await get(t, ROUTE, { key: fresh ? unknownKey() : bogus })).status);
      } finally {
        await t.close();
      }
      return (await keyScans(db)) - before;
    };
    try {
      await run(0); // the migrations
      const idle = await run(0);
      return (await run(times)) - idle;
    } finally {
      await db.drop();
    }
  }

  it('300 requests with one made-up key cost one lookup while it is remembered (none remembered: 300)', async () => {
    // a long TTL, so the count does not depend on how fast 300 requests go on a loaded machine
    expect(await lookupsFor({ AUTH_CACHE_TTL_MS: '60000' }, 300)).toBe(1);
    // the same without the cache: each one a lookup (the measure sees them)
    expect(await lookupsFor({ AUTH_CACHE_TTL_MS: '0' }, 300)).toBeGreaterThanOrEqual(300);
  }, 120_000);

  it('from a limited address a made-up key costs no lookup: 320 new ones cost 20 lookups and one read of the prefixes (no limit: 320)', async () => {
    // a long TTL: the prefixes are read once however long the 320 requests take on a loaded machine
    expect(await lookupsFor({ AUTH_FAILURE_LIMIT: '20', AUTH_CACHE_TTL_MS: '60000' }, 320, true)).toBe(21);
    expect(await lookupsFor({ AUTH_FAILURE_LIMIT: '0', AUTH_CACHE_TTL_MS: '60000' }, 320, true)).toBeGreaterThanOrEqual(320);
  }, 120_000);

  it('a key created on another instance after the prefixes were read works from a limited address within AUTH_CACHE_TTL_MS', async () => {
    const TTL_MS = 2000;
    const t = await startTestApp({ ROLE: 'api', AUTH_CACHE_TTL_MS: String(TTL_MS), AUTH_FAILURE_LIMIT: '3', AUTH_FAILURE_WINDOW_S: '600' });
    try {
      const from = '127.0.0.8';
      for (let i = 0; i < 3; i++) expect((await get(t, ROUTE, { from, key: unknownKey() })).status).toBe(401);
      const material = generateKey();
      expectLimited(await get(t, ROUTE, { from, key: material.key }), 600);
      await queryDb(t.db, "INSERT INTO api_keys (id, prefix, key_hash, owner, name, created_at) VALUES (gen_random_uuid(), $1, $2, 'team-new', 'elsewhere', now())", [material.prefix, material.hash]);
      const inserted = Date.now();
      await pollUntil(() => get(t, ROUTE, { from, key: material.key }), (a) => a.status === 200, { timeoutMs: 30_000, intervalMs: 50, what: 'the new key to work' });
      const tookMs = Date.now() - inserted;
      expect([tookMs, tookMs < TTL_MS + 5000]).toEqual([tookMs, true]);
    } finally {
      await t.close();
    }
  });

  it('a key created (as by another instance) after it was looked up and not found works within AUTH_CACHE_TTL_MS', async () => {
    const TTL_MS = 2000;
    // no failure limit: the poll below sends the key, refused, many times a second
    const t = await startTestApp({ ROLE: 'api', AUTH_CACHE_TTL_MS: String(TTL_MS), AUTH_FAILURE_LIMIT: '0' });
    try {
      const material = generateKey();
      expect((await get(t, ROUTE, { key: material.key })).status).toBe(401);
      // the row another instance would insert, straight into the shared database
      await queryDb(t.db, "INSERT INTO api_keys (id, prefix, key_hash, owner, name, created_at) VALUES (gen_random_uuid(), $1, $2, 'team-new', 'elsewhere', now())", [material.prefix, material.hash]);
      const inserted = Date.now();
      await pollUntil(() => get(t, ROUTE, { key: material.key }), (a) => a.status === 200, { timeoutMs: 30_000, intervalMs: 50, what: 'the new key to work' });
      const tookMs = Date.now() - inserted;
      // remembered as unknown for the TTL at most (a generous margin for a loaded machine; what matters is that it is not for long)
      expect([tookMs, tookMs < TTL_MS + 5000]).toEqual([tookMs, true]);
    } finally {
      await t.close();
    }
  });
});
