import { UpstreamBusy, UpstreamUnavailable } from '../../../../src/infra/relay/upstream-client.js';
import { MINIMAX } from '../../../../src/vendors/minimax/minimax.vendor.js';
import { minimaxChecked } from '../../../../src/vendors/minimax/minimax-answer.js';
import { MINIMAX_VIDEO_MODELS, minimaxBody, minimaxCreated, minimaxFileStatus, minimaxQueried, MinimaxVideoVendor } from '../../../../src/vendors/minimax/minimax-video.vendor.js';
import { ask, canned, createOf, model, realClient, thrown } from '../adapter-kit.js';

// MiniMax's video API reference (platform.minimax.io, "Video Generation"): every answer carries base_resp {status_code, status_msg}
const OK = { status_code: 0, status_msg: 'success' };

describe('MiniMax: the request mapping', () => {
  it('model, prompt, and only what was asked: duration, resolution in capitals, frames by URL', () => {
    const hailuo = model(MINIMAX_VIDEO_MODELS, 'MiniMax-Hailuo-02');
    expect(minimaxBody(hailuo, ask())).toEqual({ model: 'MiniMax-Hailuo-02', prompt: 'A red fox running through snow' });
    const request = ask({ durationS: 6, resolution: '1080p', firstFrame: { type: 'image', url: 'https://img/a.png' }, lastFrame: { type: 'image', url: 'https://img/b.png' } });
    expect(minimaxBody(hailuo, request)).toEqual({ model: 'MiniMax-Hailuo-02', prompt: 'A red fox running through snow', duration: 6, resolution: '1080P', first_frame_image: 'https://img/a.png', last_frame_image: 'https://img/b.png' });
  });

  it("a stated default (a declared model's) is sent when nothing is asked; a duration the resolution does not make gives way to the first it does", () => {
    const hailuo = model(MINIMAX_VIDEO_MODELS, 'MiniMax-Hailuo-02');
    const declared = { ...hailuo, id: 'MiniMax-Hailuo-03', durations: [6, 10], defaultDurationS: 10, defaultResolution: '768p', durationsAt: { '1080p': [6] } };
    expect(minimaxBody(declared, ask())).toEqual({ model: 'MiniMax-Hailuo-03', prompt: 'A red fox running through snow', duration: 10, resolution: '768P' });
    expect(minimaxBody(declared, ask({ resolution: '1080p' }))).toEqual({ model: 'MiniMax-Hailuo-03', prompt: 'A red fox running through snow', duration: 6, resolution: '1080P' });
  });
});

describe('MiniMax: the answer reading', () => {
  it('a create answers its task_id; without one the field is named', async () => {
    expect(minimaxCreated({ task_id: '106916112212032', base_resp: OK })).toBe('106916112212032');
    expect((await thrown(() => minimaxCreated({ base_resp: OK }))).message).toMatch(/the create request without a usable task_id/);
  });

  it('Preparing, Queueing, Processing are work in progress; Success gives its file_id (a string, or an older number)', () => {
    for (const status of ['Preparing', 'Queueing', 'Processing']) expect(minimaxQueried({ task_id: 't', status, base_resp: OK })).toEqual({ state: 'working' });
    expect(minimaxQueried({ task_id: 't', status: 'Success', file_id: '205258526306433', video_width: 1920, video_height: 1080, base_resp: OK })).toEqual({ fileId: '205258526306433' });
    expect(minimaxQueried({ task_id: 't', status: 'success', file_id: 205258526306433, base_resp: OK })).toEqual({ fileId: '205258526306433' });
    expect(minimaxQueried({ task_id: 't', status: 'Success', base_resp: OK })).toEqual({ state: 'failed', reason: 'the upstream succeeded without a file_id' });
  });

  it('Fail: its words with its code (1027: the output judged sensitive, a content refusal)', () => {
    expect(minimaxQueried({ task_id: 't', status: 'Fail', base_resp: { status_code: 1027, status_msg: 'output new_sensitive' } })).toEqual({ state: 'failed', reason: 'output new_sensitive (code 1027)' });
    expect(MINIMAX.contentRefusal.test('output new_sensitive (code 1027)')).toBe(true);
    expect(minimaxQueried({ task_id: 't', status: 'Fail', base_resp: OK })).toEqual({ state: 'failed', reason: 'no reason given' });
  });

  it('the file’s download_url is the video', () => {
    expect(minimaxFileStatus({ file: { file_id: 205258526306433, bytes: 5896337, filename: 'output.mp4', download_url: 'https://cdn/output.mp4' }, base_resp: OK })).toEqual({ state: 'succeeded', videoUrl: 'https://cdn/output.mp4' });
    expect(minimaxFileStatus({ file: {}, base_resp: OK })).toEqual({ state: 'failed', reason: 'the upstream succeeded without a download_url' });
  });

  it('base_resp codes: busy, the credentials, the account, may have acted, a content refusal; a malformed one named', async () => {
    const code = (status_code: number, status_msg = 'words') => ({ base_resp: { status_code, status_msg } });
    expect(await thrown(() => minimaxChecked(code(1002, 'rate limit'), true))).toBeInstanceOf(UpstreamBusy);
    expect(await thrown(() => minimaxChecked(code(2049, 'invalid api key'), true))).toMatchObject({ kind: 'auth', status: 401 });
    expect(await thrown(() => minimaxChecked(code(1008, 'insufficient balance'), true))).toMatchObject({ kind: 'account' });
    const acted = await thrown(() => minimaxChecked(code(1000), true));
    expect([acted instanceof UpstreamUnavailable, (acted as UpstreamUnavailable).ambiguous]).toEqual([true, true]);
    expect(await thrown(() => minimaxChecked(code(1026, 'input new_sensitive'), true))).toMatchObject({ kind: 'request', message: 'content refused: input new_sensitive (code 1026)' });
    expect(await thrown(() => minimaxChecked(code(2013, ''), true))).toMatchObject({ message: 'error (code 2013)' });
    expect(minimaxChecked({ task_id: 'x' }, false)).toEqual({ task_id: 'x' });
    expect((await thrown(() => minimaxChecked({ base_resp: { status_code: '1002' } }, false))).message).toMatch(/base_resp\.status_code/);
  });
});

describe('MiniMax: the adapter over HTTP', () => {
  const vendor = new MinimaxVideoVendor(realClient());

  it('reads its protocol and poll floor from its descriptor', () => {
    expect([vendor.protocol, vendor.minPollS]).toEqual([MINIMAX.protocol, MINIMAX.pollFloorS]);
  });

  it('creates, queries, then retrieves the file for its link', async () => {
    let status = 'Processing';
    const up = await canned((method, path) =>
      method === 'POST'
        ? { body: { task_id: 'mm-1', base_resp: OK } }
        : path.startsWith('/v1/query/video_generation')
          ? { body: { task_id: 'mm-1', status, file_id: 'f-1', base_resp: OK } }
          : path.startsWith('/v1/files/retrieve')
            ? { body: { file: { download_url: 'https://cdn/mm.mp4' }, base_resp: OK } }
            : undefined,
    );
    try {
      expect(await vendor.create(up.account, createOf(model(MINIMAX_VIDEO_MODELS, 'MiniMax-Hailuo-2.3'), ask({ durationS: 10 })))).toEqual({ upstreamId: 'mm-1', status: { state: 'working' } });
      expect(await vendor.query(up.account, 'mm-1', true)).toEqual({ state: 'working' });
      status = 'Success';
      expect(await vendor.query(up.account, 'mm-1', true)).toEqual({ state: 'succeeded', videoUrl: 'https://cdn/mm.mp4' });
      expect(up.sent.map((s) => `${s.method} ${s.path}`)).toEqual(['POST /v1/video_generation', 'GET /v1/query/video_generation?task_id=mm-1', 'GET /v1/query/video_generation?task_id=mm-1', 'GET /v1/files/retrieve?file_id=f-1']);
    } finally {
      await up.close();
    }
  });
});
