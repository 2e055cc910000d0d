import { randomBytes } from 'node:crypto';
import { api, queryDb, startTestApp, type TestApp } from '../support/test-app.js';

/**
 * Strings PostgreSQL cannot store as sent (a lone UTF-16 surrogate: valid JSON, not Unicode; NUL) are
 * refused at the door on every route with a 400 naming the field, never a 500 from the database; a
 * surrogate pair is stored and read back as sent; a body that is not UTF-8 is refused, not read as U+FFFD.
 */

const ADMIN = 'admin-secret-0123456789';
const EXPAND = '/video-a/v1/images/editing/expand';
const GEN = '/video-b/v1/generations';
const EXPAND_BODY = { image: 'https://example.com/a.png', up_expansion_ratio: 0.1, bottom_expansion_ratio: 0.1, left_expansion_ratio: 0.1, right_expansion_ratio: 0.1 };
const SURROGATE = 'must not contain a lone UTF-16 surrogate (\\ud800 to \\udfff without its pair)';
const NUL = 'must not contain the NUL character (\\u0000)';
const EMOJI = '🙂';

/** Each is sent by JSON.stringify, which writes a lone surrogate as "\ud800" and NUL as "\u0000": what a hostile client sends. */
const HOSTILE: [string, string, string][] = [
  ['a lone high surrogate', 'a\ud800b', SURROGATE],
  ['a lone low surrogate', '\udfffa', SURROGATE],
  ['a reversed pair', 'x\ude42\ud83d', SURROGATE],
  ['NUL', 'a\u0000', NUL],
];

interface Route {
  name: string;
  path: string;
  admin?: boolean;
  /** The field's path, as the message names it. */
  field: string;
  body: (value: string) => unknown;
  /** What the route family calls INVALID_PARAMETER. */
  code?: string;
}

const ROUTES: Route[] = [
  { name: 'image expand: prompt', path: EXPAND, field: 'prompt', body: (v) => ({ ...EXPAND_BODY, prompt: v }) },
  { name: 'image expand: external_task_id (Kling)', path: EXPAND, field: 'external_task_id', body: (v) => ({ ...EXPAND_BODY, external_task_id: v }) },
  { name: 'video generation: a keyframe url', path: GEN, field: 'keyframes.frame0.url', body: (v) => ({ prompt: 'p', keyframes: { frame0: { type: 'image', url: v } } }) },
  { name: 'video generation (the SDK path): prompt', path: `${GEN}/video`, field: 'prompt', body: (v) => ({ prompt: v }) },
  { name: 'music: title', path: '/music-a/submit/music', field: 'title', body: (v) => ({ prompt: 'a song', title: v }), code: 'invalid_parameter' },
  { name: 'audio upload: url', path: '/music-a/uploads/audio-url', field: 'url', body: (v) => ({ url: `http://127.0.0.1:1/${v}` }), code: 'invalid_parameter' },
  { name: "admin: a new key's name", path: '/admin/keys', admin: true, field: 'name', body: (v) => ({ owner: 'team-u', name: v }) },
  {
    name: "admin: a new channel's credentials",
    path: '/admin/channels',
    admin: true,
    field: 'credentials.secret_key',
    body: (v) => ({ name: 'c', operations: ['expand'], protocol: 'kling', base_url: 'https://example.com', credentials: { access_key: 'ak', secret_key: v } }),
  },
  { name: 'a field no DTO declares', path: GEN, field: 'extra.list[1]', body: (v) => ({ prompt: 'p', extra: { list: ['ok', v] } }) },
];

/** JSON with every non-ASCII character as \uXXXX escapes (an emoji as its pair, "\ud83d\ude42"), as many encoders write it. */
function asciiJson(body: unknown): string {
  return JSON.stringify(body).replace(/[\u0080-\uffff]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

/** A JSON body with `raw` (bytes that are not UTF-8) in the middle of a string. */
function withRawBytes(before: string, raw: number[], after: string): Buffer {
  return Buffer.concat([Buffer.from(before), Buffer.from(raw), Buffer.from(after)]);
}

describe('lone surrogates and NUL are refused at the door; surrogate pairs are kept', () => {
  let t: TestApp;
  let key: string;
  const json = { 'content-type': 'application/json' };
  beforeAll(async () => {
    t = await startTestApp({ ROLE: 'api', ADMIN_API_KEY: ADMIN, CHANNEL_SECRET_KEY: 'a'.repeat(64) });
    key = await t.createKey('team-u');
  });
  afterAll(() => t.close());

  const stored = async () => (await queryDb<{ n: number }>(t.db, 'SELECT (SELECT count(*) FROM tasks) + (SELECT count(*) FROM api_keys) + (SELECT count(*) FROM channels) AS n'))[0].n;

  it.each(ROUTES.map((r) => [r.name, r] as const))('%s: 400 naming the field, nothing stored', async (_, route) => {
    const before = await stored();
    for (const [what, value, rule] of HOSTILE) {
      const res = await api(t.url, 'POST', route.path, { key: route.admin ? ADMIN : key, body: route.body(value) });
      expect([what, res.status, res.body]).toEqual([what, 400, { code: route.code ?? 1201, message: `${route.field} ${rule}`, request_id: res.headers.get('x-request-id') }]);
    }
    expect(await stored()).toBe(before);
  });

  it('names a bad object key by its path, the key escaped, and never echoes the raw character', async () => {
    const nested = await api(t.url, 'POST', GEN, { key, rawBody: '{"prompt":"p","keyframes":{"frame0":{"type":"image","url":"https://example.com/a.png","x\\ud800":1}}}', headers: json });
    expect([nested.status, nested.body.message]).toEqual([400, `keyframes.frame0."x\\ud800" (an object key) ${SURROGATE}`]);
    const top = await api(t.url, 'POST', '/admin/keys', { key: ADMIN, rawBody: '{"owner":"team-u","name":"n","\\u0000":1}', headers: json });
    expect([top.status, top.body.message]).toEqual([400, `"\\u0000" (an object key) ${NUL}`]);
    expect(nested.text + top.text).toMatch(/^[\x20-\x7e]*$/);
  });

  it('refuses bodies of routes that take none the same way (the rule is where bodies are read)', async () => {
    const res = await api(t.url, 'POST', '/admin/channels/00000000-0000-0000-0000-000000000000/enable', { key: ADMIN, body: { note: '\udc00' }, unchecked: true });
    expect([res.status, res.body.message]).toEqual([400, `note ${SURROGATE}`]);
  });

  it('names at most 10 faults, and says how many more there are', async () => {
    const res = await api(t.url, 'POST', GEN, { key, body: { prompt: 'p', list: Array.from({ length: 25 }, () => '\ud800') } });
    expect(res.status).toBe(400);
    expect(res.body.message.split('; ')).toHaveLength(11);
    expect(res.body.message).toMatch(/^list\[0\] must not contain a lone UTF-16 surrogate .*; and 15 more$/);
  });

  it('refuses them in a large expand body too, read as it streams (the image decoded on the way)', async () => {
    const image = randomBytes(120_000).toString('base64');
    const res = await api(t.url, 'POST', EXPAND, { key, body: { ...EXPAND_BODY, image, prompt: 'wide\ud800' } });
    expect([res.status, res.body.message]).toEqual([400, `prompt ${SURROGATE}`]);
    const raw = await api(t.url, 'POST', EXPAND, { key, rawBody: withRawBytes(`{"image":"${image}","prompt":"wide`, [0xff], '"}'), headers: json });
    expect([raw.status, raw.body.code, raw.body.message]).toEqual([400, 1200, expect.stringMatching(/not valid UTF-8/)]);
  });

  it('refuses a body whose bytes are not UTF-8 (a surrogate encoded, an overlong "/", 0xFF) instead of reading U+FFFD', async () => {
    const before = await stored();
    for (const raw of [[0xed, 0xa0, 0x80], [0xc0, 0xaf], [0xff]]) {
      const res = await api(t.url, 'POST', GEN, { key, rawBody: withRawBytes('{"prompt":"clouds', raw, '"}'), headers: json });
      expect([raw, res.status, res.body.code, res.body.message]).toEqual([raw, 400, 1200, 'Request body is not valid JSON: its bytes are not valid UTF-8; send JSON as UTF-8, or escape characters as \\uXXXX']);
    }
    expect(await stored()).toBe(before);
  });

  it('refuses NUL in path parameters and query values too', async () => {
    const path = await api(t.url, 'GET', '/admin/owners/te%00am/limits', { key: ADMIN });
    expect([path.status, path.body.message]).toEqual([400, `owner ${NUL}`]);
    const query = await api(t.url, 'GET', '/tasks?cursor=a%00b', { key });
    expect([query.status, query.body.message]).toEqual([400, `cursor ${NUL}`]);
  });

  it('stores a surrogate pair sent escaped ("\\ud83d\\ude42") and reads it back as sent: video prompt', async () => {
    const prompt = `clouds ${EMOJI} over the hills`;
    const created = await api(t.url, 'POST', GEN, { key, rawBody: asciiJson({ prompt }), headers: json });
    expect(created.status).toBe(201);
    expect((await api(t.url, 'GET', `${GEN}/${created.body.id}`, { key })).body.request.prompt).toBe(prompt);
    expect((await queryDb<{ prompt: string }>(t.db, "SELECT params->>'prompt' AS prompt FROM tasks WHERE id = $1", [created.body.id]))[0].prompt).toBe(prompt);
  });

  it('… a Kling external_task_id, found again by it', async () => {
    const external = `order-${EMOJI}`;
    const created = await api(t.url, 'POST', EXPAND, { key, rawBody: asciiJson({ ...EXPAND_BODY, external_task_id: external }), headers: json });
    expect([created.status, created.body.data.task_info]).toEqual([200, { external_task_id: external }]);
    const found = await api(t.url, 'GET', `${EXPAND}?external_task_id=${encodeURIComponent(external)}`, { key });
    expect(found.body.data.map((d: { task_id: string }) => d.task_id)).toEqual([created.body.data.task_id]);
    expect((await queryDb<{ external_id: string }>(t.db, 'SELECT external_id FROM tasks WHERE id = $1', [created.body.data.task_id]))[0].external_id).toBe(external);
  });

  it("… a music title, and an admin's key name; a channel's (write-only) credentials are taken", async () => {
    const title = `${EMOJI} Morning tide`;
    const music = await api(t.url, 'POST', '/music-a/submit/music', { key, rawBody: asciiJson({ prompt: 'a song', title }), headers: json });
    expect(music.status).toBe(200);
    const fetched = await api(t.url, 'GET', `/music-a/fetch/${music.body.data}`, { key });
    expect(fetched.body.data.data.map((clip: { title: string }) => clip.title)).toEqual([title, title]);
    const channel = await api(t.url, 'POST', '/admin/channels', {
      key: ADMIN,
      rawBody: asciiJson({ name: 'kling-u', operations: ['expand'], protocol: 'kling', base_url: 'https://example.com', credentials: { access_key: `ak-${EMOJI}`, secret_key: 'sk' } }),
      headers: json,
    });
    expect(channel.status).toBe(201);
    const created = await api(t.url, 'POST', '/admin/keys', { key: ADMIN, rawBody: asciiJson({ owner: 'team-u', name: `render ${EMOJI}` }), headers: json });
    expect([created.status, created.body.name]).toEqual([201, `render ${EMOJI}`]);
    expect((await api(t.url, 'GET', '/admin/keys', { key: ADMIN })).body.map((k: { name: string }) => k.name)).toContain(`render ${EMOJI}`);
  });
});
