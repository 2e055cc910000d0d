import { GoogleGenAI, type GenerateVideosOperation } from '@google/genai';
import sharp from 'sharp';
import { type FakeVeo, startFakeVeo } from '../support/vendors/veo/veo.fake.js';
import type { FakeVideoVendor } from '../support/vendors/video-fake.js';
import { startFakeKlingVideo } from '../support/vendors/kling/kling.fake.js';
import { png } from '../support/images.js';
import { probeVideo } from '../support/media.js';
import { pollUntil } from '../support/poll.js';
import { api, startTestApp, type TestApp } from '../support/test-app.js';

const GEN = '/video-b/v1/generations';
const OPENAI = '/openai/v1/videos';
const KLING_DOOR = '/video-a/v1/videos/image2video';
const ADMIN = 'admin-secret-0123456789';
const GEMINI_KEY = 'AIza-test-veo-0123456789';
const KLING: [string, string] = ['ak-veo-000001', 'sk-veo-secret-01'];

/**
 * Google's Veo through the Gemini API as a channel (`gemini`, operation video): its fake, from js-genai's
 * converters and the Veo guide, is what the official @google/genai SDK drives (generateVideos, then
 * getVideosOperation until done, the video's uri downloaded with the key); behind the Luma, OpenAI and Kling
 * doors the gateway speaks Veo's vocabulary to it (instances and parameters, a first frame inline as Base64),
 * stores the MP4 of the asked size and length, ends a filtered result as a content refusal (no failover), and
 * refuses at once what no Veo model makes.
 */
describe('Veo through the Gemini API', () => {
  let veo: FakeVeo;
  beforeAll(async () => {
    veo = await startFakeVeo(GEMINI_KEY);
  });
  afterAll(() => veo.close());

  describe('the fake, driven by @google/genai', () => {
    // Jest's module sandbox lacks the Undici dispatcher the SDK wraps: it is given the sandbox's fetch
    const ai = () => new GoogleGenAI({ apiKey: GEMINI_KEY, httpOptions: { baseUrl: veo.url, fetch: (input, init) => fetch(input, init) } });
    const untilDone = async (operation: GenerateVideosOperation) => {
      let current = operation;
      for (let i = 0; i < 10 && !current.done; i++) current = await ai().operations.getVideosOperation({ operation: current });
      return current;
    };

    it('generateVideos: predictLongRunning with instances and parameters, the operation polled until done, its uri downloaded with the key as the MP4 asked', async () => {
      veo.knobs.pollsUntilDone = 2;
      const started = await ai().models.generateVideos({ model: 'veo-3.1-fast-generate-preview', source: { prompt: 'A heron lands on a misty pond' }, config: { aspectRatio: '9:16', durationSeconds: 6, negativePrompt: 'people' } });
      expect([started.done, started.name]).toEqual([undefined, expect.stringMatching(/^models\/veo-3\.1-fast-generate-preview\/operations\/[0-9a-f]+$/)]);
      expect(veo.received.at(-1)).toEqual({ model: 'veo-3.1-fast-generate-preview', key: 'header', operation: started.name, body: { instances: [{ prompt: 'A heron lands on a misty pond' }], parameters: { aspectRatio: '9:16', durationSeconds: 6, negativePrompt: 'people' } } });
      const done = await untilDone(started);
      expect(done.done).toBe(true);
      const uri = done.response?.generatedVideos?.[0]?.video?.uri;
      expect(uri).toMatch(/\/v1beta\/files\/[0-9a-f]+:download\?alt=media$/);
      expect(veo.server.requests.filter((r) => r.method === 'GET').map((r) => [r.url, r.headers['x-goog-api-key']])).toEqual([
        [`/v1beta/${started.name}`, GEMINI_KEY],
        [`/v1beta/${started.name}`, GEMINI_KEY],
      ]);
      // the REST guide's download: the uri with the key in x-goog-api-key
      const video = await fetch(uri!, { headers: { 'x-goog-api-key': GEMINI_KEY } });
      expect([video.status, video.headers.get('content-type')]).toEqual([200, 'video/mp4']);
      const probed = await probeVideo(Buffer.from(await video.arrayBuffer()));
      expect([probed.width, probed.height, Math.round(probed.durationS)]).toEqual([720, 1280, 6]);
      expect((await fetch(uri!)).status).toBe(403);
    });

    it('an image and a last frame go inline (bytesBase64Encoded, mimeType); a filtered result has raiMediaFilteredCount and no videos; seed and generateAudio are Vertex AI only', async () => {
      const first = await png(64, 36);
      const last = await png(64, 36);
      const op = await ai().models.generateVideos({
        model: 'veo-3.1-generate-preview',
        source: { prompt: 'From dawn to dusk', image: { imageBytes: first.toString('base64'), mimeType: 'image/png' } },
        config: { lastFrame: { imageBytes: last.toString('base64'), mimeType: 'image/png' }, durationSeconds: 8, resolution: '1080p' },
      });
      expect(veo.received.at(-1)!.body).toEqual({
        instances: [{ prompt: 'From dawn to dusk', image: { bytesBase64Encoded: first.toString('base64'), mimeType: 'image/png' }, lastFrame: { bytesBase64Encoded: last.toString('base64'), mimeType: 'image/png' } }],
        parameters: { durationSeconds: 8, resolution: '1080p' },
      });
      expect((await untilDone(op)).response?.generatedVideos).toHaveLength(1);
      veo.knobs.filter = true;
      try {
        const filtered = await untilDone(await ai().models.generateVideos({ model: 'veo-3.0-generate-001', source: { prompt: 'Something it will not make' } }));
        expect([filtered.done, filtered.response?.generatedVideos, filtered.response?.raiMediaFilteredCount, filtered.response?.raiMediaFilteredReasons]).toEqual([true, undefined, 1, [expect.stringMatching(/Prohibited Use policy/)]]);
      } finally {
        veo.knobs.filter = false;
      }
      await expect(ai().models.generateVideos({ model: 'veo-3.0-generate-001', source: { prompt: 'x' }, config: { seed: 7 } })).rejects.toThrow(/seed parameter is only supported in/);
      await expect(ai().models.generateVideos({ model: 'veo-3.0-generate-001', source: { prompt: 'x' }, config: { generateAudio: true } })).rejects.toThrow(/generateAudio parameter is only supported in/);
      await expect(ai().models.generateVideos({ model: 'veo-3.0-generate-001', source: { prompt: 'x' }, config: { durationSeconds: 4, resolution: '1080p' } })).rejects.toMatchObject({ status: 400, message: expect.stringMatching(/8 seconds long only/) });
    });
  });

  describe('a gemini channel behind the doors', () => {
    let t: TestApp;
    let key: string;
    let kling: FakeVideoVendor;
    const channels: Record<string, string> = {};

    beforeAll(async () => {
      kling = await startFakeKlingVideo(...KLING);
      kling.knobs.pollsUntilDone = 1;
      veo.knobs.pollsUntilDone = 2;
      t = await startTestApp({ VIDEO_PROVIDER: 'relay', ADMIN_API_KEY: ADMIN, CHANNEL_SECRET_KEY: 'c'.repeat(64), OUTBOUND_ALLOW_HOSTS: '127.0.0.1', RELAY_POLL_MS: '100' });
      key = await t.createKey('team-veo');
      const add = async (name: string, body: Record<string, unknown>) => {
        const res = await api(t.url, 'POST', '/admin/channels', { key: ADMIN, body: { name, operations: ['video'], ...body } });
        expect([name, res.status]).toEqual([name, 201]);
        channels[name] = res.body.id as string;
      };
      await add('gemini', { protocol: 'gemini', base_url: veo.baseUrl, credentials: { api_key: GEMINI_KEY }, priority: 5 });
      await add('kling', { protocol: 'kling', base_url: kling.url, credentials: { access_key: KLING[0], secret_key: KLING[1] }, priority: 0 });
    }, 60_000);
    afterAll(async () => {
      await t.close();
      await kling.close();
    });

    const admin = (method: string, path: string, body?: unknown) => api(t.url, method, path, { key: ADMIN, body });
    const finished = async (id: string) =>
      (await pollUntil(() => api(t.url, 'GET', `${GEN}/${id}`, { key }), (r) => r.body.state === 'completed' || r.body.state === 'failed', { timeoutMs: 60_000, what: `generation ${id} to finish` })).body;
    const stored = async (url: string) => probeVideo(Buffer.from(await (await fetch(url)).arrayBuffer()));
    const attempts = async (id: string) => ((await admin('GET', `/admin/tasks/${id}/attempts`)).body as { channel: string; outcome: string }[]).map((a) => [a.channel, a.outcome]);
    const lastSent = () => veo.received.at(-1)!;

    it('serves a Luma-door request in its own words (instances, parameters) and stores the 8 s 1080x1920 MP4 it names, downloaded with the key', async () => {
      const downloads = veo.downloads.length;
      const created = await api(t.url, 'POST', GEN, { key, body: { prompt: 'A paper lantern rising over a lake', model: 'veo-3.1-generate-preview', aspect_ratio: '9:16', duration: '8s', resolution: '1080p' } });
      expect(created.status).toBe(201);
      const done = await finished(created.body.id);
      expect(done.state).toBe('completed');
      expect(lastSent()).toEqual({ model: 'veo-3.1-generate-preview', key: 'header', operation: expect.any(String), body: { instances: [{ prompt: 'A paper lantern rising over a lake' }], parameters: { aspectRatio: '9:16', durationSeconds: 8, resolution: '1080p' } } });
      const video = await stored(done.assets.video);
      expect([video.width, video.height, Math.round(video.durationS)]).toEqual([1080, 1920, 8]);
      expect(veo.downloads.slice(downloads)).toEqual([{ file: expect.any(String), key: 'query' }]);
      expect(await attempts(created.body.id)).toEqual([['gemini', 'accepted']]);
    }, 90_000);

    it('serves an OpenAI-door request (4 s, 1280x720) as Veo 3.1 at 720p, with a negative prompt nowhere asked', async () => {
      const created = await api(t.url, 'POST', OPENAI, { key, body: { prompt: 'Tide pools at dawn', seconds: '4', size: '1280x720' } });
      expect(created.status).toBe(200);
      const done = await pollUntil(() => api(t.url, 'GET', `${OPENAI}/${created.body.id}`, { key }), (r) => ['completed', 'failed'].includes(r.body.status), { timeoutMs: 60_000, what: 'the OpenAI-door video' });
      expect([done.body.status, done.body.size, done.body.seconds]).toEqual(['completed', '1280x720', '4']);
      expect(lastSent()).toEqual(expect.objectContaining({ model: 'veo-3.1-generate-preview', body: { instances: [{ prompt: 'Tide pools at dawn' }], parameters: { aspectRatio: '16:9', durationSeconds: 4, resolution: '720p' } } }));
      const content = await fetch(`${t.url}${OPENAI}/${created.body.id}/content`, { headers: { authorization: `Bearer ${key}` } });
      expect(content.status).toBe(200);
      const video = await probeVideo(Buffer.from(await content.arrayBuffer()));
      expect([video.width, video.height, Math.round(video.durationS)]).toEqual([1280, 720, 4]);
    }, 90_000);

    it("sends a Kling-door image as its first frame inline (bytesBase64Encoded and mimeType: the gateway's copy fetched)", async () => {
      const image = await png(640, 360);
      const created = await api(t.url, 'POST', KLING_DOOR, { key, body: { model_name: 'veo-3.1-fast-generate-preview', image: image.toString('base64'), prompt: 'The cat turns its head', duration: '6' } });
      expect([created.status, created.body.code]).toEqual([200, 0]);
      const done = await pollUntil(() => api(t.url, 'GET', `${KLING_DOOR}/${created.body.data.task_id}`, { key }), (r) => ['succeed', 'failed'].includes(r.body.data.task_status), { timeoutMs: 60_000, what: 'the Kling-door video' });
      expect([done.body.data.task_status, done.body.data.task_status_msg]).toEqual(['succeed', '']);
      const sent = lastSent();
      expect(sent).toEqual(expect.objectContaining({ model: 'veo-3.1-fast-generate-preview', body: { instances: [{ prompt: 'The cat turns its head', image: { bytesBase64Encoded: expect.any(String), mimeType: 'image/png' } }], parameters: { durationSeconds: 6 } } }));
      const inline = await sharp(Buffer.from(sent.body.instances[0].image.bytesBase64Encoded, 'base64')).metadata();
      expect([inline.format, inline.width, inline.height]).toEqual(['png', 640, 360]);
    }, 90_000);

    it('ends a filtered result (raiMediaFilteredCount, no samples) as a content refusal, not failed over; its own failure is failed over', async () => {
      veo.knobs.filter = true;
      try {
        const refused = await finished((await api(t.url, 'POST', GEN, { key, body: { prompt: 'Something it will not make', model: 'veo-3.0-fast-generate-001', duration: '8s' } })).body.id);
        expect([refused.state, refused.failure_reason]).toEqual(['failed', expect.stringMatching(/safety filters removed the video: .*Prohibited Use policy/)]);
        expect((await attempts(refused.id)).map(([channel]) => channel)).toEqual(['gemini']);
      } finally {
        veo.knobs.filter = false;
      }
      veo.knobs.failWith = 'Video generation failed due to an internal error.';
      try {
        // no duration asked: both make it (Veo at its 8 s), Veo first by priority
        const moved = await finished((await api(t.url, 'POST', GEN, { key, body: { prompt: 'A fox in the snow' } })).body.id);
        expect(moved.state).toBe('completed');
        expect(await attempts(moved.id)).toEqual([
          ['gemini', 'accepted'],
          ['gemini', 'abandoned'],
          ['kling', 'accepted'],
        ]);
      } finally {
        veo.knobs.failWith = undefined;
      }
    }, 120_000);

    it('refuses at once, naming the field, what no Veo model makes: 1080p at 4 s, a square', async () => {
      const sent = veo.received.length;
      const short = await api(t.url, 'POST', GEN, { key, body: { prompt: 'Too short for 1080p', model: 'veo-3.1-generate-preview', duration: '4s', resolution: '1080p' } });
      expect([short.status, short.body.message]).toEqual([400, expect.stringMatching(/^duration: /)]);
      const square = await api(t.url, 'POST', GEN, { key, body: { prompt: 'Square', model: 'veo-3.0-generate-001', aspect_ratio: '1:1' } });
      expect([square.status, square.body.message]).toEqual([400, expect.stringMatching(/^aspect_ratio: /)]);
      expect(veo.received.length).toBe(sent);
    });

    it('tests a channel with its model list', async () => {
      const ok = await admin('POST', `/admin/channels/${channels.gemini}/test`);
      expect([ok.status, ok.body.ok, ok.body.status_code]).toEqual([200, true, 200]);
      expect(veo.server.requests.at(-1)).toEqual(expect.objectContaining({ method: 'GET', url: '/v1beta/models?pageSize=1' }));
    });

    it("makes, prices and shows a request naming no model at the doors' 5 s while a Kling channel could make it, and at Veo's own 8 s once only Veo's could", async () => {
      const unnamed = async () => {
        const created = await api(t.url, 'POST', OPENAI, { key, body: { prompt: 'Rain on a tin roof' } });
        expect(created.status).toBe(200);
        return created.body as { id: string; seconds: string };
      };
      expect((await unnamed()).seconds).toBe('5');
      // the last test here: the Kling channel goes
      expect((await admin('DELETE', `/admin/channels/${channels.kling}`)).status).toBe(200);
      const veoOnly = await unnamed();
      expect(veoOnly.seconds).toBe('8');
      const done = await pollUntil(() => api(t.url, 'GET', `${OPENAI}/${veoOnly.id}`, { key }), (r) => ['completed', 'failed'].includes(r.body.status), { timeoutMs: 60_000, what: 'the unnamed video' });
      expect([done.body.status, done.body.seconds]).toEqual(['completed', '8']);
      expect(lastSent().body.parameters).toEqual(expect.objectContaining({ durationSeconds: 8 }));
      expect((await api(t.url, 'GET', `/tasks/${veoOnly.id}`, { key })).body.credits).toBe(8);
    }, 90_000);
  });
});
