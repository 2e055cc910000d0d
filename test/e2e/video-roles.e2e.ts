import OpenAI, { toFile } from 'openai';
import sharp from 'sharp';
import { type FakeSeedance, startFakeSeedance } from '../support/vendors/seedance/seedance.fake.js';
import { type FakeVeo, startFakeVeo } from '../support/vendors/veo/veo.fake.js';
import type { FakeVideoVendor } from '../support/vendors/video-fake.js';
import { startFakeKlingVideo } from '../support/vendors/kling/kling.fake.js';
import { png } from '../support/images.js';
import { probeVideo } from '../support/media.js';
import { pollUntil } from '../support/poll.js';
import { api, startTestApp, type TestApp } from '../support/test-app.js';

const GEN = '/video-b/v1/generations';
const OPENAI = '/openai/v1/videos';
const ADMIN = 'admin-secret-0123456789';
const ARK_KEY = 'ark-roles-test-key-0123456789';
const GEMINI_KEY = 'gemini-roles-test-key-0123456789';
const KLING: [string, string] = ['ak-roles-000001', 'sk-roles-secret-01'];
/** Kling's models but kling-v1-6, whose multi-image2video takes reference images. */
const KLING_WITHOUT_REFERENCES = ['kling-v2-5-turbo', 'kling-v2-1'].map((m) => ({ name: m, vendor_model: m }));

/**
 * Media with roles and frames fitted to the asked shape (issue 38): an OpenAI-door input_reference given as a
 * reference image goes only to a model that takes reference images, in that role (Seedance 2.0's
 * `reference_image` item, Veo 3.1's `referenceImages`), and is refused naming input_reference when no
 * configured model takes one; a request asking a ratio with a first frame of another shape is served by Kling
 * (whose video takes its frame's shape) with the frame fitted to the ratio (crop or pad), unless fit is none.
 */
describe('video media roles and fitted frames', () => {
  let t: TestApp;
  let key: string;
  let ark: FakeSeedance;
  let veo: FakeVeo;
  let kling: FakeVideoVendor;
  let openai: OpenAI;
  const channels: Record<string, string> = {};

  beforeAll(async () => {
    [ark, veo, kling] = await Promise.all([startFakeSeedance(ARK_KEY), startFakeVeo(GEMINI_KEY), startFakeKlingVideo(...KLING)]);
    kling.knobs.pollsUntilDone = 1;
    veo.knobs.pollsUntilDone = 1;
    // callers' URLs on loopback are taken (the fakes fetch them there)
    t = await startTestApp({ VIDEO_PROVIDER: 'relay', ADMIN_API_KEY: ADMIN, CHANNEL_SECRET_KEY: 'c'.repeat(64), OUTBOUND_ALLOW_HOSTS: '127.0.0.1', ALLOW_PRIVATE_URLS: 'true', RELAY_POLL_MS: '100' });
    key = await t.createKey('team-roles');
    openai = new OpenAI({ apiKey: key, baseURL: `${t.url}/openai/v1`, maxRetries: 0 });
    const add = async (name: string, body: Record<string, unknown>) => {
      const res = await api(t.url, 'POST', '/admin/channels', { key: ADMIN, body: { name, operations: ['video'], ...body } });
      expect([name, res.status]).toEqual([name, 201]);
      channels[name] = res.body.id as string;
    };
    // Kling first by priority: a request it could make goes there, so a request that reaches another did so for its roles
    await add('kling', { protocol: 'kling', base_url: kling.url, credentials: { access_key: KLING[0], secret_key: KLING[1] }, priority: 9, models: KLING_WITHOUT_REFERENCES });
    await add('seedance', { protocol: 'seedance', base_url: ark.url, credentials: { api_key: ARK_KEY }, priority: 5 });
    await add('veo', { protocol: 'gemini', base_url: veo.baseUrl, credentials: { api_key: GEMINI_KEY }, priority: 1 });
  }, 60_000);
  afterAll(async () => {
    await t.close();
    await Promise.all([ark.close(), veo.close(), kling.close()]);
  });

  const admin = (method: string, path: string, body?: unknown) => api(t.url, method, path, { key: ADMIN, body });
  /** Only these channels enabled (the others disabled: their models still count as configured). */
  const only = async (...names: string[]) => {
    for (const [name, id] of Object.entries(channels)) expect((await admin('POST', `/admin/channels/${id}/${names.includes(name) ? 'enable' : 'disable'}`)).status).toBe(200);
  };
  /** Seedance and Veo serve their whole catalogs (with reference images), or only their models without. */
  const referenceModels = async (served: boolean) => {
    const models = (vendorModel: string) => (served ? [] : [{ name: vendorModel, vendor_model: vendorModel }]);
    expect((await admin('PATCH', `/admin/channels/${channels.seedance}`, { models: models('seedance-1-0-pro-250528') })).status).toBe(200);
    expect((await admin('PATCH', `/admin/channels/${channels.veo}`, { models: models('veo-3.0-generate-001') })).status).toBe(200);
  };
  const finishedOpenAi = async (id: string) => (await pollUntil(() => api(t.url, 'GET', `${OPENAI}/${id}`, { key }), (r) => ['completed', 'failed'].includes(r.body.status), { timeoutMs: 60_000, what: `video ${id}` })).body;
  const finishedLuma = async (id: string) => (await pollUntil(() => api(t.url, 'GET', `${GEN}/${id}`, { key }), (r) => ['completed', 'failed'].includes(r.body.state), { timeoutMs: 60_000, what: `generation ${id}` })).body;
  const attempts = async (id: string) => ((await admin('GET', `/admin/tasks/${id}/attempts`)).body as { channel: string; outcome: string }[]).map((a) => [a.channel, a.outcome]);
  const content = async (id: string) => probeVideo(Buffer.from(await (await openai.videos.downloadContent(id)).arrayBuffer()));
  /** The image a vendor was sent: a URL it fetches, a data: URI, or Kling's bare Base64. */
  const imageAt = async (sent: string) => {
    const bytes = /^https?:\/\//.test(sent) ? Buffer.from(await (await fetch(sent)).arrayBuffer()) : Buffer.from(sent.replace(/^data:image\/[a-z]+;base64,/, ''), 'base64');
    return sharp(bytes).metadata();
  };

  describe('input_reference as a reference image', () => {

    it('goes to Seedance 2.0 as a reference_image item (never to Kling, which takes none), and the video is made', async () => {
      await only('kling', 'seedance');
      const before = kling.created.size;
      const video = await openai.videos.create({
        prompt: 'The mascot waves at the camera',
        input_reference: await toFile(await png(640, 640), 'mascot.png', { type: 'image/png' }),
        size: '1280x720',
        seconds: '8',
        // the gateway's extension, sent as a multipart field as the SDK sends its own
        ...({ input_reference_role: 'reference_image' } as object),
      } as OpenAI.Videos.VideoCreateParams);
      const done = await finishedOpenAi(video.id);
      expect([done.status, done.size, done.seconds]).toEqual(['completed', '1280x720', '8']);
      const sent = [...ark.created.values()].at(-1)!.body;
      expect(sent.model).toBe('dreamina-seedance-2-0-260128');
      const items = sent.content as { type: string; role?: string; image_url?: { url: string } }[];
      expect(items.map((i) => [i.type, i.role])).toEqual([['text', undefined], ['image_url', 'reference_image']]);
      expect(sent.ratio).toBe('16:9');
      // the uploaded image itself, inline (an upstream may not reach the gateway's links)
      expect(items[1].image_url!.url).toMatch(/^data:image\/png;base64,/);
      expect(await imageAt(items[1].image_url!.url)).toEqual(expect.objectContaining({ width: 640, height: 640 }));
      expect(kling.created.size).toBe(before);
      expect(await attempts(video.id)).toEqual([['seedance', 'accepted']]);
      const stored = await content(video.id);
      expect([stored.width, stored.height, Math.round(stored.durationS)]).toEqual([1280, 720, 8]);
    }, 90_000);

    it("goes to Veo 3.1 as referenceImages of type asset (the image's bytes), 8 s", async () => {
      await only('kling', 'veo');
      const created = await api(t.url, 'POST', OPENAI, { key, body: { prompt: 'A product turning on a plinth', size: '720x1280', seconds: '8', input_reference: { image_url: `${t.url}/samples/keyframe.jpg` }, input_reference_role: 'reference_image' } });
      expect(created.status).toBe(200);
      const done = await finishedOpenAi(created.body.id);
      expect([done.status, done.size, done.seconds]).toEqual(['completed', '720x1280', '8']);
      const sent = veo.received.at(-1)!.body as { instances: Record<string, any>[]; parameters: Record<string, unknown> };
      expect(Object.keys(sent.instances[0]).sort()).toEqual(['prompt', 'referenceImages']);
      expect(sent.instances[0].referenceImages).toEqual([{ image: { bytesBase64Encoded: expect.any(String), mimeType: 'image/jpeg' }, referenceType: 'asset' }]);
      expect(await sharp(Buffer.from(sent.instances[0].referenceImages[0].image.bytesBase64Encoded, 'base64')).metadata()).toEqual(expect.objectContaining({ width: 1280, height: 720 }));
      expect(sent.parameters).toEqual(expect.objectContaining({ aspectRatio: '9:16', durationSeconds: 8 }));
      expect(await attempts(created.body.id)).toEqual([['veo', 'accepted']]);
      const stored = await content(created.body.id);
      expect([stored.width, stored.height, Math.round(stored.durationS)]).toEqual([720, 1280, 8]);
    }, 90_000);

    it("goes to Kling's kling-v1-6 as image_list on multi-image2video, at the asked ratio, when the channel serves it", async () => {
      await only('kling');
      expect((await admin('PATCH', `/admin/channels/${channels.kling}`, { models: [...KLING_WITHOUT_REFERENCES, { name: 'kling-v1-6', vendor_model: 'kling-v1-6' }] })).status).toBe(200);
      const created = await api(t.url, 'POST', OPENAI, { key, body: { prompt: 'The mascot on a beach', size: '720x1280', seconds: '5', input_reference: { image_url: `${t.url}/samples/keyframe.jpg` }, input_reference_role: 'reference_image' } });
      expect(created.status).toBe(200);
      const done = await finishedOpenAi(created.body.id);
      expect([done.status, done.size, done.seconds]).toEqual(['completed', '720x1280', '5']);
      const sent = [...kling.created.values()].at(-1)!;
      expect(sent.path).toBe('multi-image2video');
      expect(sent.body).toEqual(expect.objectContaining({ model_name: 'kling-v1-6', aspect_ratio: '9:16', image_list: [{ image: `${t.url}/samples/keyframe.jpg` }], duration: '5' }));
      expect(sent.body.image).toBeUndefined();
      const stored = await content(created.body.id);
      expect([stored.width, stored.height, Math.round(stored.durationS)]).toEqual([720, 1280, 5]);
      expect((await admin('PATCH', `/admin/channels/${channels.kling}`, { models: KLING_WITHOUT_REFERENCES })).status).toBe(200);
    }, 90_000);

    it('as a first frame (the default) it is a first frame: Kling takes it', async () => {
      await only('kling', 'seedance', 'veo');
      const created = await api(t.url, 'POST', OPENAI, { key, body: { prompt: 'From this still', input_reference: { image_url: `${t.url}/samples/keyframe.jpg` }, seconds: '5' } });
      expect(created.status).toBe(200);
      expect((await finishedOpenAi(created.body.id)).status).toBe('completed');
      expect(await attempts(created.body.id)).toEqual([['kling', 'accepted']]);
      expect([...kling.created.values()].at(-1)!.path).toBe('image2video');
    }, 90_000);

    it('is refused with 400 naming input_reference when no configured model takes reference images', async () => {
      await referenceModels(false);
      // an admin's change is in force for the next request on the process that made it
      const refused = await api(t.url, 'POST', OPENAI, { key, body: { prompt: 'Keep to this', input_reference: { image_url: `${t.url}/samples/keyframe.jpg` }, input_reference_role: 'reference_image' } });
      expect([refused.status, refused.body.error?.param]).toEqual([400, 'input_reference']);
      expect(refused.body.error.message).toMatch(/^input_reference: no configured model makes this 1 reference image/);
      const noImage = await api(t.url, 'POST', OPENAI, { key, body: { prompt: 'Keep to nothing', input_reference_role: 'reference_image' } });
      expect([noImage.status, noImage.body.error?.param]).toEqual([400, 'input_reference_role']);
      const badRole = await api(t.url, 'POST', OPENAI, { key, body: { prompt: 'Keep to this', input_reference: { image_url: `${t.url}/samples/keyframe.jpg` }, input_reference_role: 'style' } });
      expect([badRole.status, badRole.body.error?.param, badRole.body.error?.message]).toEqual([400, 'input_reference_role', 'input_reference_role must be first_frame or reference_image']);
      await referenceModels(true);
    }, 60_000);

    it('GET /models says how many reference images each model takes', async () => {
      const models = (await api(t.url, 'GET', '/models', { key })).body.models as { name: string; reference_images: number; references_with_frames: boolean }[];
      const of = (name: string) => models.find((m) => m.name === name);
      expect([of('dreamina-seedance-2-0-260128')?.reference_images, of('veo-3.1-generate-preview')?.reference_images, of('kling-v2-5-turbo')?.reference_images]).toEqual([9, 3, 0]);
      expect(of('veo-3.1-generate-preview')?.references_with_frames).toBe(false);
      // a resolution that makes fewer durations says which (Veo: 1080p is 8 s only); a model without such limits lists none
      expect([(of('veo-3.1-generate-preview') as { durations_at?: unknown })?.durations_at, (of('kling-v2-5-turbo') as { durations_at?: unknown })?.durations_at]).toEqual([{ '1080p': [8] }, undefined]);
    });
  });

  describe('a first frame fitted to the asked ratio', () => {
    // only Kling serves video: Seedance (whose video takes its frame's shape too) and Veo off video altogether
    beforeAll(async () => {
      for (const name of ['seedance', 'veo']) {
        expect((await admin('DELETE', `/admin/channels/${channels[name]}`)).status).toBe(200);
        delete channels[name];
      }
      await only('kling');
    });

    const lumaRequest = (extra: Record<string, unknown> = {}) =>
      api(t.url, 'POST', GEN, { key, body: { prompt: 'The hills at dusk, the camera rising', aspect_ratio: '9:16', keyframes: { frame0: { type: 'image', url: `${t.url}/samples/keyframe.jpg` } }, ...extra } });

    it('a Luma-door 9:16 request with a 16:9 keyframe is served by Kling with the frame cropped to 9:16; the stored video is 9:16', async () => {
      const created = await lumaRequest();
      expect(created.status).toBe(201);
      const done = await finishedLuma(created.body.id);
      expect(done.state).toBe('completed');
      expect(await attempts(created.body.id)).toEqual([['kling', 'accepted']]);
      const sent = [...kling.created.values()].at(-1)!;
      expect(sent.path).toBe('image2video');
      expect(sent.body.aspect_ratio).toBeUndefined();
      // Kling was handed the gateway's fitted copy inline (Base64, no data: prefix, as Kling takes it), not the caller's 16:9 keyframe: its centre at exactly 9:16, 405x720
      expect(sent.body.image).toMatch(/^\/9j\//);
      const frame = await imageAt(String(sent.body.image));
      expect([frame.width, frame.height]).toEqual([405, 720]);
      const video = await probeVideo(Buffer.from(await (await fetch(done.assets.video)).arrayBuffer()));
      expect(video.width / video.height).toBeCloseTo(9 / 16, 2);
      expect([video.width, video.height]).toEqual([720, 1280]);
    }, 90_000);

    it('fit pad keeps the whole frame on a blurred fill: the frame sent is 9:16 with the picture across its width', async () => {
      const created = await lumaRequest({ fit: 'pad' });
      expect(created.status).toBe(201);
      const done = await finishedLuma(created.body.id);
      expect(done.state).toBe('completed');
      const frame = await imageAt(String([...kling.created.values()].at(-1)!.body.image));
      expect([frame.width, frame.height]).toEqual([1287, 2288]);
      const video = await probeVideo(Buffer.from(await (await fetch(done.assets.video)).arrayBuffer()));
      expect([video.width, video.height]).toEqual([720, 1280]);
    }, 90_000);

    it('fit none asks for the frame as it is: with only Kling configured, 400 naming aspect_ratio; a request without a ratio is not fitted', async () => {
      const refused = await lumaRequest({ fit: 'none' });
      expect([refused.status, refused.body.code]).toEqual([400, 1201]);
      expect(refused.body.message).toMatch(/^aspect_ratio: no configured model makes this aspect ratio \(9:16, with a first frame\)/);
      const badFit = await lumaRequest({ fit: 'stretch' });
      expect([badFit.status, badFit.body.message]).toEqual([400, 'fit must be crop, pad or none']);
      const before = kling.created.size;
      const unshaped = await api(t.url, 'POST', GEN, { key, body: { prompt: 'As it is', keyframes: { frame0: { type: 'image', url: `${t.url}/samples/keyframe.jpg` } } } });
      expect(unshaped.status).toBe(201);
      expect((await finishedLuma(unshaped.body.id)).state).toBe('completed');
      expect(kling.created.size).toBe(before + 1);
      expect(String([...kling.created.values()].at(-1)!.body.image)).toBe(`${t.url}/samples/keyframe.jpg`);
    }, 90_000);

    it("the channel's frame_fit is the default: none refuses such a request, unless the request asks a fit; pad pads", async () => {
      expect((await admin('PATCH', `/admin/channels/${channels.kling}`, { frame_fit: 'none' })).body.frame_fit).toBe('none');
      const refused = await lumaRequest();
      expect([refused.status, refused.body.message]).toEqual([400, expect.stringMatching(/^aspect_ratio: /)]);
      const asked = await lumaRequest({ fit: 'crop' });
      expect(asked.status).toBe(201);
      expect((await finishedLuma(asked.body.id)).state).toBe('completed');
      expect((await imageAt(String([...kling.created.values()].at(-1)!.body.image))).width).toBe(405);

      expect((await admin('PATCH', `/admin/channels/${channels.kling}`, { frame_fit: 'pad' })).body.frame_fit).toBe('pad');
      const padded = await lumaRequest();
      expect(padded.status).toBe(201);
      expect((await finishedLuma(padded.body.id)).state).toBe('completed');
      expect((await imageAt(String([...kling.created.values()].at(-1)!.body.image))).width).toBe(1287);
      const bad = await admin('PATCH', `/admin/channels/${channels.kling}`, { frame_fit: 'squash' });
      expect([bad.status, bad.body.message]).toEqual([400, 'frame_fit must be crop, pad or none, or null']);
      expect((await admin('PATCH', `/admin/channels/${channels.kling}`, { frame_fit: null })).body.frame_fit).toBeNull();
    }, 120_000);

    it('an OpenAI-door 720x1280 request with a 16:9 input_reference is fitted the same way', async () => {
      const created = await api(t.url, 'POST', OPENAI, { key, body: { prompt: 'Upright', size: '720x1280', input_reference: { image_url: `${t.url}/samples/keyframe.jpg` } } });
      expect(created.status).toBe(200);
      const done = await finishedOpenAi(created.body.id);
      expect([done.status, done.size]).toEqual(['completed', '720x1280']);
      const video = await content(created.body.id);
      expect([video.width, video.height]).toEqual([720, 1280]);
    }, 90_000);
  });
});
