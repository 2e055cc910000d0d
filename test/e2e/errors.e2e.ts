import { gzipSync } from 'node:zlib';
import pg from 'pg';
import { sendRaw } from '../support/raw-http.js';
import { api, queryDb, startTestApp, type TestApp } from '../support/test-app.js';

const ADMIN = 'admin-secret-0123456789';

describe('every error answer is the {code, message, request_id} envelope', () => {
  let t: TestApp;
  let key: string;
  beforeAll(async () => {
    t = await startTestApp({ ADMIN_API_KEY: ADMIN });
    key = await t.createKey();
  });
  afterAll(() => t.close());

  function expectEnvelope(res: { status: number; headers: Headers; body: any; text: string }, status: number, code: number | string) {
    expect(res.status).toBe(status);
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
    expect(res.body).toEqual({ code, message: expect.any(String), request_id: expect.any(String) });
    expect(res.headers.get('x-request-id')).toBe(res.body.request_id);
    expect(res.text).not.toMatch(/\bat .+\.(js|ts):\d+|node_modules|\/work\/|SELECT|prisma/i);
  }

  it('answers an unknown route with 404/1203, with or without a key, for any method', async () => {
    expectEnvelope(await api(t.url, 'GET', '/nowhere'), 404, 1203);
    expectEnvelope(await api(t.url, 'POST', '/nowhere', { key, body: {} }), 404, 1203);
    expectEnvelope(await api(t.url, 'GET', '/health/nowhere'), 404, 1203);
  });

  it('answers a method a route does not take with 405/1210 and Allow, and an unknown route with 404 whatever the method', async () => {
    const health = await api(t.url, 'DELETE', '/health');
    expectEnvelope(health, 405, 1210);
    expect([health.headers.get('allow'), health.body.message]).toEqual(['GET, HEAD', 'DELETE is not allowed on /health: it takes GET, HEAD']);
    // a path with a parameter: the methods of every route the path matches
    const task = await api(t.url, 'PUT', '/tasks/3f1c2b8e-0000-4000-8000-000000000000', { key, body: {} });
    expectEnvelope(task, 405, 1210);
    expect(task.headers.get('allow')).toBe('GET, HEAD');
    // each door in its own words: OpenAI's error object, the sunoapi family's code 404 ("method or path")
    const openai = await api(t.url, 'GET', '/openai/v1/images/generations', { key });
    expect([openai.status, openai.headers.get('allow'), openai.body.error.type, openai.body.error.code]).toEqual([405, 'POST', 'invalid_request_error', 'method_not_allowed']);
    expectEnvelope(await api(t.url, 'PATCH', '/nowhere', { key, body: {} }), 404, 1203);
  });

  it('answers a path parameter whose percent-encoding is not UTF-8 with 400/1201 saying so, not in Express\'s words', async () => {
    const res = await api(t.url, 'GET', '/tasks/%ED%A0%80', { key });
    expectEnvelope(res, 400, 1201);
    expect(res.body.message).toBe('the path /tasks/%ED%A0%80 holds a percent-encoded sequence that is not UTF-8 text (%ED%A0%80)');
  });

  it('answers a query value or key whose percent-encoding is not UTF-8 likewise, not read as U+FFFD; a lone % and UTF-8 are taken', async () => {
    for (const [query, words] of [
      ['q=%ED%A0%80', 'the query parameter q holds a percent-encoded sequence that is not UTF-8 text (%ED%A0%80)'],
      ['limit=5&q=caf%E9', 'the query parameter q holds a percent-encoded sequence that is not UTF-8 text (caf%E9)'],
      ['%FF=1', 'a query key holds a percent-encoded sequence that is not UTF-8 text (%FF)'],
    ]) {
      const res = await api(t.url, 'GET', `/tasks?${query}`, { key });
      expectEnvelope(res, 400, 1201);
      expect([query, res.body.message]).toEqual([query, words]);
    }
    for (const query of ['q=caf%C3%A9', 'q=100%', 'q=a+b%20c']) expect([query, (await api(t.url, 'GET', `/tasks?${query}`, { key })).status]).toEqual([query, 200]);
  });

  it('answers a body that is not JSON with 400/1200', async () => {
    const res = await api(t.url, 'POST', '/admin/keys', { key: ADMIN, rawBody: '{"owner": ', headers: { 'content-type': 'application/json' } });
    expectEnvelope(res, 400, 1200);
    expect(res.body.message).toMatch(/not valid JSON/);
  });

  it('answers a JSON array or scalar where an object is expected with 400/1200', async () => {
    const arr = await api(t.url, 'POST', '/admin/keys', { key: ADMIN, body: [{ owner: 'a', name: 'b' }] });
    expectEnvelope(arr, 400, 1200);
    expect(arr.body.message).toBe('Request body must be a JSON object');
    expectEnvelope(await api(t.url, 'POST', '/admin/keys', { key: ADMIN, rawBody: '"text"', headers: { 'content-type': 'application/json' } }), 400, 1200);
    // valid JSON that is not an object is said so, not called invalid JSON
    for (const [raw, kind] of [['null', 'null'], ['"hi"', 'string'], ['42', 'number'], ['true', 'boolean']]) {
      const res = await api(t.url, 'POST', '/admin/keys', { key: ADMIN, rawBody: raw, headers: { 'content-type': 'application/json' } });
      expect([raw, res.status, res.body.code, res.body.message]).toEqual([raw, 400, 1200, `Request body must be a JSON object, not a JSON ${kind}`]);
    }
    // a body read as it streams in (compressed, or large on a route with a Base64 field) is refused at its first
    // byte, before the rest is read: the answer says which byte
    for (const raw of ['null', 'nonsense', '"hi"']) {
      const res = await fetch(`${t.url}/video-a/v1/images/editing/expand`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', 'content-encoding': 'gzip' }, body: gzipSync(raw) });
      const body = (await res.json()) as { code: number; message: string };
      expect([raw, res.status, body.code, body.message]).toEqual([raw, 400, 1200, `Request body must be a JSON object; it begins with ${JSON.stringify(raw[0])}`]);
    }
    // and what is not JSON still is
    const broken = await api(t.url, 'POST', '/admin/keys', { key: ADMIN, rawBody: 'nul', headers: { 'content-type': 'application/json' } });
    expect(broken.body.message).toMatch(/^Request body is not valid JSON/);
  });

  it('answers a Content-Type other than JSON with 415, and takes JSON with a charset or with no Content-Type', async () => {
    for (const type of ['text/plain', 'application/x-www-form-urlencoded', 'multipart/form-data; boundary=x']) {
      expectEnvelope(await api(t.url, 'POST', '/admin/keys', { key: ADMIN, rawBody: 'owner=a&name=b', headers: { 'content-type': type } }), 415, 1206);
    }
    const body = JSON.stringify({ owner: 'ct', name: 'ct' });
    expect((await api(t.url, 'POST', '/admin/keys', { key: ADMIN, rawBody: body, headers: { 'content-type': 'application/json;charset=utf-8' } })).status).toBe(201);
    const bare = await fetch(`${t.url}/admin/keys`, { method: 'POST', headers: { authorization: `Bearer ${ADMIN}` }, body: Buffer.from(body) });
    expect(bare.status).toBe(201);
    // JSON is UTF-8 between systems: a body declared UTF-16 (or anything else) is refused, as Latin-1 is, on every route
    for (const [path, routeKey] of [['/admin/keys', ADMIN], ['/video-a/v1/images/editing/expand', key]] as const) {
      for (const charset of ['utf-16le', 'utf-16', 'utf-32', 'iso-8859-1']) {
        const res = await fetch(`${t.url}${path}`, { method: 'POST', headers: { authorization: `Bearer ${routeKey}`, 'content-type': `application/json; charset=${charset}` }, body: Buffer.from(JSON.stringify({ owner: 'x', name: 'y' }), charset === 'utf-16le' || charset === 'utf-16' ? 'utf16le' : 'latin1') });
        const answer = (await res.json()) as { code: number; message: string };
        expect([path, charset, res.status, answer.code, answer.message]).toEqual([path, charset, 415, 1206, `unsupported charset "${charset}"; send UTF-8 JSON`]);
      }
    }
    const upper = await api(t.url, 'POST', '/admin/keys', { key: ADMIN, rawBody: JSON.stringify({ owner: 'ct8', name: 'ct8' }), headers: { 'content-type': 'application/json; charset=UTF-8' } });
    expect(upper.status).toBe(201);
    // UTF-8 by its other names (the Encoding Standard's labels: some clients send utf8), read and checked as UTF-8,
    // as it comes and compressed (the two ways a body is read)
    for (const [i, charset] of ['utf8', 'UTF8', '"utf8"', 'x-unicode20utf8'].entries()) {
      const raw = Buffer.from(JSON.stringify({ owner: `u8-${i}`, name: 'café ✓' }));
      for (const gzip of [false, true]) {
        const res = await fetch(`${t.url}/admin/keys`, { method: 'POST', headers: { authorization: `Bearer ${ADMIN}`, 'content-type': `application/json; charset=${charset}`, ...(gzip ? { 'content-encoding': 'gzip' } : {}) }, body: gzip ? gzipSync(raw) : raw });
        const answer = (await res.json()) as { name?: string };
        expect([charset, gzip, res.status, answer.name]).toEqual([charset, gzip, 201, 'café ✓']);
      }
      const latin1 = await fetch(`${t.url}/admin/keys`, { method: 'POST', headers: { authorization: `Bearer ${ADMIN}`, 'content-type': `application/json; charset=${charset}` }, body: Buffer.from(JSON.stringify({ owner: `l1-${i}`, name: 'café' }), 'latin1') });
      expect([charset, latin1.status, ((await latin1.json()) as { message: string }).message]).toEqual([charset, 400, expect.stringMatching(/not valid UTF-8/)]);
    }
  });

  it('answers a body over the 100 kB default limit with 413, and takes one just under it', async () => {
    const over = await api(t.url, 'POST', '/admin/keys', { key: ADMIN, body: { owner: 'a', name: 'b', pad: 'x'.repeat(100 * 1024) } });
    expectEnvelope(over, 413, 1205);
    expect(over.body.message).toMatch(/100 kB/);
    // just under it the body is read (and its unknown field refused: the admin API ignores none)
    const under = await api(t.url, 'POST', '/admin/keys', { key: ADMIN, body: { owner: 'a', name: 'b', pad: 'x'.repeat(100 * 1024 - 100) } });
    expect([under.status, under.body.message]).toEqual([400, expect.stringMatching(/^pad is not a field of this body/)]);
  });

  it('authenticates before reading the body: no key and a malformed body still answer 401', async () => {
    const res = await api(t.url, 'POST', '/admin/keys', { rawBody: '{oops', headers: { 'content-type': 'application/json' } });
    expectEnvelope(res, 401, 1001);
  });

  it('keeps a well-formed incoming X-Request-Id and replaces a malformed one', async () => {
    const kept = await api(t.url, 'GET', '/nowhere', { headers: { 'x-request-id': 'trace-42.abc_DEF:1' } });
    expect(kept.body.request_id).toBe('trace-42.abc_DEF:1');
    expect(kept.headers.get('x-request-id')).toBe('trace-42.abc_DEF:1');
    const replaced = await api(t.url, 'GET', '/nowhere', { headers: { 'x-request-id': 'bad id <script>' } });
    expect(replaced.body.request_id).toMatch(/^[0-9a-f-]{36}$/);
    const long = await api(t.url, 'GET', '/nowhere', { headers: { 'x-request-id': 'a'.repeat(200) } });
    expect(long.body.request_id).toMatch(/^[0-9a-f-]{36}$/);
  });

  it('reads header bytes that are not ASCII (latin1 to Node) without a 500, and quotes them readably when it names them', async () => {
    const port = Number(new URL(t.url).port);
    const request = (head: Buffer, body = '') => sendRaw(port, Buffer.concat([head, Buffer.from(`\r\nContent-Length: ${body.length}\r\nConnection: close\r\n\r\n${body}`)]));
    const odd = Buffer.from([0xff, 0xed, 0xa0, 0x80]);
    const type = await request(Buffer.concat([Buffer.from(`POST /admin/keys HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${ADMIN}\r\nContent-Type: application/`), odd]), '{}');
    expect([type.status, JSON.parse(type.text).message]).toEqual([415, 'Content-Type "application/\\xff\\xed\\xa0\\x80" is not supported; send the body as application/json']);
    const charset = await request(Buffer.concat([Buffer.from(`POST /admin/keys HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${ADMIN}\r\nContent-Type: application/json; charset=`), odd]), '{}');
    expect([charset.status, JSON.parse(charset.text).message]).toEqual([415, 'unsupported charset "\\xff\\xed\\xa0\\x80"; send UTF-8 JSON']);
    const auth = await request(Buffer.concat([Buffer.from('GET /admin/keys HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer '), odd]));
    expect([auth.status, JSON.parse(auth.text).code]).toEqual([401, 1002]);
    const id = await request(Buffer.concat([Buffer.from('GET /nowhere HTTP/1.1\r\nHost: x\r\nX-Request-Id: req-'), odd]));
    expect([id.status, id.headers['x-request-id']]).toEqual([404, expect.stringMatching(/^[0-9a-f-]{36}$/)]);
  });

  it('stores no base URL from a Host header longer than any host (tasks.base_url has 512 characters): the task is accepted, not a 500', async () => {
    const body = '{"prompt":"a long host"}';
    const res = await sendRaw(
      Number(new URL(t.url).port),
      Buffer.from(`POST /video-b/v1/generations HTTP/1.1\r\nHost: ${'h'.repeat(600)}\r\nAuthorization: Bearer ${key}\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\nConnection: close\r\n\r\n${body}`),
    );
    expect(res.status).toBe(201);
    const [row] = await queryDb<{ base_url: string | null }>(t.db, 'SELECT base_url FROM tasks WHERE id = $1', [JSON.parse(res.text).id]);
    expect(row.base_url).toBeNull();
  });

  it('gives every answer, successful or not, an X-Request-Id', async () => {
    const res = await api(t.url, 'GET', '/health');
    expect(res.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
  });

  it('uses string codes on the audio route family', async () => {
    expectEnvelope(await api(t.url, 'GET', '/music-a/nowhere'), 404, 'not_found');
  });

  it('writes the request id on the log lines of the request', async () => {
    const res = await api(t.url, 'GET', '/nowhere', { headers: { 'x-request-id': 'log-check-1' } });
    expect(res.status).toBe(404);
    const lines = t.logs.lines.filter((l) => l.request_id === 'log-check-1');
    expect(lines).toEqual(expect.arrayContaining([expect.objectContaining({ msg: 'request completed', status: 404 })]));
  });

  it('answers an internal failure with 500/5000 and no details, and logs it with the request id', async () => {
    const client = new pg.Client({ connectionString: t.db.url });
    await client.connect();
    await client.query('ALTER TABLE api_keys RENAME TO api_keys_away');
    try {
      const other = `mgw_${'Q'.repeat(48)}`;
      const res = await api(t.url, 'GET', '/admin/keys', { key: other, headers: { 'x-request-id': 'boom-1' } });
      expectEnvelope(res, 500, 5000);
      expect(res.body.message).toMatch(/request_id/);
      expect(t.logs.lines).toEqual(expect.arrayContaining([expect.objectContaining({ request_id: 'boom-1', level: 'error' })]));
    } finally {
      await client.query('ALTER TABLE api_keys_away RENAME TO api_keys');
      await client.end();
    }
  });
});
