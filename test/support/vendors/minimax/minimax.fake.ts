import type { ServerResponse } from 'node:http';
import type { FakeVideoVendor } from '../video-fake.js';
import { sendBytes, sendJson, startServer } from '../../http-server.js';
import { sizedMp4 as clip } from '../../media.js';

/** What each MiniMax model makes, from its video generation pages: durations per resolution, and its frames. */
const MINIMAX_MODELS: Record<string, { at: Record<string, number[]>; text: boolean; image: boolean; last: boolean; defaultResolution: string }> = {
  'MiniMax-Hailuo-2.3': { at: { '768P': [6, 10], '1080P': [6] }, text: true, image: true, last: false, defaultResolution: '768P' },
  'MiniMax-Hailuo-2.3-Fast': { at: { '768P': [6, 10], '1080P': [6] }, text: false, image: true, last: false, defaultResolution: '768P' },
  'MiniMax-Hailuo-02': { at: { '512P': [6, 10], '768P': [6, 10], '1080P': [6] }, text: true, image: true, last: true, defaultResolution: '768P' },
  'T2V-01': { at: { '720P': [6] }, text: true, image: false, last: false, defaultResolution: '720P' },
  'T2V-01-Director': { at: { '720P': [6] }, text: true, image: false, last: false, defaultResolution: '720P' },
  'I2V-01': { at: { '720P': [6] }, text: false, image: true, last: false, defaultResolution: '720P' },
  'I2V-01-Director': { at: { '720P': [6] }, text: false, image: true, last: false, defaultResolution: '720P' },
};
const MINIMAX_SIZES: Record<string, string> = { '512P': '912x512', '720P': '1280x720', '768P': '1366x768', '1080P': '1920x1080' };

/** MiniMax's fake: its knobs besides the shared ones. */
export interface FakeMinimax extends FakeVideoVendor {
  /** `busy`: creates answered base_resp 1002 (rate limit) before one is taken; `noCredit`: every create answered 1008. */
  minimaxKnobs: { busy: number; noCredit: boolean };
}

/**
 * MiniMax's video API from its documentation (platform.minimax.io): POST /v1/video_generation, GET
 * /v1/query/video_generation?task_id= (Preparing → Processing → Success | Fail, `file_id` on success), GET
 * /v1/files/retrieve?file_id= (`file.download_url`), GET /v1/files/list; a Bearer key; every refusal under
 * HTTP 200 as `base_resp.status_code` (1004 not authorized, 2013 invalid parameters, 1002 rate limit, 1008
 * insufficient balance). Task ids are digit strings, as MiniMax's.
 */
export async function startFakeMinimax(apiKey: string): Promise<FakeMinimax> {
  const created: FakeVideoVendor['created'] = new Map();
  const files = new Map<string, string>();
  const authFailures: string[] = [];
  const knobs: FakeVideoVendor['knobs'] = { pollsUntilDone: 1 };
  const minimaxKnobs: FakeMinimax['minimaxKnobs'] = { busy: 0, noCredit: false };
  const ok = { status_code: 0, status_msg: 'success' };
  const answer = (res: ServerResponse, body: Record<string, unknown>) => sendJson(res, 200, body);
  const refuse = (res: ServerResponse, code: number, message: string) => answer(res, { base_resp: { status_code: code, status_msg: message } });
  const server = await startServer(async (req, res) => {
    const url = new URL(req.url ?? '/', 'http://x');
    const file = /^\/files\/(.+)\.mp4$/.exec(url.pathname);
    if (file && created.has(file[1])) return sendBytes(res, 'video/mp4', clip(created.get(file[1])!.size, created.get(file[1])!.seconds));
    if (req.headers.authorization !== `Bearer ${apiKey}`) {
      authFailures.push(String(req.headers.authorization ?? ''));
      return refuse(res, 1004, 'login fail: Please carry the API secret key in the Authorization field of the request header');
    }
    if (req.method === 'GET' && url.pathname === '/v1/files/list') return answer(res, { files: [], base_resp: ok });
    if (req.method === 'GET' && url.pathname === '/v1/query/video_generation') {
      const id = url.searchParams.get('task_id') ?? '';
      const task = created.get(id);
      if (!task) return refuse(res, 2013, 'invalid params, task_id not found');
      task.polls++;
      if (task.polls < knobs.pollsUntilDone) return answer(res, { task_id: id, status: task.polls === 0 ? 'Preparing' : 'Processing', file_id: '', base_resp: ok });
      if (knobs.failWith) return answer(res, { task_id: id, status: 'Fail', file_id: '', base_resp: { status_code: knobs.failCode ? Number(knobs.failCode) : 1000, status_msg: knobs.failWith } });
      const [width, height] = task.size.split('x').map(Number);
      files.set(`${id}0`, id);
      return answer(res, { task_id: id, status: 'Success', file_id: `${id}0`, video_width: width, video_height: height, base_resp: ok });
    }
    if (req.method === 'GET' && url.pathname === '/v1/files/retrieve') {
      const fileId = url.searchParams.get('file_id') ?? '';
      const id = files.get(fileId);
      if (!id) return refuse(res, 2013, 'invalid params, file not found');
      return answer(res, { file: { file_id: Number(fileId), bytes: 0, created_at: Math.floor(Date.now() / 1000), filename: 'output_aigc.mp4', purpose: 'video_generation', download_url: `${server.url}/files/${id}.mp4` }, base_resp: ok });
    }
    if (req.method !== 'POST' || url.pathname !== '/v1/video_generation') return sendJson(res, 404, { base_resp: { status_code: 404, status_msg: 'not found' } });
    fake.createRequests = (fake.createRequests ?? 0) + 1;
    if (minimaxKnobs.noCredit) return refuse(res, 1008, 'insufficient balance');
    if (minimaxKnobs.busy > 0) {
      minimaxKnobs.busy--;
      return refuse(res, 1002, 'rate limit exceeded(RPM)');
    }
    const body = JSON.parse(req.body.toString()) as Record<string, unknown>;
    const model = MINIMAX_MODELS[String(body.model)];
    if (!model) return refuse(res, 2013, `invalid params, model ${String(body.model)} is not supported`);
    if (typeof body.prompt === 'string' && [...body.prompt].length > 2000) return refuse(res, 2013, 'invalid params, prompt is too long');
    const image = body.first_frame_image;
    if (!image && !model.text) return refuse(res, 2013, 'invalid params, first_frame_image is required');
    if (image && !model.image) return refuse(res, 2013, 'invalid params, first_frame_image is not supported by this model');
    if (body.last_frame_image !== undefined && !model.last) return refuse(res, 2013, 'invalid params, last_frame_image is not supported by this model');
    for (const field of ['first_frame_image', 'last_frame_image']) {
      const value = body[field];
      if (value !== undefined && (typeof value !== 'string' || !/^(https?:\/\/|data:image\/)/.test(value))) return refuse(res, 2013, `invalid params, ${field} must be a URL or a data URI`);
    }
    const resolution = body.resolution === undefined ? model.defaultResolution : String(body.resolution);
    const durations = model.at[resolution];
    if (!durations) return refuse(res, 2013, `invalid params, resolution ${resolution} is not supported by this model`);
    if (resolution === '512P' && !image) return refuse(res, 2013, 'invalid params, 512P is for image to video');
    const seconds = body.duration === undefined ? 6 : body.duration;
    if (typeof seconds !== 'number' || !durations.includes(seconds)) return refuse(res, 2013, `invalid params, duration ${String(seconds)} is not supported at ${resolution}`);
    const taskId = String(106_916_112_212_032 + created.size);
    created.set(taskId, { path: 'video_generation', body, polls: 0, size: MINIMAX_SIZES[resolution], seconds });
    return answer(res, { task_id: taskId, base_resp: ok });
  });
  const fake: FakeMinimax = { server, url: server.url, created, knobs, minimaxKnobs, authFailures, close: () => server.close() };
  return fake;
}
