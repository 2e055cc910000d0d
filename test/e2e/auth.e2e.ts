import { pollUntil } from '../support/poll.js';
import { sendRaw } from '../support/raw-http.js';
import { api, startTestApp, type TestApp } from '../support/test-app.js';

const ADMIN = 'admin-secret-0123456789';

describe('API keys and authentication', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp({ ADMIN_API_KEY: ADMIN });
  });
  afterAll(() => t.close());

  function expectEnvelope(res: { status: number; headers: Headers; body: any }, status: number, code: number) {
    expect(res.status).toBe(status);
    expect(res.body).toEqual({ code, message: expect.any(String), request_id: expect.any(String) });
    expect(res.headers.get('x-request-id')).toBe(res.body.request_id);
  }

  it('answers 401/1001 without an Authorization header', async () => {
    const res = await api(t.url, 'GET', '/admin/keys');
    expectEnvelope(res, 401, 1001);
    expect(res.body.message).toMatch(/Authorization header is required/);
    // RFC 6750 §3: a request with no credential is challenged without an error code
    expect(res.headers.get('www-authenticate')).toBe('Bearer realm="media-gateway"');
  });

  it('challenges a credential that is not valid with invalid_token, and a 403 with nothing', async () => {
    const unknown = await api(t.url, 'GET', '/admin/keys', { key: `mgw_${'Z'.repeat(48)}` });
    const malformed = await api(t.url, 'GET', '/admin/keys', { headers: { authorization: 'Bearer' } });
    const openai = await api(t.url, 'GET', '/openai/v1/models', { key: `mgw_${'Z'.repeat(48)}` });
    for (const res of [unknown, openai]) {
      expect([res.status, res.headers.get('www-authenticate')]).toEqual([401, 'Bearer realm="media-gateway", error="invalid_token"']);
    }
    expect([malformed.status, malformed.headers.get('www-authenticate')]).toEqual([401, 'Bearer realm="media-gateway", error="invalid_request"']);
    const forbidden = await api(t.url, 'GET', '/admin/keys', { key: await t.createKey() });
    expect([forbidden.status, forbidden.headers.get('www-authenticate')]).toEqual([403, null]);
    // ElevenLabs' door takes xi-api-key, for which HTTP has no challenge: it answers as ElevenLabs does
    const elevenlabs = await api(t.url, 'POST', '/elevenlabs/v1/music', { headers: { 'xi-api-key': `mgw_${'Z'.repeat(48)}` }, body: { prompt: 'a song' } });
    expect([elevenlabs.status, elevenlabs.headers.get('www-authenticate')]).toEqual([401, null]);
  });

  it('answers 401/1002 for a scheme other than Bearer, and for a key of the wrong shape', async () => {
    expectEnvelope(await api(t.url, 'GET', '/admin/keys', { headers: { authorization: `Basic ${ADMIN}` } }), 401, 1002);
    expectEnvelope(await api(t.url, 'GET', '/admin/keys', { headers: { authorization: 'Bearer' } }), 401, 1002);
    expectEnvelope(await api(t.url, 'POST', '/admin/keys', { key: 'not-a-key', body: { owner: 'x', name: 'y' } }), 401, 1002);
  });

  it('answers 401/1000 for an unknown key of the right shape', async () => {
    const real = await t.createKey();
    const forged = real.slice(0, -4) + (real.endsWith('AAAA') ? 'BBBB' : 'AAAA');
    expectEnvelope(await api(t.url, 'GET', '/admin/keys', { key: forged }), 401, 1000);
    expectEnvelope(await api(t.url, 'GET', '/admin/keys', { key: `mgw_${'Z'.repeat(48)}` }), 401, 1000);
  });

  it('refuses Authorization sent twice (Node would keep the first), even when one of them is right', async () => {
    // fetch would join them into one header: sent as raw bytes
    const answer = await sendRaw(Number(new URL(t.url).port), Buffer.from(`GET /admin/keys HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${ADMIN}\r\nAuthorization: Bearer mgw_wrong\r\nConnection: close\r\n\r\n`));
    const [status, body] = [answer.status, JSON.parse(answer.text)];
    expect([status, body.code, body.message]).toEqual([401, 1002, expect.stringMatching(/^Authorization was sent more than once/)]);
  });

  it('accepts the Bearer scheme in any case', async () => {
    const res = await api(t.url, 'GET', '/admin/keys', { headers: { authorization: `bearer ${ADMIN}` } });
    expect(res.status).toBe(200);
  });

  it('creates a key once in plaintext, lists keys without secrets, and revokes: 401/1004 afterwards', async () => {
    const created = await api(t.url, 'POST', '/admin/keys', { key: ADMIN, body: { owner: 'team-b', name: 'ci' } });
    expect(created.status).toBe(201);
    expect(created.body).toEqual({
      id: expect.stringMatching(/^[0-9a-f-]{36}$/),
      key: expect.stringMatching(/^mgw_[A-Za-z0-9]{48}$/),
      prefix: created.body.key.slice(0, 12),
      owner: 'team-b',
      name: 'ci',
      created_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
    });
    const key = created.body.key as string;

    // the new key works on a keyed route: it passes authentication and meets the admin rule (403)
    expectEnvelope(await api(t.url, 'GET', '/admin/keys', { key }), 403, 1103);

    const list = await api(t.url, 'GET', '/admin/keys?owner=team-b', { key: ADMIN });
    expect(list.status).toBe(200);
    expect(list.body).toHaveLength(1);
    expect(Object.keys(list.body[0]).sort()).toEqual(['created_at', 'id', 'last_used_at', 'name', 'owner', 'prefix', 'revoked_at']);
    expect(JSON.stringify(list.body)).not.toContain(key.slice(12));
    // its use is recorded off the request path: soon after, not necessarily before the answer
    const used = await pollUntil(() => api(t.url, 'GET', '/admin/keys?owner=team-b', { key: ADMIN }), (r) => r.body[0]?.last_used_at !== null, { timeoutMs: 10_000, what: 'last_used_at to be written' });
    expect(used.body[0].last_used_at).toMatch(/^\d{4}-\d\d-\d\dT/);

    const revoked = await api(t.url, 'DELETE', `/admin/keys/${created.body.id}`, { key: ADMIN });
    expect(revoked.status).toBe(200);
    expect(revoked.body.revoked_at).toEqual(expect.any(String));
    const again = await api(t.url, 'DELETE', `/admin/keys/${created.body.id}`, { key: ADMIN });
    expect(again.body.revoked_at).toBe(revoked.body.revoked_at);

    const res = await api(t.url, 'GET', '/admin/keys', { key });
    expectEnvelope(res, 401, 1004);
    expect(res.body.message).toMatch(/revoked/);
  });

  it('stores only a SHA-256 hash of the key', async () => {
    const { default: pg } = await import('pg');
    const key = await t.createKey('team-hash');
    const client = new pg.Client({ connectionString: t.db.url });
    await client.connect();
    const { rows } = await client.query("SELECT * FROM api_keys WHERE owner = 'team-hash'");
    await client.end();
    expect(JSON.stringify(rows)).not.toContain(key.slice(12));
    const { createHash } = await import('node:crypto');
    expect(rows[0].key_hash).toBe(createHash('sha256').update(key).digest('hex'));
  });

  it('answers 404 for revoking an unknown key', async () => {
    expectEnvelope(await api(t.url, 'DELETE', '/admin/keys/6f1c2d3e-4a5b-4c6d-8e7f-9a0b1c2d3e4f', { key: ADMIN }), 404, 1203);
    expectEnvelope(await api(t.url, 'DELETE', '/admin/keys/not-a-uuid', { key: ADMIN }), 404, 1203);
  });

  it('validates a new key, naming every bad field', async () => {
    const res = await api(t.url, 'POST', '/admin/keys', { key: ADMIN, body: { owner: 'bad owner!', name: '' } });
    expectEnvelope(res, 400, 1201);
    expect(res.body.message).toMatch(/owner may contain only/);
    expect(res.body.message).toMatch(/name must be 1 to 128 characters/);
  });

  it('refuses a wrong admin key with 401 and the admin key on keyed routes', async () => {
    expectEnvelope(await api(t.url, 'GET', '/admin/keys', { key: `${ADMIN}x` }), 401, 1002);
  });
});

describe('admin API without ADMIN_API_KEY', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp();
  });
  afterAll(() => t.close());

  it('answers 404 on every admin route, with or without a key', async () => {
    const key = await t.createKey();
    for (const [method, path] of [
      ['GET', '/admin/keys'],
      ['POST', '/admin/keys'],
      ['DELETE', '/admin/keys/6f1c2d3e-4a5b-4c6d-8e7f-9a0b1c2d3e4f'],
    ]) {
      for (const k of [undefined, key]) {
        const res = await api(t.url, method, path, { key: k, body: method === 'POST' ? { owner: 'a', name: 'b' } : undefined });
        expect(res.status).toBe(404);
        expect(res.body.code).toBe(1203);
      }
    }
  });
});

describe('revocation across instances', () => {
  it('stops a revoked key within the cache time on another instance sharing the database', async () => {
    const a = await startTestApp({ ADMIN_API_KEY: ADMIN, AUTH_CACHE_TTL_MS: '1000' });
    const b = await startTestApp({ ADMIN_API_KEY: ADMIN, AUTH_CACHE_TTL_MS: '1000' }, { db: a.db });
    try {
      const created = await api(a.url, 'POST', '/admin/keys', { key: ADMIN, body: { owner: 'team-c', name: 'x' } });
      const key = created.body.key as string;
      expect((await api(b.url, 'GET', '/admin/keys', { key })).status).toBe(403); // b now caches the key
      await api(a.url, 'DELETE', `/admin/keys/${created.body.id}`, { key: ADMIN });
      const deadline = Date.now() + 5000;
      let status = 0;
      while (Date.now() < deadline) {
        status = (await api(b.url, 'GET', '/admin/keys', { key })).status;
        if (status === 401) break;
        await new Promise((r) => setTimeout(r, 100));
      }
      expect(status).toBe(401);
    } finally {
      await b.close();
      await a.close();
    }
  });
});

describe('a key in use, read again ahead of its cache time', () => {
  /** mgw_api_key_reads_total by its `when` label. */
  const reads = async (t: TestApp): Promise<{ request: number; ahead: number }> => {
    const text = await t.metrics();
    const of = (when: string) => Number(new RegExp(`^mgw_api_key_reads_total\\{when="${when}"\\} (\\d+)`, 'm').exec(text)?.[1] ?? 0);
    return { request: of('request'), ahead: of('ahead') };
  };

  it('its requests never wait for the read while they keep coming: only the first reads the key on its path', async () => {
    const TTL_MS = 2000;
    const t = await startTestApp({ ROLE: 'api', AUTH_CACHE_TTL_MS: String(TTL_MS) });
    try {
      const key = await t.createKey('team-ahead');
      const before = await reads(t);
      // requests one after the other for over two cache times; the gaps between them are measured, for a
      // gap longer than half the cache time (a stalled machine) lets the cached row end with no request to
      // read it again ahead, and the request after it reads the key itself, as it must
      const sentAt: number[] = [];
      const until = Date.now() + 2.5 * TTL_MS;
      while (Date.now() < until) {
        sentAt.push(Date.now());
        expect((await api(t.url, 'GET', '/video-b/v1/generations', { key })).status).toBe(200);
      }
      const stalls = sentAt.slice(1).filter((at, i) => at - sentAt[i] > TTL_MS / 2).length;
      const after = await reads(t);
      const onPath = after.request - before.request;
      // on a request's path only the first time (without the reads ahead: once per cache time, 3 times)
      expect([onPath, stalls, onPath <= 1 + stalls]).toEqual([onPath, stalls, true]);
      // and read ahead about twice a cache time: each time the row was past half its time
      expect(after.ahead - before.ahead + stalls).toBeGreaterThanOrEqual(2);
    } finally {
      await t.close();
    }
  });
});
