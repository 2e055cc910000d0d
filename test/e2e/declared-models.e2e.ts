import OpenAI, { toFile } from 'openai';
import { type FakeSeedance, startFakeSeedance } from '../support/vendors/seedance/seedance.fake.js';
import { png } from '../support/images.js';
import { probeVideo } from '../support/media.js';
import { pollUntil } from '../support/poll.js';
import { api, startTestApp, type TestApp } from '../support/test-app.js';

const OPENAI = '/openai/v1/videos';
const GEN = '/video-b/v1/generations';
const ADMIN = 'admin-secret-0123456789';
const ARK_KEY = 'ark-declared-test-key-0123456789';
const LITE = 'seedance-1-0-lite-i2v-250428';
/** Seedance 1.0 Lite's reference-image mode as ModelArk documents it: 1-4 reference images, 2-12 s, 480p and 720p. */
const LITE_SPEC = {
  durations: [2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12],
  resolutions: ['480p', '720p'],
  aspect_ratios: ['16:9', '4:3', '1:1', '3:4', '9:16', '21:9'],
  first_frame: true,
  last_frame: true,
  seed: true,
  reference_images: 4,
};

/**
 * A model the gateway's catalog does not know, declared by a channel (issue 56): Seedance 1.0 Lite, which
 * takes 1-4 reference images, is validated at the admin API with refusals naming the field, listed by GET
 * /models as declared, routed and priced like a catalog model, and serves an OpenAI-door request with a
 * reference image in Seedance's own words; what its spec does not make (15 s) is a 400 naming the door's field.
 */
describe('a model a channel declares', () => {
  let t: TestApp;
  let key: string;
  let ark: FakeSeedance;
  let openai: OpenAI;
  let channel: string;

  beforeAll(async () => {
    ark = await startFakeSeedance(ARK_KEY);
    t = await startTestApp({ VIDEO_PROVIDER: 'relay', IMAGE_PROVIDER: 'relay', ADMIN_API_KEY: ADMIN, CHANNEL_SECRET_KEY: 'c'.repeat(64), OUTBOUND_ALLOW_HOSTS: '127.0.0.1', RELAY_POLL_MS: '100' });
    key = await t.createKey('team-declared');
    openai = new OpenAI({ apiKey: key, baseURL: `${t.url}/openai/v1`, maxRetries: 0 });
  }, 60_000);
  afterAll(async () => {
    await t.close();
    await ark.close();
  });

  const admin = (method: string, path: string, body?: unknown) => api(t.url, method, path, { key: ADMIN, body });
  const channelBody = (models: unknown[]) => ({ name: 'seedance-lite', operations: ['video'], protocol: 'seedance', base_url: ark.url, credentials: { api_key: ARK_KEY }, models });
  const lite = (spec: Record<string, unknown> = LITE_SPEC, more: Record<string, unknown> = {}) => ({ name: 'seedance-lite', vendor_model: LITE, spec, price: { per_second: { '480p': 0.02, '720p': 0.04 } }, ...more });

  it('is refused at the admin API naming the field of its spec that is wrong, and for a catalog model, which keeps its spec', async () => {
    const tooLong = await admin('POST', '/admin/channels', channelBody([lite({ ...LITE_SPEC, durations: [2, 3, 100] })]));
    expect([tooLong.status, tooLong.body.message]).toEqual([400, 'models[0].spec.durations[2] must be a whole number of seconds from 1 to 99 (not 100)']);
    const unknown = await admin('POST', '/admin/channels', channelBody([lite({ ...LITE_SPEC, fps: 24 })]));
    expect([unknown.status, unknown.body.message]).toEqual([400, expect.stringMatching(/^models\[0\]\.spec has no field fps/)]);
    const noSpec = await admin('POST', '/admin/channels', channelBody([{ name: 'seedance-lite', vendor_model: LITE }]));
    expect([noSpec.status, noSpec.body.message]).toEqual([400, expect.stringMatching(/^models\[0\]\.vendor_model must be one of the seedance models: .*\(not seedance-1-0-lite-i2v-250428\), or come with a spec/)]);
    const catalog = await admin('POST', '/admin/channels', channelBody([{ name: 'pro', vendor_model: 'seedance-1-0-pro-250528', spec: LITE_SPEC }]));
    expect([catalog.status, catalog.body.message]).toEqual([400, expect.stringMatching(/^models\[0\]\.spec: seedance-1-0-pro-250528 is a seedance model the gateway knows, which keeps its catalog's spec/)]);
    // a catalog id with a space, or in other case, does not pass for a model the catalog does not know
    for (const id of ['seedance-1-0-pro-250528 ', ' seedance-1-0-pro-250528', 'seedance-1-0-pro-250528\t']) {
      const spaced = await admin('POST', '/admin/channels', channelBody([{ name: 'pro', vendor_model: id, spec: LITE_SPEC }]));
      expect([spaced.status, spaced.body.message]).toEqual([400, 'models[0].vendor_model must not contain spaces or control characters']);
    }
    const cased = await admin('POST', '/admin/channels', channelBody([{ name: 'pro', vendor_model: 'SEEDANCE-1-0-PRO-250528', spec: LITE_SPEC }]));
    expect([cased.status, cased.body.message]).toEqual([400, expect.stringMatching(/^models\[0\]\.vendor_model: SEEDANCE-1-0-PRO-250528 differs only in case from seedance-1-0-pro-250528/)]);
    expect((await admin('GET', '/admin/channels')).body).toEqual([]);
  });

  it('is taken, stored as declared (and refused on PATCH naming the field), and listed by GET /models as declared', async () => {
    const created = await admin('POST', '/admin/channels', channelBody([lite()]));
    expect(created.status).toBe(201);
    channel = created.body.id;
    expect(created.body.models).toEqual([{ ...lite(), operation: 'video' }]);
    const patched = await admin('PATCH', `/admin/channels/${channel}`, { models: [lite({ ...LITE_SPEC, resolutions: ['480p', '360p'] })] });
    expect([patched.status, patched.body.message]).toEqual([400, 'models[0].spec.resolutions[1] must be one of 480p, 540p, 720p, 768p, 1080p, 4k (not "360p")']);
    expect((await admin('GET', `/admin/channels/${channel}`)).body.models).toEqual([{ ...lite(), operation: 'video' }]);
    const models = (await api(t.url, 'GET', '/models', { key })).body.models.filter((m: { operation: string }) => m.operation === 'video');
    expect(models).toEqual([
      expect.objectContaining({ name: 'seedance-lite', vendor: 'seedance', vendor_model: LITE, declared: true, durations_s: LITE_SPEC.durations, resolutions: ['480p', '720p'], text_to_video: false, first_frame: true, last_frame: true, seed: true, audio: false, reference_images: 4, references_with_frames: false }),
    ]);
  });

  it('serves an OpenAI-door request with a reference image, sent to Seedance as a reference_image item at 480p, and priced per second', async () => {
    const video = await openai.videos.create({
      prompt: '[Image 1] the mascot waves at the camera',
      input_reference: await toFile(await png(640, 640), 'mascot.png', { type: 'image/png' }),
      size: '854x480',
      seconds: '10',
      ...({ input_reference_role: 'reference_image' } as object),
    } as unknown as OpenAI.Videos.VideoCreateParams);
    const done = (await pollUntil(() => api(t.url, 'GET', `${OPENAI}/${video.id}`, { key }), (r) => ['completed', 'failed'].includes(r.body.status), { timeoutMs: 60_000, what: 'the declared model\'s video' })).body;
    // the size is the video's own: Seedance's 480p at 16:9 is 864x480 (ModelArk's table), where the door's 854x480 asked for 16:9 at 480p
    // no model named: the record names the model that made it, the channel's name for it
    expect([done.status, done.size, done.seconds, done.error, done.model]).toEqual(['completed', '864x480', '10', null, 'seedance-lite']);
    // ModelArk's reference-image form: the prompt as a text item, each image an image_url item of role reference_image (inline: the gateway's copy)
    const sent = [...ark.created.values()].at(-1)!.body;
    expect({ ...sent, content: undefined, callback_url: undefined }).toEqual({ model: LITE, ratio: '16:9', duration: 10, resolution: '480p', watermark: false, content: undefined, callback_url: undefined });
    const items = sent.content as { type: string; text?: string; role?: string; image_url?: { url: string } }[];
    expect(items.map((i) => [i.type, i.role])).toEqual([['text', undefined], ['image_url', 'reference_image']]);
    expect(items[0].text).toBe('[Image 1] the mascot waves at the camera');
    expect(items[1].image_url!.url).toMatch(/^data:image\/png;base64,/);
    const attempts = (await admin('GET', `/admin/tasks/${video.id}/attempts`)).body as { channel: string; outcome: string; model: string; cost: number }[];
    expect(attempts.map((a) => [a.channel, a.outcome, a.model, a.cost])).toEqual([['seedance-lite', 'accepted', 'seedance-lite', 0.2]]);
    const stored = await probeVideo(Buffer.from(await (await openai.videos.downloadContent(video.id)).arrayBuffer()));
    expect(Math.round(stored.durationS)).toBe(10);
  }, 90_000);

  it('refuses what its spec does not make with 400 naming the door\'s field: 15 s (seconds), 1080p (size), on both sides of the bound', async () => {
    const body = { prompt: 'The mascot waves', input_reference: { image_url: 'https://example.com/mascot.png' }, input_reference_role: 'reference_image' };
    const created = (await Promise.all([12, 13].map((s) => api(t.url, 'POST', OPENAI, { key, body: { ...body, seconds: String(s), model: 'seedance-lite' } })))).map((r) => [r.status, r.body.error?.param]);
    expect(created).toEqual([
      [200, undefined],
      [400, 'seconds'],
    ]);
    for (const model of ['seedance-lite', undefined]) {
      const refused = await api(t.url, 'POST', OPENAI, { key, body: { ...body, seconds: '15', ...(model ? { model } : {}) } });
      expect([refused.status, refused.body.error.param, refused.body.error.message]).toEqual([400, 'seconds', expect.stringMatching(/^seconds: .*duration of 15 s/)]);
    }
    const big = await api(t.url, 'POST', OPENAI, { key, body: { ...body, size: '1920x1080', seconds: '5' } });
    expect([big.status, big.body.error.param]).toEqual([400, 'size']);
    // the Luma door: its own field names, the same spec
    const luma = await api(t.url, 'POST', GEN, { key, body: { prompt: 'The mascot waves', duration: '15s', model: 'seedance-lite', keyframes: { frame0: { type: 'image', url: 'https://example.com/mascot.png' } } } });
    expect([luma.status, luma.body.message]).toEqual([400, expect.stringMatching(/^duration: model seedance-lite does not make this duration of 15 s \(it makes 2 to 12 s\)/)]);
  });

  it("an image model declared on an OpenAI channel is listed by OpenAI's models.list as declared, and what its spec does not make is a 400 naming the field", async () => {
    const spec = { sizes: ['1024x1024'], aspect_ratios: ['1:1'], resolutions: ['1k'], qualities: ['low', 'high'], max_n: 2 };
    const refused = await admin('POST', '/admin/channels', { name: 'openai-next', operations: ['image'], protocol: 'openai', base_url: 'http://127.0.0.1:1/v1', credentials: { api_key: 'sk-openai-next-0123456789' }, models: [{ name: 'gpt-image-9', vendor_model: 'gpt-image-9', spec: { ...spec, max_n: 11 } }] });
    expect([refused.status, refused.body.message]).toEqual([400, 'models[0].spec.max_n must be a whole number from 1 to 10 (not 11)']);
    const created = await admin('POST', '/admin/channels', { name: 'openai-next', operations: ['image'], protocol: 'openai', base_url: 'http://127.0.0.1:1/v1', credentials: { api_key: 'sk-openai-next-0123456789' }, models: [{ name: 'gpt-image-9', vendor_model: 'gpt-image-9', spec, price: { per_image: 0.05 } }] });
    expect([created.status, created.body.models[0].operation]).toEqual([201, 'image']);
    const listed = await openai.models.list();
    // the image models: the declared one alone (the door lists its video and speech models too)
    const listedImages = listed.data.filter((m) => m.id.startsWith('gpt-image'));
    expect(listedImages.map((m) => [m.id, m.owned_by, (m as unknown as { declared: boolean }).declared])).toEqual([['gpt-image-9', 'openai', true]]);
    const tooMany = await api(t.url, 'POST', '/openai/v1/images/generations', { key, body: { model: 'gpt-image-9', prompt: 'A lighthouse', n: 3 } });
    expect([tooMany.status, tooMany.body.error.param]).toEqual([400, 'n']);
    const wide = await api(t.url, 'POST', '/openai/v1/images/generations', { key, body: { model: 'gpt-image-9', prompt: 'A lighthouse', size: '1536x1024' } });
    expect([wide.status, wide.body.error.param]).toEqual([400, 'size']);
  });
});
