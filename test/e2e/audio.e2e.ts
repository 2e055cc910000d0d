import pg from 'pg';
import { api, startTestApp, type TestApp } from '../support/test-app.js';

describe('POST /music-a/uploads/audio-url', () => {
  let t: TestApp;
  let key: string;
  beforeAll(async () => {
    t = await startTestApp({ ROLE: 'api' }); // no worker: the record is read as the request left it
    key = await t.createKey('team-audio');
  });
  afterAll(() => t.close());

  it('answers {code: "success", message: "", data: <uuid>} and stores the record as pending under the owner', async () => {
    const res = await api(t.url, 'POST', '/music-a/uploads/audio-url', { key, body: { url: 'https://example.com/clip.mp3' } });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ code: 'success', message: '', data: expect.stringMatching(/^[0-9a-f-]{36}$/) });
    const client = new pg.Client({ connectionString: t.db.url });
    await client.connect();
    const { rows } = await client.query("SELECT kind, owner, params->>'url' AS url, state, created_at FROM tasks WHERE id = $1", [res.body.data]);
    await client.end();
    expect(rows[0]).toEqual({ kind: 'audio', owner: 'team-audio', url: 'https://example.com/clip.mp3', state: 'queued', created_at: expect.any(Date) });
  });

  it.each([[undefined], ['ftp://example.com/a.mp3'], ['not a url'], [''], [42], [null], [['https://example.com/a.mp3']], ['http://']])('refuses url = %p with a string code naming url', async (url) => {
    const res = await api(t.url, 'POST', '/music-a/uploads/audio-url', { key, body: url === undefined ? {} : { url } });
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ code: 'invalid_parameter', message: expect.stringMatching(/^url (is required|must be)/), request_id: res.headers.get('x-request-id') });
  });

  it('uses string codes for every error on this route', async () => {
    const noKey = await api(t.url, 'POST', '/music-a/uploads/audio-url', { body: { url: 'https://example.com/a.mp3' } });
    expect([noKey.status, noKey.body.code]).toEqual([401, 'unauthorized']);
    const badJson = await api(t.url, 'POST', '/music-a/uploads/audio-url', { key, rawBody: '{', headers: { 'content-type': 'application/json' } });
    expect([badJson.status, badJson.body.code]).toEqual([400, 'invalid_request']);
    const badType = await api(t.url, 'POST', '/music-a/uploads/audio-url', { key, rawBody: 'url=x', headers: { 'content-type': 'text/plain' } });
    expect([badType.status, badType.body.code]).toEqual([415, 'unsupported_media_type']);
    const tooBig = await api(t.url, 'POST', '/music-a/uploads/audio-url', { key, body: { url: `https://example.com/${'a'.repeat(200_000)}` } });
    expect([tooBig.status, tooBig.body.code]).toEqual([413, 'payload_too_large']);
  });

  it('takes a JSON body sent as form-urlencoded (curl -d), and refuses a real form body with 415', async () => {
    const json = await api(t.url, 'POST', '/music-a/uploads/audio-url', { key, rawBody: '{"url":"https://example.com/a.mp3"}', headers: { 'content-type': 'application/x-www-form-urlencoded' } });
    expect(json.status).toBe(200);
    const form = await api(t.url, 'POST', '/music-a/uploads/audio-url', { key, rawBody: 'url=https%3A%2F%2Fexample.com', headers: { 'content-type': 'application/x-www-form-urlencoded' } });
    expect([form.status, form.body.code]).toEqual([415, 'unsupported_media_type']);
  });
});
