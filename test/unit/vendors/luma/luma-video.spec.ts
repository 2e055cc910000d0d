import { UpstreamBusy } from '../../../../src/infra/relay/upstream-client.js';
import { UnusableAnswer } from '../../../../src/vendors/contracts/vendor.js';
import { LUMA } from '../../../../src/vendors/luma/luma.vendor.js';
import { LUMA_MODELS, lumaBody, lumaCreated, LumaVendor, lumaStatus } from '../../../../src/vendors/luma/luma-video.vendor.js';
import { ask, canned, createOf, model, realClient, thrown } from '../adapter-kit.js';

// The lumaai SDK's Generation (id, state queued | dreaming | completed | failed, failure_reason, assets {video, image}, request)
const generation = (state: string, over: Record<string, unknown> = {}) => ({
  id: 'd1968551-6113-4b46-b567-09210c2e79b0',
  generation_type: 'video',
  state,
  failure_reason: null,
  created_at: '2024-11-20T19:12:00.000Z',
  assets: null,
  model: 'ray-2',
  request: { prompt: 'A tiger walking in snow' },
  ...over,
});

describe('Luma: the request mapping', () => {
  const ray2 = model(LUMA_MODELS, 'ray-2');

  it('a prompt alone: its ratio 16:9 unless asked, loop, the model', () => {
    expect(lumaBody(ray2, ask(), {})).toEqual({ prompt: 'A red fox running through snow', aspect_ratio: '16:9', loop: false, model: 'ray-2' });
  });

  it("a stated default (a declared model's) is sent when nothing is asked: what the task is priced at", () => {
    const declared = { ...ray2, id: 'ray-3', durations: [5, 10], defaultDurationS: 5, defaultResolution: '720p' };
    expect(lumaBody(declared, ask(), {})).toEqual({ prompt: 'A red fox running through snow', aspect_ratio: '16:9', loop: false, model: 'ray-3', resolution: '720p', duration: '5s' });
    expect(lumaBody(declared, ask({ durationS: 10, resolution: '1080p' }), {})).toEqual(expect.objectContaining({ resolution: '1080p', duration: '10s' }));
  });

  it('every asked field: resolution, duration as "9s", concepts by key, keyframes by URL and by generation, the callback', () => {
    const request = ask({ aspectRatio: '9:16', loop: true, resolution: '1080p', durationS: 9, concepts: ['dolly_zoom'], firstFrame: { type: 'image', url: 'https://img/a.jpg' }, lastFrame: { type: 'generation', generationId: 'ours' } });
    expect(lumaBody(ray2, request, { last: 'luma-gen-1' }, 'https://gw/cb')).toEqual({
      prompt: 'A red fox running through snow',
      aspect_ratio: '9:16',
      loop: true,
      model: 'ray-2',
      resolution: '1080p',
      duration: '9s',
      concepts: [{ key: 'dolly_zoom' }],
      keyframes: { frame0: { type: 'image', url: 'https://img/a.jpg' }, frame1: { type: 'generation', id: 'luma-gen-1' } },
      callback_url: 'https://gw/cb',
    });
  });

  it('a last frame alone is frame1 only', () => {
    expect(lumaBody(ray2, ask({ lastFrame: { type: 'image', url: 'https://img/z.jpg' } }), {}).keyframes).toEqual({ frame1: { type: 'image', url: 'https://img/z.jpg' } });
  });
});

describe('Luma: the answer reading', () => {
  it('completed: its video and thumbnail', () => {
    expect(lumaStatus(generation('completed', { assets: { video: 'https://cdn/v.mp4', image: 'https://cdn/t.jpg' } }))).toEqual({ state: 'succeeded', videoUrl: 'https://cdn/v.mp4', thumbnailUrl: 'https://cdn/t.jpg' });
    expect(lumaStatus(generation('completed', { assets: { video: 'https://cdn/v.mp4' } }))).toEqual({ state: 'succeeded', videoUrl: 'https://cdn/v.mp4' });
  });

  it('queued, dreaming (and a gateway door’s pending, processing) are work in progress', () => {
    for (const state of ['queued', 'dreaming', 'pending', 'processing']) expect(lumaStatus(generation(state))).toEqual({ state: 'working' });
  });

  it('failed: its failure_reason (a moderation refusal), or "no reason given"; completed without a video fails in its words', () => {
    expect(lumaStatus(generation('failed', { failure_reason: 'Prompt not allowed because of moderation' }))).toEqual({ state: 'failed', reason: 'Prompt not allowed because of moderation' });
    expect(LUMA.contentRefusal.test('Prompt not allowed because of moderation')).toBe(true);
    expect(lumaStatus(generation('failed'))).toEqual({ state: 'failed', reason: 'no reason given' });
    expect(lumaStatus(generation('completed'))).toEqual({ state: 'failed', reason: 'the upstream completed without a video' });
  });

  it('a create answers its id; without one, or a malformed field, the field is named', async () => {
    expect(lumaCreated(generation('queued'))).toEqual({ upstreamId: 'd1968551-6113-4b46-b567-09210c2e79b0', status: { state: 'working' } });
    const err = await thrown(() => lumaCreated({ state: 'queued' }));
    expect([err instanceof UnusableAnswer, err.message]).toEqual([true, expect.stringMatching(/the create request without a usable id/)]);
    expect((await thrown(() => lumaStatus(generation('completed', { assets: { video: 5 } })))).message).toMatch(/assets\.video/);
  });
});

describe('Luma: the adapter over HTTP', () => {
  const vendor = new LumaVendor(realClient());

  it('reads its protocol and poll floor from its descriptor', () => {
    expect([vendor.protocol, vendor.minPollS, vendor.callsBack]).toEqual([LUMA.protocol, LUMA.pollFloorS, true]);
  });

  it('POST /generations, GET /generations/{id}; a 429 is busy', async () => {
    let busy = false;
    const up = await canned((method) => (busy ? { status: 429, body: { detail: 'Too many concurrent generations' } } : method === 'POST' ? { status: 201, body: generation('queued') } : { body: generation('dreaming') }));
    try {
      expect(await vendor.create(up.account, createOf(model(LUMA_MODELS, 'ray-flash-2'), ask()))).toEqual({ upstreamId: generation('queued').id, status: { state: 'working' } });
      expect(await vendor.query(up.account, 'a b', true)).toEqual({ state: 'working' });
      expect(up.sent.map((s) => `${s.method} ${s.path}`)).toEqual(['POST /generations', 'GET /generations/a%20b']);
      expect(up.sent[0].headers.authorization).toBe('Bearer test-key');
      busy = true;
      expect(await thrown(vendor.create(up.account, createOf(model(LUMA_MODELS, 'ray-2'), ask())))).toBeInstanceOf(UpstreamBusy);
    } finally {
      await up.close();
    }
  });
});
