import { UpstreamRefused } from '../../../../src/infra/relay/upstream-client.js';
import { UnusableAnswer } from '../../../../src/vendors/contracts/vendor.js';
import { GOOGLE } from '../../../../src/vendors/google/google.vendor.js';
import { VEO_MODELS, veoBody, veoInline, veoStatus, veoUnmet, VeoVideoVendor, veoVideoUrl } from '../../../../src/vendors/google/veo-video.vendor.js';
import { ask, canned, createOf, FRAME, model, realClient, thrown } from '../adapter-kit.js';

// The Gemini API's Veo guide and js-genai's converters: predictLongRunning → {name}; GET {name} → the operation
const NAME = 'models/veo-3.1-generate-preview/operations/qx1ehj2ju6ex';
const done = (response: unknown) => ({ name: NAME, done: true, response: { '@type': 'type.googleapis.com/google.ai.generativelanguage.v1beta.PredictLongRunningResponse', generateVideoResponse: response } });
const inline = { bytesBase64Encoded: FRAME.toString('base64'), mimeType: 'image/png' };

describe('Veo: the request mapping', () => {
  const veo31 = model(VEO_MODELS, 'veo-3.1-generate-preview');

  it('a prompt alone: one instance, its stated default duration (8 s, as its API makes and the task is priced)', () => {
    expect(veoBody(veo31, ask(), { references: [] })).toEqual({ instances: [{ prompt: 'A red fox running through snow' }], parameters: { durationSeconds: 8 } });
  });

  it('frames inline, the asked shape, duration, resolution, negative prompt', () => {
    expect(veoBody(veo31, ask({ aspectRatio: '9:16', durationS: 8, resolution: '1080p', negativePrompt: 'cartoon' }), { first: inline, last: inline, references: [] })).toEqual({
      instances: [{ prompt: 'A red fox running through snow', image: inline, lastFrame: inline }],
      parameters: { aspectRatio: '9:16', durationSeconds: 8, resolution: '1080p', negativePrompt: 'cartoon' },
    });
  });

  it("a stated default (a declared model's) is sent, 8 s still between two frames, from references and at 1080p; a catalog model's own default is left to Veo", () => {
    const declared = { ...veo31, id: 'veo-4-preview', durations: [4, 6, 8], defaultDurationS: 6, defaultResolution: '1080p', durationsAt: undefined };
    expect(veoBody(declared, ask(), { references: [] }).parameters).toEqual({ durationSeconds: 8, resolution: '1080p' });
    expect(veoBody({ ...declared, defaultResolution: '720p' }, ask(), { references: [] }).parameters).toEqual({ durationSeconds: 6, resolution: '720p' });
    expect(veoBody(declared, ask({ durationS: 4, resolution: '720p' }), { references: [] }).parameters).toEqual({ durationSeconds: 4, resolution: '720p' });
    expect(veoBody(declared, ask(), { first: inline, last: inline, references: [] }).parameters).toEqual({ durationSeconds: 8, resolution: '1080p' });
    expect(veoBody(declared, ask(), { references: [inline] }).parameters).toEqual({ durationSeconds: 8, resolution: '1080p' });
    expect(veoBody(veo31, ask(), { first: inline, last: inline, references: [] }).parameters).toEqual({ durationSeconds: 8 });
  });

  it('reference images as assets, 8 s whether asked or not', () => {
    expect(veoBody(veo31, ask(), { references: [inline] })).toEqual({ instances: [{ prompt: 'A red fox running through snow', referenceImages: [{ image: inline, referenceType: 'asset' }] }], parameters: { durationSeconds: 8 } });
  });

  it('what the spec cannot say is refused: no sound, a first-to-last video or one from references not 8 s', async () => {
    expect((await thrown(() => veoUnmet(veo31, ask({ audio: false })))).message).toMatch(/always makes sound/);
    expect((await thrown(() => veoUnmet(veo31, ask({ lastFrame: { type: 'image', url: 'https://img/b.png' }, durationS: 6 })))).message).toMatch(/8 s long only/);
    expect((await thrown(() => veoUnmet(veo31, ask({ referenceImages: [{ type: 'image', url: 'https://img/r.png' }], durationS: 4 })))).message).toMatch(/reference images 8 s long only/);
    expect(veoUnmet(veo31, ask({ audio: true, durationS: 4 }))).toBeUndefined();
  });

  it('an image is PNG, JPEG or WebP inline; anything else refused', async () => {
    expect(veoInline(FRAME, 'first')).toEqual(inline);
    expect((await thrown(() => veoInline(Buffer.from('GIF89a'), 'last'))).message).toBe("the last frame's image could not be read as PNG, JPEG or WebP");
    expect((await thrown(() => veoInline(undefined, 'reference'))).message).toBe('the reference image could not be read as PNG, JPEG or WebP');
  });
});

describe('Veo: the answer reading', () => {
  it('not done is work in progress; done with a sample is its video', () => {
    expect(veoStatus({ name: NAME })).toEqual({ state: 'working' });
    expect(veoStatus({ name: NAME, done: false })).toEqual({ state: 'working' });
    expect(veoStatus(done({ generatedSamples: [{ video: { uri: 'https://generativelanguage.googleapis.com/v1beta/files/abc:download?alt=media' } }] }))).toEqual({
      state: 'succeeded',
      videoUrl: 'https://generativelanguage.googleapis.com/v1beta/files/abc:download?alt=media',
    });
  });

  it('its safety filters’ refusal with their reasons; an error’s words; done without a video', () => {
    const filtered = veoStatus(done({ raiMediaFilteredCount: 1, raiMediaFilteredReasons: ["Veo could not generate videos because the input image violates Vertex AI's usage guidelines."] }));
    expect(filtered).toEqual({ state: 'failed', reason: "the upstream's safety filters removed the video: Veo could not generate videos because the input image violates Vertex AI's usage guidelines." });
    expect(GOOGLE.contentRefusal.test((filtered as { reason: string }).reason)).toBe(true);
    expect(veoStatus(done({ raiMediaFilteredCount: 1 }))).toEqual({ state: 'failed', reason: "the upstream's safety filters removed the video" });
    expect(veoStatus({ name: NAME, done: true, error: { code: 13, message: 'Internal error' } })).toEqual({ state: 'failed', reason: 'Internal error' });
    expect(veoStatus({ name: NAME, done: true, error: { code: 13, status: 'INTERNAL' } })).toEqual({ state: 'failed', reason: 'INTERNAL' });
    expect(veoStatus(done({ generatedSamples: [] }))).toEqual({ state: 'failed', reason: 'the upstream finished the operation without a video' });
  });

  it('a malformed operation names the field', async () => {
    expect((await thrown(() => veoStatus({ done: 'yes' }))).message).toMatch(/the poll without a usable done/);
    expect((await thrown(() => veoStatus(done({ generatedSamples: [{ video: { uri: 3 } }] })))).message).toMatch(/generatedSamples\[0\]\.video\.uri/);
  });

  it('the video’s link takes the key on the account’s origin only', () => {
    const base = 'https://generativelanguage.googleapis.com/v1beta';
    expect(veoVideoUrl('https://generativelanguage.googleapis.com/v1beta/files/abc:download?alt=media', base, 'k1')).toBe('https://generativelanguage.googleapis.com/v1beta/files/abc:download?alt=media&key=k1');
    expect(veoVideoUrl('https://elsewhere.example/v.mp4', base, 'k1')).toBe('https://elsewhere.example/v.mp4');
    expect(veoVideoUrl('https://generativelanguage.googleapis.com/v.mp4', base, undefined)).toBe('https://generativelanguage.googleapis.com/v.mp4');
  });
});

describe('Veo: the adapter over HTTP', () => {
  const vendor = new VeoVideoVendor(realClient());

  it('reads its protocol and poll floor from its descriptor', () => {
    expect([vendor.protocol, vendor.minPollS]).toEqual([GOOGLE.protocol, GOOGLE.pollFloorS]);
  });

  it('predictLongRunning with its key header, then the operation by name; the video keyed on its origin', async () => {
    let created: unknown = { name: NAME };
    let origin = '';
    const up = await canned((method) => ({ body: method === 'POST' ? created : done({ generatedSamples: [{ video: { uri: `${origin}/v1beta/files/v1:download?alt=media` } }] }) }), '/v1beta');
    origin = up.server.url;
    const account = { ...up.account, auth: GOOGLE.auth({ api_key: 'gk-1' }) };
    try {
      const request = ask({ firstFrame: { type: 'image', url: 'https://img/a.png' } });
      expect(await vendor.create(account, createOf(model(VEO_MODELS, 'veo-3.0-generate-001'), request))).toEqual({ upstreamId: NAME, status: { state: 'working' } });
      expect(up.sent[0]).toMatchObject({ method: 'POST', path: '/v1beta/models/veo-3.0-generate-001:predictLongRunning', headers: { 'x-goog-api-key': 'gk-1' }, body: { instances: [{ image: inline }] } });
      expect(await vendor.query(account, NAME, true)).toEqual({ state: 'succeeded', videoUrl: `${origin}/v1beta/files/v1:download?alt=media&key=gk-1` });
      expect(up.sent[1].path).toBe(`/v1beta/${NAME}`);
      expect(await thrown(vendor.query(account, 'models/../../admin', true))).toBeInstanceOf(UnusableAnswer);
      created = { name: '../escape' };
      expect((await thrown(vendor.create(account, createOf(model(VEO_MODELS, 'veo-3.0-generate-001'), ask())))).message).toMatch(/the create request without a usable name/);
      const sent = up.sent.length;
      expect(await thrown(vendor.create(account, createOf(model(VEO_MODELS, 'veo-3.0-generate-001'), ask({ audio: false }))))).toBeInstanceOf(UpstreamRefused);
      expect(up.sent.length).toBe(sent);
    } finally {
      await up.close();
    }
  });

  it('a create answered done at once is read at once, its link keyed', async () => {
    const up = await canned(() => ({ body: undefined }), '/v1beta');
    const base = `${up.server.url}/v1beta`;
    const served = await canned(() => ({ body: done({ generatedSamples: [{ video: { uri: `${base}/files/v2:download?alt=media` } }] }) }), '');
    try {
      const account = { baseUrl: served.account.baseUrl, auth: GOOGLE.auth({ api_key: 'gk-2' }) };
      const created = await vendor.create(account, createOf(model(VEO_MODELS, 'veo-3.0-generate-001'), ask()));
      // the link is on another origin than the account's: it goes as it came
      expect(created.status).toEqual({ state: 'succeeded', videoUrl: `${base}/files/v2:download?alt=media` });
    } finally {
      await up.close();
      await served.close();
    }
  });
});
