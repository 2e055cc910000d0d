import type { ServerResponse } from 'node:http';
import type { FakeVideoVendor } from '../video-fake.js';
import { sendBytes, sendJson, startServer } from '../../http-server.js';
import { sizedMp4 as clip } from '../../media.js';
import { callBack, type VendorCallback } from '../../vendor-callback.js';

/** Each model's durations and resolutions, and whether it takes a last frame and makes sound (the API reference's). */
const MODELS: Record<string, { durations: [number, number]; resolutions: string[]; last: boolean; audio: boolean; references?: number }> = {
  'seedance-1-0-pro-250528': { durations: [2, 12], resolutions: ['480p', '720p', '1080p'], last: true, audio: false },
  'seedance-1-0-pro-fast-251015': { durations: [2, 12], resolutions: ['480p', '720p', '1080p'], last: false, audio: false },
  'seedance-1-5-pro-251215': { durations: [4, 12], resolutions: ['480p', '720p', '1080p'], last: true, audio: true },
  'dreamina-seedance-2-0-260128': { durations: [4, 15], resolutions: ['480p', '720p'], last: true, audio: true, references: 9 },
  'dreamina-seedance-2-0-fast-260128': { durations: [4, 15], resolutions: ['480p', '720p'], last: true, audio: true, references: 9 },
  // 1.0 Lite image-to-video, which the gateway's catalog leaves out (a channel declares it): 1-4 reference images at 480p or 720p
  'seedance-1-0-lite-i2v-250428': { durations: [2, 12], resolutions: ['480p', '720p'], last: true, audio: false, references: 4 },
};
/** Frame sizes by resolution and ratio, as ModelArk's table gives them (adaptive: the first frame's; a 16:9 one here). */
const SIZES: Record<string, Record<string, string>> = {
  '480p': { '16:9': '864x480', '4:3': '736x544', '1:1': '640x640', '3:4': '544x736', '9:16': '480x864', '21:9': '960x416' },
  '720p': { '16:9': '1280x720', '4:3': '1112x834', '1:1': '960x960', '3:4': '834x1112', '9:16': '720x1280', '21:9': '1470x630' },
  '1080p': { '16:9': '1920x1080', '4:3': '1664x1248', '1:1': '1440x1440', '3:4': '1248x1664', '9:16': '1080x1920', '21:9': '2206x946' },
};

/** The tokens a task is billed: width × height × frames (24 a second, and one) / 1024, as its samples' 108900 for 5 s of 1280x720; `multiplier` times that. */
function tokensOf(size: string, seconds: number, multiplier = 1): number {
  const [width, height] = size.split('x').map(Number);
  return Math.round(((width * height * (24 * seconds + 1)) / 1024) * multiplier);
}

export interface FakeSeedance extends FakeVideoVendor {
  /** `busy`: the next creates answer 429 RateLimitExceeded; `overdue`: 403 AccountOverdueError; `sensitive`: tasks fail with OutputVideoSensitiveContentDetected. */
  arkKnobs: { busy: number; overdue: boolean; sensitive: boolean };
}

/**
 * BytePlus ModelArk's content generation tasks (Seedance), from its Video Generation API pages: POST
 * /api/v3/contents/generations/tasks → {id: "cgt-…"}; GET …/tasks/{id} → {id, model, status: queued → running
 * → succeeded | failed, content: {video_url}, error: {code, message}, usage: {completion_tokens}, ratio,
 * resolution, duration, seed}; GET …/tasks?page_num&page_size → {items, total}; DELETE …/tasks/{id} cancels a
 * queued task; a Bearer key; errors as HTTP statuses with {error: {code, message}}. The base URL a channel
 * names ends in /api/v3. A task created with a callback_url gets its end POSTed there, the task as GET answers
 * it (the create's `callback_url`: "the callback's body is the query API's response body"; ModelArk also calls
 * back queued and running, which this fake leaves out).
 */
export async function startFakeSeedance(apiKey: string): Promise<FakeSeedance> {
  const created: FakeVideoVendor['created'] = new Map();
  const authFailures: string[] = [];
  const knobs: FakeVideoVendor['knobs'] = { pollsUntilDone: 1 };
  const arkKnobs: FakeSeedance['arkKnobs'] = { busy: 0, overdue: false, sensitive: false };
  const refuse = (res: ServerResponse, status: number, code: string, message: string) => sendJson(res, status, { error: { code, message, param: '', type: code } });
  const callbacks: VendorCallback[] = [];
  /** The task as GET answers it once it has ended: failed (its moderation, or `failWith`) or succeeded. */
  const ending = (id: string) => {
    const task = created.get(id)!;
    const body = task.body;
    const common = { id, model: body.model, created_at: 1764201600, updated_at: 1764201600 + task.polls };
    if (arkKnobs.sensitive) return { ...common, status: 'failed', error: { code: 'OutputVideoSensitiveContentDetected', message: 'The request failed because the output video may contain sensitive information.' } };
    if (knobs.failWith) return { ...common, status: 'failed', error: { code: knobs.failCode ?? 'InternalServiceError', message: knobs.failWith } };
    return {
      ...common,
      status: 'succeeded',
      content: { video_url: `${server.url}/files/${id}.mp4` },
      usage: { completion_tokens: tokensOf(task.size, task.seconds, knobs.billMultiplier), total_tokens: tokensOf(task.size, task.seconds, knobs.billMultiplier) },
      seed: 42,
      resolution: body.resolution ?? '720p',
      ratio: body.ratio,
      duration: task.seconds,
      framespersecond: 24,
    };
  };
  /** The task's end, called back once. */
  const calledBack = (id: string) => {
    const task = created.get(id)!;
    task.calledBack = true;
    return callBack(task.body.callback_url, ending(id), callbacks);
  };
  const server = await startServer(async (req, res) => {
    const url = new URL(req.url ?? '/', 'http://x');
    const file = /^\/files\/(.+)\.mp4$/.exec(url.pathname);
    if (file && created.has(file[1])) return sendBytes(res, 'video/mp4', clip(created.get(file[1])!.size, created.get(file[1])!.seconds));
    if (req.headers.authorization !== `Bearer ${apiKey}`) {
      authFailures.push(String(req.headers.authorization ?? ''));
      return refuse(res, 401, 'AuthenticationError', 'The API key or AK/SK in the request is missing or invalid.');
    }
    const tasksPath = '/api/v3/contents/generations/tasks';
    const one = url.pathname.startsWith(`${tasksPath}/`) ? decodeURIComponent(url.pathname.slice(tasksPath.length + 1)) : undefined;
    if (req.method === 'GET' && url.pathname === tasksPath) return sendJson(res, 200, { items: [], total: 0 });
    if (one !== undefined && req.method === 'GET') {
      const task = created.get(one);
      if (!task) return refuse(res, 404, 'ResourceNotFound', `The specified task ${one} is not found.`);
      task.polls++;
      const body = task.body;
      const common = { id: one, model: body.model, created_at: 1764201600, updated_at: 1764201600 + task.polls };
      if (task.deleted) return sendJson(res, 200, { ...common, status: 'cancelled' });
      if (!task.ended && (knobs.stall || task.polls < knobs.pollsUntilDone)) return sendJson(res, 200, { ...common, status: task.polls <= 1 ? 'queued' : 'running' });
      sendJson(res, 200, ending(one));
      if (!task.calledBack) void calledBack(one);
      return;
    }
    if (one !== undefined && req.method === 'DELETE') {
      const task = created.get(one);
      if (!task) return refuse(res, 404, 'ResourceNotFound', `The specified task ${one} is not found.`);
      task.deleted = true;
      return sendJson(res, 200, {});
    }
    if (req.method !== 'POST' || url.pathname !== tasksPath) return refuse(res, 404, 'NotFound', 'not found');
    fake.createRequests = (fake.createRequests ?? 0) + 1;
    if (arkKnobs.overdue) return refuse(res, 403, 'AccountOverdueError', 'The request failed because your account has an overdue balance.');
    if (arkKnobs.busy > 0) {
      arkKnobs.busy--;
      return refuse(res, 429, 'RateLimitExceeded.EndpointRPMExceeded', 'The request has exceeded the rate limit.');
    }
    const body = JSON.parse(req.body.toString()) as Record<string, unknown>;
    const model = MODELS[String(body.model)];
    if (!model) return refuse(res, 404, 'InvalidEndpointOrModel.NotFound', `The model or endpoint ${String(body.model)} does not exist or you do not have access to it.`);
    const content = Array.isArray(body.content) ? (body.content as Record<string, any>[]) : [];
    const texts = content.filter((c) => c.type === 'text');
    const images = content.filter((c) => c.type === 'image_url');
    if (texts.length !== 1 || typeof texts[0].text !== 'string') return refuse(res, 400, 'InvalidParameter', 'content must hold one text item');
    for (const image of images) {
      if (typeof image.image_url?.url !== 'string' || !/^(https?:\/\/|data:image\/)/.test(image.image_url.url)) return refuse(res, 400, 'InvalidParameter', 'image_url.url must be a URL or a Base64 data URI');
      if (!['first_frame', 'last_frame', 'reference_image'].includes(image.role)) return refuse(res, 400, 'InvalidParameter', `role ${String(image.role)} is not supported here`);
    }
    const references = images.filter((i) => i.role === 'reference_image');
    if (references.length > (model.references ?? 0)) return refuse(res, 400, 'InvalidParameter', `${String(body.model)} takes at most ${model.references ?? 0} reference images`);
    if (references.length > 0 && references.length < images.length) return refuse(res, 400, 'InvalidParameter', 'The parameter `content` specified in the request is not valid: first/last frame content cannot be mixed with reference media content.');
    if (images.some((i) => i.role === 'last_frame') && (!model.last || !images.some((i) => i.role === 'first_frame'))) return refuse(res, 400, 'InvalidParameter', 'last_frame needs first_frame and a model that takes it');
    const ratio = String(body.ratio ?? '16:9');
    if (ratio === 'adaptive' ? images.length === references.length : !SIZES['720p'][ratio]) return refuse(res, 400, 'InvalidParameter', `ratio ${ratio} is not supported`);
    const resolution = String(body.resolution ?? '720p');
    if (!model.resolutions.includes(resolution)) return refuse(res, 400, 'InvalidParameter', `resolution ${resolution} is not supported by ${String(body.model)}`);
    const seconds = body.duration === undefined ? 5 : body.duration;
    if (typeof seconds !== 'number' || !Number.isInteger(seconds) || seconds < model.durations[0] || seconds > model.durations[1]) return refuse(res, 400, 'InvalidParameter', `duration ${String(seconds)} is not supported by ${String(body.model)}`);
    if (body.generate_audio !== undefined && !model.audio) return refuse(res, 400, 'InvalidParameter', `generate_audio is not supported by ${String(body.model)}`);
    if (body.watermark !== undefined && typeof body.watermark !== 'boolean') return refuse(res, 400, 'InvalidParameter', 'watermark must be a boolean');
    const id = `cgt-20261127${String(100_000 + created.size)}-${Math.random().toString(36).slice(2, 7)}`;
    created.set(id, { path: 'contents/generations/tasks', body, polls: 0, size: SIZES[resolution][ratio === 'adaptive' ? '16:9' : ratio], seconds });
    return sendJson(res, 200, { id });
  });
  const finish = async (id: string) => {
    const task = created.get(id)!;
    task.ended = true;
    return task.calledBack ? undefined : calledBack(id);
  };
  const fake: FakeSeedance = { server, url: `${server.url}/api/v3`, created, knobs, arkKnobs, callbacks, finish, authFailures, close: () => server.close() };
  return fake;
}
