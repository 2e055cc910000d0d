import sharp from 'sharp';
import { pollUntil } from '../support/poll.js';
import { api, startTestApp, type TestApp } from '../support/test-app.js';

describe('sample files', () => {
  let t: TestApp;
  let key: string;
  beforeAll(async () => {
    t = await startTestApp(); // no ALLOW_PRIVATE_URLS: a loopback URL is refused unless it is our own sample
    key = await t.createKey();
  });
  afterAll(() => t.close());

  it('are served without a key: a 1280x720 JPEG keyframe, a 640x480 PNG and a WAV clip', async () => {
    const keyframe = await fetch(`${t.url}/samples/keyframe.jpg`);
    expect([keyframe.status, keyframe.headers.get('content-type')]).toEqual([200, 'image/jpeg']);
    const meta = await sharp(Buffer.from(await keyframe.arrayBuffer())).metadata();
    expect([meta.format, meta.width, meta.height]).toEqual(['jpeg', 1280, 720]);
    for (const [file, type] of [['photo.png', 'image/png'], ['clip.wav', 'audio/wav']]) {
      const sample = await fetch(`${t.url}/samples/${file}`);
      await sample.arrayBuffer(); // read: an unread body holds its connection, and the app's close waits for it
      expect(sample.headers.get('content-type')).toBe(type);
    }
    const missing = await api(t.url, 'GET', '/samples/nope.gif');
    expect([missing.status, missing.body.code]).toEqual([404, 1203]);
  });

  it('are read by a task that names them under its own base, without a fetch; the same path elsewhere is fetched under the outbound rules', async () => {
    const clip = await api(t.url, 'POST', '/music-a/uploads/audio-url', { key, body: { url: `${t.url}/samples/clip.wav` } });
    const ready = await pollUntil(() => api(t.url, 'GET', `/music-a/uploads/${clip.body.data}`, { key }), (r) => r.body.data.status !== 'pending', { what: 'the clip' });
    expect(ready.body.data).toEqual(expect.objectContaining({ status: 'ready', format: 'wav', duration: 2 }));
    // another host's /samples/ is not ours: refused at once as a loopback target
    const other = await api(t.url, 'POST', '/music-a/uploads/audio-url', { key, body: { url: 'http://127.0.0.2:9/samples/clip.wav' } });
    expect([other.status, other.body.message]).toEqual([400, 'url must be a public http(s) URL: 127.0.0.2 is a loopback address (the gateway reaches only public addresses for a caller)']);
  });
});
