import { pollUntil } from '../support/poll.js';
import { sendRaw } from '../support/raw-http.js';
import { api, startTestApp, type TestApp } from '../support/test-app.js';

describe('X-Content-Type-Options: nosniff on every answer', () => {
  let t: TestApp;
  let key: string;
  let clipUrl: string;
  beforeAll(async () => {
    t = await startTestApp();
    key = await t.createKey('team-headers');
    // a stored file to download: the sample clip, uploaded (read from the service itself, no network)
    const clip = await api(t.url, 'POST', '/music-a/uploads/audio-url', { key, body: { url: `${t.url}/samples/clip.wav` } });
    const ready = await pollUntil(() => api(t.url, 'GET', `/music-a/uploads/${clip.body.data}`, { key }), (r) => r.body.data.status !== 'pending', { what: 'the clip' });
    expect(ready.body.data.status).toBe('ready');
    clipUrl = ready.body.data.clip_url;
  });
  afterAll(() => t?.close());

  it('on /media: the file (200), a range (206), not modified (304), a range past the end (416), a bad signature and an unknown file', async () => {
    expect(clipUrl).toMatch(/\/media\/[0-9a-f-]{36}\?expires=\d+&signature=/);
    const whole = await fetch(clipUrl);
    expect([whole.status, whole.headers.get('content-type'), whole.headers.get('x-content-type-options')]).toEqual([200, expect.stringMatching(/^audio\//), 'nosniff']);
    const etag = whole.headers.get('etag')!;
    await whole.arrayBuffer();
    const answers = [
      await fetch(clipUrl, { headers: { range: 'bytes=0-9' } }),
      await fetch(clipUrl, { headers: { 'if-none-match': etag } }),
      await fetch(clipUrl, { headers: { range: 'bytes=99999999-' } }),
      await fetch(clipUrl.replace(/signature=[^&]+/, 'signature=AAAA')),
      await fetch(`${t.url}/media/00000000-0000-4000-8000-000000000000?expires=9999999999&signature=AAAA`),
    ];
    expect(answers.map((r) => [r.status, r.headers.get('x-content-type-options')])).toEqual([
      [206, 'nosniff'],
      [304, 'nosniff'],
      [416, 'nosniff'],
      [403, 'nosniff'],
      [expect.any(Number), 'nosniff'],
    ]);
    const head = await fetch(clipUrl, { method: 'HEAD' });
    expect([head.status, head.headers.get('x-content-type-options')]).toEqual([200, 'nosniff']);
  });

  it('on the API: JSON answers, errors, health, metrics, unknown routes, Swagger UI and its document', async () => {
    const answers = await Promise.all([
      fetch(`${t.url}/video-b/v1/generations`, { headers: { authorization: `Bearer ${key}` } }),
      fetch(`${t.url}/video-b/v1/generations`),
      fetch(`${t.url}/health`),
      fetch(`${t.url}/metrics`, { headers: { authorization: `Bearer ${t.config.metricsToken}` } }),
      fetch(`${t.url}/no/such/route`),
      fetch(`${t.url}/docs`),
      fetch(`${t.url}/docs-json`),
      fetch(`${t.url}/samples/photo.png`),
    ]);
    expect(answers.map((r) => [new URL(r.url).pathname, r.status, r.headers.get('x-content-type-options')])).toEqual([
      ['/video-b/v1/generations', 200, 'nosniff'],
      ['/video-b/v1/generations', 401, 'nosniff'],
      ['/health', 200, 'nosniff'],
      ['/metrics', 200, 'nosniff'],
      ['/no/such/route', 404, 'nosniff'],
      ['/docs', 200, 'nosniff'],
      ['/docs-json', 200, 'nosniff'],
      ['/samples/photo.png', 200, 'nosniff'],
    ]);
  });

  it('on a malformed request answered before any route (the raw envelope)', async () => {
    const answer = await sendRaw(Number(new URL(t.url).port), Buffer.from('GET / HTTP/1.1\r\nHost: x\r\nBad Header\r\n\r\n'));
    expect([answer.status, answer.headers['x-content-type-options']]).toEqual([400, 'nosniff']);
  });

  it('answers a request line past the limit 414 (URI too long), and headers past it 431, both in the envelope', async () => {
    const port = Number(new URL(t.url).port);
    const long = await sendRaw(port, Buffer.from(`GET /tasks?q=${'x'.repeat(20_000)} HTTP/1.1\r\nHost: x\r\n\r\n`));
    expect([long.status, JSON.parse(long.text).message]).toEqual([414, expect.stringMatching(/^The request URI is too long/)]);
    const many = await sendRaw(port, Buffer.from(`GET /tasks HTTP/1.1\r\nHost: x\r\n${Array.from({ length: 400 }, (_, i) => `X-Pad-${i}: ${'y'.repeat(60)}\r\n`).join('')}\r\n`));
    expect([many.status, JSON.parse(many.text).message]).toEqual([431, expect.stringMatching(/^The request headers are too large/)]);
  });
});
