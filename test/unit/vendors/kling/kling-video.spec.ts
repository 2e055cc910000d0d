import { UpstreamBusy, UpstreamRefused, UpstreamUnavailable } from '../../../../src/infra/relay/upstream-client.js';
import { UnusableAnswer } from '../../../../src/vendors/contracts/vendor.js';
import { KLING } from '../../../../src/vendors/kling/kling.vendor.js';
import { KLING_VIDEO_MODELS, KlingVideoVendor, klingVideoBody, klingVideoEndpoint, klingVideoStatus, splitKlingVideoId } from '../../../../src/vendors/kling/kling-video.vendor.js';
import { ask, canned, createOf, FRAME, model, realClient, thrown } from '../adapter-kit.js';

// Kling's API reference (video: text2video, image2video, multi-image2video; the query and the callback carry the
// same task object): its envelope {code, message, request_id, data}, task_status submitted | processing | succeed | failed.
const envelope = (data: unknown, code = 0, message = 'SUCCEED') => ({ code, message, request_id: 'CjhkYmYyNDk5YS0', data });
const SUCCEEDED = {
  task_id: 'CjMzNjY5NDQ3LTA',
  task_status: 'succeed',
  task_status_msg: '',
  task_info: { external_task_id: 'task-0001' },
  created_at: 1722769557708,
  updated_at: 1722769617708,
  task_result: { videos: [{ id: 'v-1', url: 'https://p1.a.kwimgs.com/bs2/upload-ylab-stunt/video.mp4', duration: '5' }] },
  final_unit_deduction: '1',
};

describe('Kling video: the request mapping', () => {
  const v1 = model(KLING_VIDEO_MODELS, 'kling-v1');
  const v16 = model(KLING_VIDEO_MODELS, 'kling-v1-6');
  const master = model(KLING_VIDEO_MODELS, 'kling-v2-master');
  const v26 = model(KLING_VIDEO_MODELS, 'kling-v2-6');
  const none = { references: [] };

  it('a prompt alone goes to text2video with its model, and nothing it was not asked', () => {
    expect(klingVideoEndpoint(ask())).toBe('text2video');
    expect(klingVideoBody(v1, ask(), none)).toEqual({ model_name: 'kling-v1', prompt: 'A red fox running through snow' });
  });

  it("a stated default (a declared model's) is sent when nothing is asked: what the task is priced at", () => {
    const declared = { ...v16, id: 'kling-v3', durations: [3, 5, 10, 15], defaultDurationS: 5, defaultResolution: '1080p' };
    expect(klingVideoBody(declared, ask(), none)).toEqual({ model_name: 'kling-v3', prompt: 'A red fox running through snow', mode: 'pro', duration: '5' });
    expect(klingVideoBody(declared, ask({ durationS: 15, resolution: '720p' }), none)).toEqual({ model_name: 'kling-v3', prompt: 'A red fox running through snow', mode: 'std', duration: '15' });
  });

  it('every asked field in its names: mode from the resolution, duration as a string, aspect ratio, cfg_scale, camera_control, callback', () => {
    const camera = { type: 'simple', config: { horizontal: 0, vertical: 0, pan: 0, tilt: 0, roll: 0, zoom: 5 } };
    const request = ask({ negativePrompt: 'blur', resolution: '1080p', durationS: 10, aspectRatio: '9:16', cfgScale: 0.5, cameraControl: camera });
    expect(klingVideoBody(v1, request, none, 'https://gw/cb')).toEqual({
      model_name: 'kling-v1',
      prompt: 'A red fox running through snow',
      negative_prompt: 'blur',
      mode: 'pro',
      duration: '10',
      aspect_ratio: '9:16',
      cfg_scale: 0.5,
      camera_control: camera,
      callback_url: 'https://gw/cb',
    });
    expect(klingVideoBody(v1, ask({ resolution: '720p' }), none).mode).toBe('std');
  });

  it('a resolution it has no mode for (a declared 4k) is refused, never sent as std', async () => {
    const declared = { ...v16, id: 'kling-v3', resolutions: ['720p', '1080p', '4k'] };
    expect((await thrown(() => klingVideoBody(declared, ask({ resolution: '4k' }), none))).message).toBe('Kling makes no video at 4k (its modes make 720p and 1080p)');
  });

  it('a model of one mode is sent none', () => {
    expect(klingVideoBody(master, ask({ resolution: '720p' }), none)).not.toHaveProperty('mode');
  });

  it('a first frame goes to image2video as `image`, without aspect_ratio (the frame is the shape); a last frame as image_tail in pro', () => {
    const request = ask({ firstFrame: { type: 'image', url: 'https://img/a.png' }, lastFrame: { type: 'image', url: 'https://img/b.png' }, aspectRatio: '16:9' });
    expect(klingVideoEndpoint(request)).toBe('image2video');
    expect(klingVideoBody(model(KLING_VIDEO_MODELS, 'kling-v1-5'), request, { first: 'https://img/a.png', last: 'https://img/b.png', references: [] })).toEqual({
      model_name: 'kling-v1-5',
      prompt: 'A red fox running through snow',
      mode: 'pro',
      image: 'https://img/a.png',
      image_tail: 'https://img/b.png',
    });
  });

  it('reference images go to multi-image2video as image_list, with the asked ratio', () => {
    const request = ask({ referenceImages: [{ type: 'image', url: 'https://img/1.png' }, { type: 'image', url: 'https://img/2.png' }], aspectRatio: '1:1' });
    expect(klingVideoEndpoint(request)).toBe('multi-image2video');
    expect(klingVideoBody(v16, request, { references: ['https://img/1.png', 'https://img/2.png'] })).toEqual({
      model_name: 'kling-v1-6',
      prompt: 'A red fox running through snow',
      aspect_ratio: '1:1',
      image_list: [{ image: 'https://img/1.png' }, { image: 'https://img/2.png' }],
    });
  });

  it('sound on or off on a model that makes it, never on one that does not', () => {
    expect(klingVideoBody(v26, ask({ audio: true }), none).sound).toBe('on');
    expect(klingVideoBody(v26, ask({ audio: false }), none).sound).toBe('off');
    expect(klingVideoBody(v1, ask({ audio: true }), none)).not.toHaveProperty('sound');
  });

  it('an upstream id keeps its endpoint; a bare one (kept before) is text2video', () => {
    expect(splitKlingVideoId('image2video/123')).toEqual(['image2video', '123']);
    expect(splitKlingVideoId('multi-image2video/9/8')).toEqual(['multi-image2video', '9/8']);
    expect(splitKlingVideoId('123')).toEqual(['text2video', '123']);
    expect(splitKlingVideoId('other/123')).toEqual(['text2video', 'other/123']);
  });
});

describe('Kling video: the answer reading', () => {
  it('succeed: the first video, and the units it deducted', () => {
    expect(klingVideoStatus(SUCCEEDED)).toEqual({ state: 'succeeded', videoUrl: SUCCEEDED.task_result.videos[0].url, billed: { amount: 1, unit: 'units' } });
  });

  it('submitted and processing are work in progress', () => {
    expect(klingVideoStatus({ task_id: 'x', task_status: 'submitted' })).toEqual({ state: 'working' });
    expect(klingVideoStatus({ task_id: 'x', task_status: 'processing', task_result: null })).toEqual({ state: 'working' });
  });

  it('failed: its words (its risk control, a content refusal), or "no reason given"', () => {
    expect(klingVideoStatus({ task_status: 'failed', task_status_msg: 'Failure to pass the risk control system' })).toEqual({ state: 'failed', reason: 'Failure to pass the risk control system' });
    expect(klingVideoStatus({ task_status: 'failed', task_status_msg: '' })).toEqual({ state: 'failed', reason: 'no reason given' });
    expect(KLING.contentRefusal.test('Failure to pass the risk control system')).toBe(true);
  });

  it('succeed without a video is a failure in its words', () => {
    expect(klingVideoStatus({ task_status: 'succeed', task_result: { videos: [] }, final_unit_deduction: '0' })).toEqual({ state: 'failed', reason: 'the upstream succeeded without a video', billed: { amount: 0, unit: 'units' } });
  });

  it('a malformed task names the field', async () => {
    expect((await thrown(() => klingVideoStatus({ task_status: 'succeed', task_result: { videos: [{ url: 42 }] } }))).message).toMatch(/task_result\.videos\[0\]\.url/);
    expect(await thrown(() => klingVideoStatus({ task_status: 3 }))).toBeInstanceOf(UnusableAnswer);
    expect((await thrown(() => klingVideoStatus({ task_status: 'failed', task_status_msg: 7 }))).message).toMatch(/task_status_msg/);
  });
});

describe('Kling video: the adapter over HTTP', () => {
  const client = realClient();
  const vendor = new KlingVideoVendor(client);

  it('reads its protocol and poll floor from its descriptor', () => {
    expect([vendor.protocol, KlingVideoVendor.protocol, vendor.minPollS, vendor.callsBack]).toEqual([KLING.protocol, 'kling', KLING.pollFloorS, true]);
  });

  it('creates on the endpoint of the request with our id as external_task_id, and asks about the task there', async () => {
    const up = await canned((method, path) =>
      method === 'POST' ? { body: envelope({ task_id: 'CjMz', task_status: 'submitted' }) } : path === '/v1/videos/image2video/CjMz' ? { body: envelope(SUCCEEDED) } : undefined,
    );
    try {
      const request = ask({ firstFrame: { type: 'image', url: 'https://gw/own.png', hosted: true } });
      const created = await vendor.create(up.account, createOf(model(KLING_VIDEO_MODELS, 'kling-v2-1'), request, { callbackUrl: 'https://gw/cb' }));
      expect(created).toEqual({ upstreamId: 'image2video/CjMz', status: { state: 'working' } });
      // the gateway's own copy goes as raw Base64 (Kling calls a data: prefix incorrect)
      expect(up.sent[0]).toMatchObject({ method: 'POST', path: '/v1/videos/image2video', body: { model_name: 'kling-v2-1', image: FRAME.toString('base64'), callback_url: 'https://gw/cb', external_task_id: 'task-0001' } });
      expect(await vendor.query(up.account, 'image2video/CjMz', true)).toMatchObject({ state: 'succeeded' });
    } finally {
      await up.close();
    }
  });

  it('a create refused because our id exists already finds the task by it; one not found is refused as Kling said', async () => {
    let known = true;
    const up = await canned((method, path) =>
      method === 'POST' ? { status: 400, body: envelope(null, 1201, 'external_task_id already exists') } : known && path === '/v1/videos/text2video/task-0001' ? { body: envelope({ ...SUCCEEDED, task_id: 'earlier' }) } : { status: 404, body: envelope(null, 1203, 'not found') },
    );
    try {
      const create = createOf(model(KLING_VIDEO_MODELS, 'kling-v1'), ask());
      expect(await vendor.create(up.account, create)).toMatchObject({ upstreamId: 'text2video/earlier', status: { state: 'succeeded' } });
      known = false;
      const err = await thrown(vendor.create(up.account, create));
      expect(err).toBeInstanceOf(UpstreamRefused);
      expect(err.message).toBe('external_task_id already exists');
      expect(await vendor.findByOwnId(up.account, 'task-0001', ask())).toBeNull();
    } finally {
      await up.close();
    }
  });

  it('its codes under HTTP 200: busy (1303), may have acted (5000), the account (1102), a create without a task_id named', async () => {
    let answer: unknown = envelope(null, 1303, 'Parallel task over resource pack limit');
    const up = await canned(() => ({ body: answer }));
    try {
      const create = createOf(model(KLING_VIDEO_MODELS, 'kling-v1'), ask());
      expect(await thrown(vendor.create(up.account, create))).toBeInstanceOf(UpstreamBusy);
      answer = envelope(null, 5000, 'Server internal error');
      const failed = await thrown(vendor.query(up.account, 'text2video/x', true));
      expect([failed instanceof UpstreamUnavailable, (failed as UpstreamUnavailable).ambiguous]).toEqual([true, true]);
      answer = envelope(null, 1102, 'Account exception: resource pack exhausted');
      expect(await thrown(vendor.query(up.account, 'x', true))).toMatchObject({ kind: 'account' });
      answer = envelope({ task_status: 'submitted' });
      const unusable = await thrown(vendor.create(up.account, create));
      expect([unusable instanceof UnusableAnswer, unusable.message]).toEqual([true, expect.stringMatching(/the create request without a usable task_id/)]);
      answer = envelope(null);
      expect((await thrown(vendor.query(up.account, 'x', true))).message).toMatch(/without data/);
    } finally {
      await up.close();
    }
  });
});
