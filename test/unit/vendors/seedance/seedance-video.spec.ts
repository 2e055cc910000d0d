import { UnusableAnswer } from '../../../../src/vendors/contracts/vendor.js';
import { SEEDANCE } from '../../../../src/vendors/seedance/seedance.vendor.js';
import { SEEDANCE_MODELS, seedanceBody, seedanceStatus, SeedanceVideoVendor } from '../../../../src/vendors/seedance/seedance-video.vendor.js';
import { ask, canned, createOf, FRAME, model, realClient, thrown } from '../adapter-kit.js';

// ModelArk's "Video Generation API" reference: POST /contents/generations/tasks → {id}; GET …/{id}
const task = (status: string, over: Record<string, unknown> = {}) => ({ id: 'cgt-20250331175019-68d9t', model: 'seedance-1-0-pro-250528', status, created_at: 1743414619, updated_at: 1743414673, ...over });

describe('Seedance: the request mapping', () => {
  const pro = model(SEEDANCE_MODELS, 'seedance-1-0-pro-250528');
  const v15 = model(SEEDANCE_MODELS, 'seedance-1-5-pro-251215');
  const v2 = model(SEEDANCE_MODELS, 'dreamina-seedance-2-0-260128');

  it('a prompt alone: a text item, its ratio (16:9 unless asked), what it is priced at (5 s; 1.0 Pro at 1080p, the later models 720p), no watermark', () => {
    expect(seedanceBody(pro, ask(), { references: [] })).toEqual({ model: 'seedance-1-0-pro-250528', content: [{ type: 'text', text: 'A red fox running through snow' }], ratio: '16:9', duration: 5, resolution: '1080p', watermark: false });
    expect([seedanceBody(v15, ask(), { references: [] }).duration, seedanceBody(v15, ask(), { references: [] }).resolution]).toEqual([5, '720p']);
  });

  it("a declared model: its defaults sent (what it is priced at), and the asked ratio with a first frame unless it takes the frame's shape", () => {
    const lite = { ...pro, id: 'seedance-1-0-lite-i2v-250428', durations: [2, 3, 4, 5], resolutions: ['480p', '720p'], shapeFromImage: false, defaultDurationS: undefined, defaultResolution: undefined };
    const framed = ask({ firstFrame: { type: 'image', url: 'https://img/sq.png' }, aspectRatio: '16:9' });
    expect(seedanceBody(lite, framed, { first: 'https://img/sq.png', references: [] })).toEqual(expect.objectContaining({ ratio: '16:9', duration: 2, resolution: '480p' }));
    expect(seedanceBody({ ...lite, defaultDurationS: 5, defaultResolution: '720p' }, framed, { first: 'https://img/sq.png', references: [] })).toEqual(expect.objectContaining({ ratio: '16:9', duration: 5, resolution: '720p' }));
    // no ratio asked: the frame's own shape
    expect(seedanceBody(lite, ask({ firstFrame: { type: 'image', url: 'https://img/sq.png' } }), { first: 'https://img/sq.png', references: [] }).ratio).toBe('adaptive');
  });

  it('frames as image_url items with their roles and ratio adaptive; duration, resolution, seed, the callback', () => {
    const request = ask({ firstFrame: { type: 'image', url: 'https://img/a.png' }, lastFrame: { type: 'image', url: 'https://img/b.png' }, aspectRatio: '9:16', durationS: 5, resolution: '1080p', seed: 11 });
    expect(seedanceBody(pro, request, { first: 'https://img/a.png', last: 'https://img/b.png', references: [] }, 'https://gw/cb')).toEqual({
      model: 'seedance-1-0-pro-250528',
      content: [
        { type: 'text', text: 'A red fox running through snow' },
        { type: 'image_url', image_url: { url: 'https://img/a.png' }, role: 'first_frame' },
        { type: 'image_url', image_url: { url: 'https://img/b.png' }, role: 'last_frame' },
      ],
      ratio: 'adaptive',
      duration: 5,
      resolution: '1080p',
      seed: 11,
      watermark: false,
      callback_url: 'https://gw/cb',
    });
  });

  it('reference images as reference_image items; generate_audio on the models that make sound only', () => {
    const body = seedanceBody(v2, ask({ audio: true, referenceImages: [{ type: 'image', url: 'https://img/r.png' }] }), { references: ['https://img/r.png'] });
    expect(body.content).toEqual([{ type: 'text', text: 'A red fox running through snow' }, { type: 'image_url', image_url: { url: 'https://img/r.png' }, role: 'reference_image' }]);
    expect(body.generate_audio).toBe(true);
    expect(seedanceBody(v15, ask(), { references: [] }).generate_audio).toBe(false);
    expect(seedanceBody(pro, ask({ audio: true }), { references: [] })).not.toHaveProperty('generate_audio');
  });
});

describe('Seedance: the answer reading', () => {
  it('succeeded: content.video_url and the tokens billed', () => {
    expect(seedanceStatus(task('succeeded', { content: { video_url: 'https://ark-content/v.mp4' }, usage: { completion_tokens: 108900, total_tokens: 108900 }, seed: 10, resolution: '720p', duration: 5 }))).toEqual({
      state: 'succeeded',
      videoUrl: 'https://ark-content/v.mp4',
      billed: { amount: 108900, unit: 'tokens' },
    });
    expect(seedanceStatus(task('succeeded', { content: {} }))).toEqual({ state: 'failed', reason: 'the upstream succeeded without a video_url' });
  });

  it('queued and running are work in progress; cancelled and expired fail in words', () => {
    expect(seedanceStatus(task('queued'))).toEqual({ state: 'working' });
    expect(seedanceStatus(task('running'))).toEqual({ state: 'working' });
    expect(seedanceStatus(task('cancelled'))).toEqual({ state: 'failed', reason: 'the upstream task was cancelled' });
    expect(seedanceStatus(task('expired'))).toEqual({ state: 'failed', reason: 'the upstream task was expired' });
  });

  it('failed: its message with its code in brackets (its moderation), or whichever it gave', () => {
    const refused = seedanceStatus(task('failed', { error: { code: 'OutputVideoSensitiveContentDetected', message: 'The output video may contain sensitive information.' } }));
    expect(refused).toEqual({ state: 'failed', reason: 'The output video may contain sensitive information. (OutputVideoSensitiveContentDetected)' });
    expect(SEEDANCE.contentRefusal.test((refused as { reason: string }).reason)).toBe(true);
    expect(seedanceStatus(task('failed', { error: { code: 'InternalServiceError' } }))).toEqual({ state: 'failed', reason: 'InternalServiceError' });
    expect(seedanceStatus(task('failed'))).toEqual({ state: 'failed', reason: 'no reason given' });
  });

  it('a status it does not document, or a malformed field, is named', async () => {
    const err = await thrown(() => seedanceStatus(task('paused')));
    expect([err instanceof UnusableAnswer, err.message]).toEqual([true, expect.stringMatching(/the poll without a usable status/)]);
    expect((await thrown(() => seedanceStatus(task('succeeded', { content: { video_url: ['x'] } })))).message).toMatch(/content\.video_url/);
  });
});

describe('Seedance: the adapter over HTTP', () => {
  const vendor = new SeedanceVideoVendor(realClient());

  it('reads its protocol and poll floor from its descriptor', () => {
    expect([vendor.protocol, vendor.minPollS, vendor.callsBack]).toEqual([SEEDANCE.protocol, SEEDANCE.pollFloorS, true]);
  });

  it('creates (the gateway’s own frame as a data: URI), asks, cancels; a create without an id is named', async () => {
    let created: unknown = { id: 'cgt-1' };
    const up = await canned((method) => (method === 'POST' ? { body: created } : method === 'GET' ? { body: task('running') } : { body: {} }));
    try {
      const request = ask({ firstFrame: { type: 'image', url: 'https://gw/own.png', hosted: true }, referenceImages: [] });
      expect(await vendor.create(up.account, createOf(model(SEEDANCE_MODELS, 'seedance-1-0-pro-250528'), request))).toEqual({ upstreamId: 'cgt-1', status: { state: 'working' } });
      expect((up.sent[0].body as { content: unknown[] }).content[1]).toEqual({ type: 'image_url', image_url: { url: `data:image/png;base64,${FRAME.toString('base64')}` }, role: 'first_frame' });
      expect(await vendor.query(up.account, 'cgt-1', true)).toEqual({ state: 'working' });
      await vendor.cancel(up.account, 'cgt-1');
      expect(up.sent.map((s) => `${s.method} ${s.path}`)).toEqual(['POST /contents/generations/tasks', 'GET /contents/generations/tasks/cgt-1', 'DELETE /contents/generations/tasks/cgt-1']);
      created = {};
      expect((await thrown(vendor.create(up.account, createOf(model(SEEDANCE_MODELS, 'dreamina-seedance-2-0-260128'), ask({ referenceImages: [{ type: 'image', url: 'https://img/r.png' }] }))))).message).toMatch(/the create request without a usable id/);
    } finally {
      await up.close();
    }
  });
});
