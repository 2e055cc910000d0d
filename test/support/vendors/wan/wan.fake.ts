import type { ServerResponse } from 'node:http';
import sharp from 'sharp';
import type { FakeVideoVendor } from '../video-fake.js';
import { sendBytes, sendJson, startServer } from '../../http-server.js';
import { sizedMp4 as clip } from '../../media.js';

const range = (from: number, to: number) => Array.from({ length: to - from + 1 }, (_, i) => from + i);
/** Each model's kind (text-to-video takes `size`, image-to-video `img_url` and `resolution`), tiers, durations, sound and prompt length (the API references'). */
const MODELS: Record<string, { kind: 't2v' | 'i2v'; tiers: string[]; durations: number[]; audio: boolean; promptChars: number }> = {
  'wan2.6-t2v': { kind: 't2v', tiers: ['720P', '1080P'], durations: range(2, 15), audio: true, promptChars: 1500 },
  'wan2.5-t2v-preview': { kind: 't2v', tiers: ['480P', '720P', '1080P'], durations: [5, 10], audio: true, promptChars: 2000 },
  'wan2.2-t2v-plus': { kind: 't2v', tiers: ['480P', '1080P'], durations: [5], audio: false, promptChars: 800 },
  'wan2.6-i2v': { kind: 'i2v', tiers: ['720P', '1080P'], durations: range(2, 15), audio: true, promptChars: 1500 },
  'wan2.5-i2v-preview': { kind: 'i2v', tiers: ['480P', '720P', '1080P'], durations: [5, 10], audio: true, promptChars: 2000 },
  'wan2.2-i2v-plus': { kind: 'i2v', tiers: ['480P', '1080P'], durations: [5], audio: false, promptChars: 800 },
};
/** The text-to-video sizes by tier, as the API reference's table gives them (`W*H`). */
const SIZES: Record<string, string[]> = {
  '480P': ['832*480', '480*832', '624*624'],
  '720P': ['1280*720', '720*1280', '960*960', '1088*832', '832*1088'],
  '1080P': ['1920*1080', '1080*1920', '1440*1440', '1632*1248', '1248*1632'],
};
/** The pixels of each image-to-video tier: the video keeps the image's shape at about this many. */
const TIER_AREA: Record<string, number> = { '480P': 832 * 480, '720P': 1280 * 720, '1080P': 1920 * 1080 };

export interface FakeWan extends FakeVideoVendor {
  /** Headers each create came with (`x-dashscope-async` among them). */
  createHeaders: Record<string, string | string[] | undefined>[];
  /** `busy`: the next creates answer 429 Throttling.RateQuota; `arrearage`: 400 Arrearage; `inspection`: tasks fail with DataInspectionFailed (its moderation). */
  wanKnobs: { busy: number; arrearage: boolean; inspection: boolean };
}

/**
 * Alibaba Cloud Model Studio's DashScope video synthesis (Wan), from its API references: POST
 * /api/v1/services/aigc/video-generation/video-synthesis with `X-DashScope-Async: enable` → {output: {task_id,
 * task_status: "PENDING"}, request_id}; GET /api/v1/tasks/{task_id} → {request_id, output: {task_id,
 * task_status: PENDING → RUNNING → SUCCEEDED | FAILED, video_url, code, message, submit_time, …}, usage:
 * {video_duration, video_ratio, video_count}} (an id it does not know: UNKNOWN); POST …/tasks/{id}/cancel for a
 * PENDING task; GET /api/v1/tasks?page_no&page_size → {data, total, …}; a Bearer key; errors as HTTP statuses with
 * {request_id, code, message}. The base URL a channel names ends in /api/v1.
 */
export async function startFakeWan(apiKey: string): Promise<FakeWan> {
  const created: FakeVideoVendor['created'] = new Map();
  const createHeaders: FakeWan['createHeaders'] = [];
  const authFailures: string[] = [];
  const knobs: FakeVideoVendor['knobs'] = { pollsUntilDone: 1 };
  const wanKnobs: FakeWan['wanKnobs'] = { busy: 0, arrearage: false, inspection: false };
  let seq = 0;
  const requestId = () => `7574ee8f-0000-4000-8000-${String(++seq).padStart(12, '0')}`;
  const refuse = (res: ServerResponse, status: number, code: string, message: string) => sendJson(res, status, { request_id: requestId(), code, message });
  const server = await startServer(async (req, res) => {
    const url = new URL(req.url ?? '/', 'http://x');
    const file = /^\/files\/(.+)\.mp4$/.exec(url.pathname);
    if (file && created.has(file[1])) return sendBytes(res, 'video/mp4', clip(created.get(file[1])!.size, created.get(file[1])!.seconds));
    if (req.headers.authorization !== `Bearer ${apiKey}`) {
      authFailures.push(String(req.headers.authorization ?? ''));
      return refuse(res, 401, 'InvalidApiKey', 'Invalid API-key provided.');
    }
    const tasksPath = '/api/v1/tasks';
    if (req.method === 'GET' && (url.pathname === tasksPath || url.pathname === `${tasksPath}/`)) {
      return sendJson(res, 200, { request_id: requestId(), data: [], total: 0, total_page: 0, page_no: Number(url.searchParams.get('page_no') ?? 1), page_size: Number(url.searchParams.get('page_size') ?? 10) });
    }
    const cancel = new RegExp(`^${tasksPath}/([^/]+)/cancel$`).exec(url.pathname);
    if (cancel && req.method === 'POST') {
      const task = created.get(decodeURIComponent(cancel[1]));
      if (!task || task.polls > 0) return refuse(res, 400, 'UnsupportedOperation', 'Failed to cancel the task, please confirm if the task is in PENDING status.');
      task.deleted = true;
      return sendJson(res, 200, { request_id: requestId() });
    }
    const one = url.pathname.startsWith(`${tasksPath}/`) ? decodeURIComponent(url.pathname.slice(tasksPath.length + 1)) : undefined;
    if (one !== undefined && req.method === 'GET') {
      const task = created.get(one);
      if (!task) return sendJson(res, 200, { request_id: requestId(), output: { task_id: one, task_status: 'UNKNOWN' } });
      task.polls++;
      const times = { submit_time: '2026-11-27 01:44:10.000', scheduled_time: '2026-11-27 01:44:12.000' };
      const output = { task_id: one, ...times };
      if (task.deleted) return sendJson(res, 200, { request_id: requestId(), output: { ...output, task_status: 'CANCELED' } });
      if (knobs.stall || task.polls < knobs.pollsUntilDone) return sendJson(res, 200, { request_id: requestId(), output: { ...output, task_status: task.polls <= 1 ? 'PENDING' : 'RUNNING' } });
      const ended = { ...output, end_time: '2026-11-27 01:46:10.000' };
      if (wanKnobs.inspection) return sendJson(res, 200, { request_id: requestId(), output: { ...ended, task_status: 'FAILED', code: 'DataInspectionFailed', message: 'Output data may contain inappropriate content.' } });
      if (knobs.failWith) return sendJson(res, 200, { request_id: requestId(), output: { ...ended, task_status: 'FAILED', code: knobs.failCode ?? 'InternalError', message: knobs.failWith } });
      const input = task.body.input as Record<string, unknown>;
      return sendJson(res, 200, {
        request_id: requestId(),
        output: { ...ended, task_status: 'SUCCEEDED', orig_prompt: input.prompt, video_url: `${server.url}/files/${one}.mp4` },
        usage: { video_duration: task.seconds * (knobs.billMultiplier ?? 1), video_ratio: task.size.replace('x', '*'), video_count: 1 },
      });
    }
    if (req.method !== 'POST' || url.pathname !== '/api/v1/services/aigc/video-generation/video-synthesis') return refuse(res, 404, 'NotFound', 'Not Found');
    fake.createRequests = (fake.createRequests ?? 0) + 1;
    createHeaders.push({ ...req.headers });
    if (req.headers['x-dashscope-async'] !== 'enable') return refuse(res, 403, 'AccessDenied', 'current user api does not support synchronous calls');
    if (wanKnobs.arrearage) return refuse(res, 400, 'Arrearage', 'Access denied, please make sure your account is in good standing.');
    if (wanKnobs.busy > 0) {
      wanKnobs.busy--;
      return refuse(res, 429, 'Throttling.RateQuota', 'Requests rate limit exceeded, please try again later.');
    }
    const body = JSON.parse(req.body.toString()) as Record<string, any>;
    const model = MODELS[String(body.model)];
    if (!model) return refuse(res, 400, 'InvalidParameter', 'Model not exist.');
    const input = (body.input ?? {}) as Record<string, unknown>;
    const parameters = (body.parameters ?? {}) as Record<string, unknown>;
    const bad = (message: string) => refuse(res, 400, 'InvalidParameter', message);
    if (typeof input.prompt !== 'string' || (model.kind === 't2v' && !input.prompt)) return bad('Field required: input.prompt');
    if ([...input.prompt].length > model.promptChars) return bad(`input.prompt must be at most ${model.promptChars} characters`);
    if (input.negative_prompt !== undefined && (typeof input.negative_prompt !== 'string' || [...input.negative_prompt].length > 500)) return bad('input.negative_prompt must be a string of at most 500 characters');
    if (model.kind === 't2v' && input.img_url !== undefined) return bad(`input.img_url is not supported by ${String(body.model)}`);
    if (model.kind === 't2v' && parameters.resolution !== undefined) return bad(`parameters.resolution is not supported by ${String(body.model)}: give parameters.size`);
    if (model.kind === 'i2v' && parameters.size !== undefined) return bad(`parameters.size is not supported by ${String(body.model)}: give parameters.resolution`);
    const seconds = parameters.duration ?? 5;
    if (typeof seconds !== 'number' || !model.durations.includes(seconds)) return bad(`The duration ${String(seconds)} is not supported by ${String(body.model)}.`);
    if (parameters.seed !== undefined && (!Number.isInteger(parameters.seed) || (parameters.seed as number) < 0 || (parameters.seed as number) > 2147483647)) return bad('parameters.seed must be an integer in [0, 2147483647]');
    if (parameters.audio !== undefined && (typeof parameters.audio !== 'boolean' || !model.audio)) return bad(`parameters.audio is not supported by ${String(body.model)}`);
    if (parameters.watermark !== undefined && typeof parameters.watermark !== 'boolean') return bad('parameters.watermark must be a boolean');
    let size: string;
    if (model.kind === 't2v') {
      const asked = String(parameters.size ?? '1920*1080');
      if (!model.tiers.some((tier) => SIZES[tier].includes(asked))) return bad(`The size ${asked} is not match the allowed size of ${String(body.model)}.`);
      size = asked.replace('*', 'x');
    } else {
      if (typeof input.img_url !== 'string' || !/^(https?:\/\/|data:image\/)/.test(input.img_url)) return bad('Field required: input.img_url');
      const tier = String(parameters.resolution ?? '1080P');
      if (!model.tiers.includes(tier)) return bad(`The resolution ${tier} is not supported by ${String(body.model)}.`);
      let shape: { width?: number; height?: number };
      try {
        const image = input.img_url.startsWith('data:') ? Buffer.from(input.img_url.split(',')[1] ?? '', 'base64') : Buffer.from(await (await fetch(input.img_url)).arrayBuffer());
        shape = await sharp(image).metadata();
      } catch {
        return bad('Download the media resource timed out during the data inspection process.');
      }
      if (!shape.width || !shape.height || Math.min(shape.width, shape.height) < 360 || Math.max(shape.width, shape.height) > 2000) return bad('The image width and height must be within [360, 2000] pixels.');
      // the image's shape at about the tier's pixels (even sides)
      const ratio = shape.width / shape.height;
      const even = (v: number) => Math.round(v / 2) * 2;
      size = `${even(Math.sqrt(TIER_AREA[tier] * ratio))}x${even(Math.sqrt(TIER_AREA[tier] / ratio))}`;
    }
    const id = `0385dc79-5ff8-4d82-bcb6-${String(100_000_000_000 + created.size)}`;
    created.set(id, { path: 'services/aigc/video-generation/video-synthesis', body, polls: 0, size, seconds });
    return sendJson(res, 200, { request_id: requestId(), output: { task_id: id, task_status: 'PENDING' } });
  });
  const fake: FakeWan = { server, url: `${server.url}/api/v1`, created, createHeaders, knobs, wanKnobs, authFailures, close: () => server.close() };
  return fake;
}
