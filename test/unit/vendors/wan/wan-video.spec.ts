import { UpstreamRefused } from '../../../../src/infra/relay/upstream-client.js';
import { UnusableAnswer } from '../../../../src/vendors/contracts/vendor.js';
import { dashscopeRefusal, WAN } from '../../../../src/vendors/wan/wan.vendor.js';
import { WAN_MODELS, wanBody, wanCreated, wanSize, wanStatus, wanTier, WanVideoVendor } from '../../../../src/vendors/wan/wan-video.vendor.js';
import { ask, canned, createOf, model, realClient, thrown } from '../adapter-kit.js';

// Model Studio's "Wan - text-to-video API reference" and "image-to-video (first frame)": the create answers
// {output: {task_id, task_status}, request_id}; GET /tasks/{task_id} answers {request_id, output, usage}
const task = (output: Record<string, unknown>, usage?: Record<string, unknown>) => ({ request_id: 'caa62a12-8841-41a6-8af2-xxxxxx', output: { task_id: '0385dc79-5ff8-4d82-bcb6-xxxxxx', submit_time: '2025-09-25 11:07:28.590', ...output }, ...(usage ? { usage } : {}) });

describe('Wan: the request mapping', () => {
  const t2v = model(WAN_MODELS, 'wan2.6-t2v');
  const i2v = model(WAN_MODELS, 'wan2.5-i2v-preview');
  const plus = model(WAN_MODELS, 'wan2.2-t2v-plus');

  it("a prompt alone: input.prompt, DashScope's defaults as stated (1920*1080; 2.6's 5 s), no watermark; sound off on a model that makes it", () => {
    expect(wanBody(t2v, ask())).toEqual({ model: 'wan2.6-t2v', input: { prompt: 'A red fox running through snow' }, parameters: { size: '1920*1080', duration: 5, audio: false, watermark: false } });
    expect(wanBody(plus, ask())).toEqual({ model: 'wan2.2-t2v-plus', input: { prompt: 'A red fox running through snow' }, parameters: { size: '1920*1080', watermark: false } });
    expect(wanBody(i2v, ask({ firstFrame: { type: 'image', url: 'https://img/a.png' } })).parameters).toEqual({ resolution: '1080P', audio: false, watermark: false });
  });

  it('480p for a model a channel declares with it: its sizes and tier', () => {
    const declared = { ...t2v, id: 'wan2.5-t2v-preview', resolutions: ['480p', '720p', '1080p'], defaultResolution: '480p' };
    expect(wanBody(declared, ask({ aspectRatio: '9:16' })).parameters).toEqual(expect.objectContaining({ size: '480*832' }));
    expect(wanBody(declared, ask()).parameters).toEqual(expect.objectContaining({ size: '832*480' }));
    expect(wanTier('480p')).toEqual({ resolution: '480P' });
  });

  it("a declared model's stated defaults are sent when nothing is asked: the size at its resolution, the tier from a frame", () => {
    const declared = { ...t2v, id: 'wan2.7-t2v', durations: [5, 10], defaultDurationS: 10, defaultResolution: '1080p' };
    expect(wanBody(declared, ask()).parameters).toEqual({ size: '1920*1080', duration: 10, audio: false, watermark: false });
    const fromFrame = { ...i2v, id: 'wan2.7-i2v', defaultDurationS: 5, defaultResolution: '720p' };
    expect(wanBody(fromFrame, ask({ firstFrame: { type: 'image', url: 'https://img/a.png' } })).parameters).toEqual(expect.objectContaining({ resolution: '720P', duration: 5 }));
  });

  it('text-to-video: size W*H from its table, duration, seed, negative prompt, audio', () => {
    expect(wanBody(t2v, ask({ aspectRatio: '4:3', resolution: '1080p', durationS: 10, seed: 42, negativePrompt: 'blur', audio: true }))).toEqual({
      model: 'wan2.6-t2v',
      input: { prompt: 'A red fox running through snow', negative_prompt: 'blur' },
      parameters: { size: '1632*1248', duration: 10, seed: 42, audio: true, watermark: false },
    });
  });

  it('the size: 16:9 without a shape, the model’s first tier without one, refused where the table has none', async () => {
    expect(wanSize(t2v, undefined, '720p')).toEqual({ size: '1280*720' });
    expect(wanSize(plus, '9:16', undefined)).toEqual({ size: '1080*1920' });
    expect(wanSize(t2v, undefined, undefined)).toEqual({});
    expect((await thrown(() => wanSize(t2v, '21:9', '720p'))).message).toBe('Wan makes no 21:9 video at 720p');
  });

  it('image-to-video: img_url and a resolution tier (the image is the shape); a generation as a frame refused', async () => {
    expect(wanBody(i2v, ask({ firstFrame: { type: 'image', url: 'https://img/a.png' }, resolution: '1080p', aspectRatio: '16:9' }))).toEqual({
      model: 'wan2.5-i2v-preview',
      input: { prompt: 'A red fox running through snow', img_url: 'https://img/a.png' },
      parameters: { resolution: '1080P', audio: false, watermark: false },
    });
    expect(wanTier(undefined)).toEqual({});
    expect((await thrown(() => wanTier('4k'))).message).toBe('Wan makes no video at 4k');
    expect((await thrown(() => wanBody(i2v, ask({ firstFrame: { type: 'generation', generationId: 'g' } })))).message).toBe('Wan takes a first frame as an image only');
  });
});

describe('Wan: the answer reading', () => {
  it('a create answers output.task_id; without one the field is named, with DashScope’s words', async () => {
    expect(wanCreated(task({ task_status: 'PENDING' }))).toBe('0385dc79-5ff8-4d82-bcb6-xxxxxx');
    const err = await thrown(() => wanCreated({ request_id: 'r', code: 'InvalidParameter', message: 'The size is not supported' }));
    expect([err instanceof UnusableAnswer, err.message]).toEqual([true, expect.stringMatching(/the create request without a usable output.*\(The size is not supported\)$/)]);
    expect((await thrown(() => wanCreated({ output: {} }))).message).toMatch(/output\.task_id/);
  });

  it('SUCCEEDED: its video_url and the seconds billed (duration, else a non-zero video_duration)', () => {
    expect(wanStatus(task({ task_status: 'SUCCEEDED', video_url: 'https://dashscope-result/v.mp4' }, { duration: 10, output_video_duration: 10, video_duration: 0, video_ratio: '1920*1080' }))).toEqual({
      state: 'succeeded',
      videoUrl: 'https://dashscope-result/v.mp4',
      billed: { amount: 10, unit: 'seconds' },
    });
    expect(wanStatus(task({ task_status: 'SUCCEEDED', video_url: 'https://v' }, { video_duration: 5, video_ratio: '1280*720', video_count: 1 }))).toMatchObject({ billed: { amount: 5, unit: 'seconds' } });
    expect(wanStatus(task({ task_status: 'SUCCEEDED', video_url: 'https://v' }, { video_duration: 0 }))).toEqual({ state: 'succeeded', videoUrl: 'https://v' });
    expect(wanStatus(task({ task_status: 'SUCCEEDED' }))).toEqual({ state: 'failed', reason: 'the upstream succeeded without a video_url' });
  });

  it('PENDING and RUNNING work; FAILED with its code (its moderation); CANCELED and UNKNOWN in words', () => {
    expect(wanStatus(task({ task_status: 'PENDING' }))).toEqual({ state: 'working' });
    expect(wanStatus(task({ task_status: 'RUNNING' }))).toEqual({ state: 'working' });
    const refused = wanStatus(task({ task_status: 'FAILED', code: 'DataInspectionFailed', message: 'Output data may contain inappropriate content.' }));
    expect(refused).toEqual({ state: 'failed', reason: 'Output data may contain inappropriate content. (DataInspectionFailed)' });
    expect(WAN.contentRefusal.test((refused as { reason: string }).reason)).toBe(true);
    expect(wanStatus(task({ task_status: 'FAILED', code: 'InternalError.Algo' }))).toEqual({ state: 'failed', reason: 'InternalError.Algo' });
    expect(wanStatus(task({ task_status: 'FAILED' }))).toEqual({ state: 'failed', reason: 'no reason given' });
    expect(wanStatus(task({ task_status: 'CANCELED' }))).toEqual({ state: 'failed', reason: 'the upstream task was canceled' });
    expect(wanStatus(task({ task_status: 'UNKNOWN' }))).toEqual({ state: 'failed', reason: 'the upstream no longer knows the task (expired or not found)' });
  });

  it('a status it does not document is named', async () => {
    expect((await thrown(() => wanStatus(task({ task_status: 'SUSPENDED' })))).message).toMatch(/the poll without a usable output\.task_status/);
  });

  it('its refusals: the account’s codes whatever the status, its moderation kept with the words', () => {
    expect(dashscopeRefusal(400, { code: 'Arrearage', message: 'Access denied, please make sure your account is in good standing.' })).toMatchObject({ kind: 'account', message: expect.stringMatching(/^Arrearage: /) });
    expect(dashscopeRefusal(400, { code: 'DataInspectionFailed', message: 'Input data may contain inappropriate content.' })).toMatchObject({ kind: 'request', message: 'Input data may contain inappropriate content. (DataInspectionFailed)' });
    expect(dashscopeRefusal(400, { code: 'InvalidParameter', message: 'x' })).toBeUndefined();
  });
});

describe('Wan: the adapter over HTTP', () => {
  const vendor = new WanVideoVendor(realClient());

  it('reads its protocol and poll floor from its descriptor', () => {
    expect([vendor.protocol, vendor.minPollS]).toEqual([WAN.protocol, WAN.pollFloorS]);
  });

  it('creates asynchronously (X-DashScope-Async), asks, cancels; an overdue account is the account’s', async () => {
    let overdue = false;
    const up = await canned((method, path) =>
      overdue ? { status: 400, body: { request_id: 'r', code: 'Arrearage', message: 'Access denied' } } : method === 'POST' && path.endsWith('/cancel') ? { body: { request_id: 'r' } } : method === 'POST' ? { body: task({ task_status: 'PENDING' }) } : { body: task({ task_status: 'RUNNING' }) },
    );
    try {
      expect(await vendor.create(up.account, createOf(model(WAN_MODELS, 'wan2.6-t2v'), ask()))).toEqual({ upstreamId: '0385dc79-5ff8-4d82-bcb6-xxxxxx', status: { state: 'working' } });
      expect(up.sent[0].headers['x-dashscope-async']).toBe('enable');
      expect(await vendor.query(up.account, 't-1', true)).toEqual({ state: 'working' });
      await vendor.cancel(up.account, 't-1');
      expect(up.sent.map((s) => `${s.method} ${s.path}`)).toEqual(['POST /services/aigc/video-generation/video-synthesis', 'GET /tasks/t-1', 'POST /tasks/t-1/cancel']);
      overdue = true;
      const err = await thrown(vendor.create(up.account, createOf(model(WAN_MODELS, 'wan2.6-t2v'), ask())));
      expect([err instanceof UpstreamRefused, (err as UpstreamRefused).kind]).toEqual([true, 'account']);
    } finally {
      await up.close();
    }
  });
});
