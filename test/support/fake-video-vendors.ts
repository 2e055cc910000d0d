import { randomUUID } from 'node:crypto';
import sharp from 'sharp';
import { klingAccount } from './fake-upstreams.js';
import { sendBytes, sendJson, startServer, type TestServer } from './http-server.js';
import { sizedMp4 as clip } from './media.js';
import { callBack, type VendorCallback } from './vendor-callback.js';

/**
 * Fakes of the video vendors the gateway relays to besides Luma, each from its documented shapes: Kling's
 * video API (no official Node SDK) and Runway's API (driven with `@runwayml/sdk` in a test to prove it).
 * Each renders the MP4 its task asked for (size and length), so a test can check what the gateway stored.
 */
export interface FakeVideoVendor {
  server: TestServer;
  url: string;
  /** Creates received, by the vendor's task id: the path they came to and the body as sent (`ended`: finished by `finish`; `calledBack`: its end was called back). */
  created: Map<string, { path: string; body: Record<string, unknown>; polls: number; size: string; seconds: number; deleted?: boolean; ended?: boolean; calledBack?: boolean }>;
  /**
   * `stall`: its tasks stay in progress for ever (until deleted, where the vendor can). Kling's only:
   * `createBusy` creates answered HTTP 200 with code 1303 (its concurrency limit) before it takes one;
   * `resetAfterCreate` creates made, their connection then reset before any answer; `createDelayMs`
   * how long a create is held before it is made; `createInArrears` creates refused with HTTP 429 and code
   * 1102 (its resource pack exhausted: not busy, the account is out of credit). `billMultiplier`: the billed
   * figure a vendor that reports one (Kling, Seedance, Wan) gives for an ended task is this many times its own
   * (2: it bills twice what the task took).
   */
  knobs: { pollsUntilDone: number; failWith?: string; failCode?: string; stall?: boolean; createBusy?: number; resetAfterCreate?: number; createDelayMs?: number; createInArrears?: boolean; billMultiplier?: number };
  /** Create requests received (answered or not). */
  createRequests?: number;
  /** Kling, Seedance: the callbacks sent to creates' callback_url (each task's end), in order. */
  callbacks?: VendorCallback[];
  /**
   * Kling, Seedance: the vendor ends task `id` now, whatever the polls and `stall` (failed with `failWith`
   * when set, else succeeded), and POSTs its end to the create's callback_url: resolves with that callback once answered.
   */
  finish?(id: string): Promise<VendorCallback | undefined>;
  authFailures: string[];
  close(): Promise<void>;
}


const KLING_MODELS = ['kling-v1', 'kling-v1-5', 'kling-v1-6', 'kling-v2-master', 'kling-v2-1', 'kling-v2-1-master', 'kling-v2-5-turbo', 'kling-v2-6'];
const KLING_SIZES: Record<string, Record<string, string>> = { std: { '16:9': '1280x720', '9:16': '720x1280', '1:1': '720x720' }, pro: { '16:9': '1920x1080', '9:16': '1080x1920', '1:1': '1080x1080' } };

/**
 * Kling's video API, `model_name` design: POST /v1/videos/text2video and /image2video, GET …/{task_id or
 * external_task_id}, the list (pageNum, pageSize), its envelope and codes (1201 for a bad parameter), states
 * submitted → processing → succeed | failed, `task_result.videos[{id, url, duration}]`. A task created with a
 * callback_url gets its end POSTed there: the task record (task_id, task_status at the top level, no
 * envelope), as Kling's callback protocol gives it.
 */
export async function startFakeKlingVideo(accessKey: string, secretKey: string): Promise<FakeVideoVendor> {
  const created: FakeVideoVendor['created'] = new Map();
  const byExternal = new Map<string, string>();
  const authFailures: string[] = [];
  const knobs: FakeVideoVendor['knobs'] = { pollsUntilDone: 2 };
  const accounts = new Map([[accessKey, secretKey]]);
  let seq = 0;
  const envelope = (data: unknown, code = 0, message = 'SUCCEED') => ({ code, message, request_id: `kling-req-${++seq}`, data });
  const record = (id: string, status: string) => {
    const task = created.get(id)!;
    return {
      task_id: id,
      task_status: status,
      task_status_msg: status === 'failed' ? knobs.failWith : '',
      task_info: { external_task_id: task.body.external_task_id },
      created_at: Date.now(),
      updated_at: Date.now(),
      // final_unit_deduction: the units the task took, as a string (this fake's tariff: 1 unit per 5 s in std, 3.5 in pro)
      ...(status === 'succeed' ? { task_result: { videos: [{ id: `${id}-v`, url: `${server.url}/files/${id}.mp4`, duration: String(task.seconds) }] }, final_unit_deduction: String(Math.round((task.seconds / 5) * (task.body.mode === 'pro' ? 3.5 : 1) * (knobs.billMultiplier ?? 1) * 1e6) / 1e6) } : {}),
    };
  };
  const callbacks: VendorCallback[] = [];
  /** The task's end, called back once. */
  const calledBack = (id: string) => {
    const task = created.get(id)!;
    task.calledBack = true;
    return callBack(task.body.callback_url, record(id, knobs.failWith ? 'failed' : 'succeed'), callbacks);
  };
  const server = await startServer(async (req, res) => {
    const url = new URL(req.url ?? '/', 'http://x');
    const file = /^\/files\/(.+)\.mp4$/.exec(url.pathname);
    if (file && created.has(file[1])) return sendBytes(res, 'video/mp4', clip(created.get(file[1])!.size, created.get(file[1])!.seconds));
    if (!(await klingAccount(req.headers, accounts, authFailures))) return sendJson(res, 401, envelope(null, 1000, 'Authentication failed'));
    const route = /^\/v1\/videos\/(text2video|image2video|multi-image2video)(?:\/(.+))?$/.exec(url.pathname);
    if (!route) return sendJson(res, 404, envelope(null, 1203, 'no such route'));
    const [, endpoint, id] = route;
    if (req.method === 'GET' && !id) return sendJson(res, 200, envelope([...created.keys()].slice(0, Number(url.searchParams.get('pageSize') ?? 30)).map((k) => record(k, 'submitted'))));
    if (req.method === 'GET') {
      const key = created.has(id) ? id : byExternal.get(id);
      const task = key ? created.get(key) : undefined;
      if (!key || !task || task.path !== endpoint) return sendJson(res, 404, envelope(null, 1203, 'The requested resource does not exist'));
      task.polls++;
      const done = task.ended || (!knobs.stall && task.polls >= knobs.pollsUntilDone);
      sendJson(res, 200, envelope(record(key, !done ? 'processing' : knobs.failWith ? 'failed' : 'succeed')));
      if (done && !task.calledBack) void calledBack(key);
      return;
    }
    if (req.method !== 'POST' || id) return sendJson(res, 404, envelope(null, 1202, 'invalid method'));
    fake.createRequests = (fake.createRequests ?? 0) + 1;
    if (knobs.createBusy) {
      knobs.createBusy--;
      return sendJson(res, 200, envelope(null, 1303, 'Parallel task over resource pack limit'));
    }
    if (knobs.createInArrears) return sendJson(res, 429, envelope(null, 1102, 'Account exception: resource pack exhausted'));
    if (knobs.createDelayMs) await new Promise((resolve) => setTimeout(resolve, knobs.createDelayMs));
    const body = JSON.parse(req.body.toString()) as Record<string, unknown>;
    const refuse = (message: string) => sendJson(res, 400, envelope(null, 1201, message));
    const model = String(body.model_name ?? 'kling-v1');
    if (!KLING_MODELS.includes(model) || (endpoint === 'text2video' && model === 'kling-v2-1')) return refuse(`model_name ${model} is invalid for ${endpoint}`);
    if (endpoint === 'text2video' && (typeof body.prompt !== 'string' || !body.prompt)) return refuse('prompt is required');
    if (typeof body.prompt === 'string' && [...body.prompt].length > 2500) return refuse('prompt is too long');
    if (body.duration !== undefined && body.duration !== '5' && body.duration !== '10') return refuse('duration must be "5" or "10"');
    if (body.mode !== undefined && body.mode !== 'std' && body.mode !== 'pro') return refuse('mode must be std or pro');
    if (endpoint === 'image2video' && body.aspect_ratio !== undefined) return refuse('aspect_ratio is not a parameter of image2video');
    if (endpoint === 'multi-image2video') {
      // kling-v1-6 only; image_list of 1 to 4 {image} (a URL or Base64); no image or image_tail
      if (model !== 'kling-v1-6') return refuse(`model_name ${model} is invalid for multi-image2video`);
      const list = body.image_list as { image?: unknown }[] | undefined;
      if (!Array.isArray(list) || list.length < 1 || list.length > 4 || list.some((i) => typeof i?.image !== 'string' || !i.image)) return refuse('image_list must hold 1 to 4 {image}');
      if (body.image !== undefined || body.image_tail !== undefined) return refuse('image and image_tail are not parameters of multi-image2video');
      if (typeof body.prompt !== 'string' || !body.prompt) return refuse('prompt is required');
    } else if (body.image_list !== undefined) return refuse(`image_list is not a parameter of ${endpoint}`);
    if (body.aspect_ratio !== undefined && !['16:9', '9:16', '1:1'].includes(String(body.aspect_ratio))) return refuse('aspect_ratio is invalid');
    for (const field of ['image', 'image_tail']) {
      const value = body[field];
      if (value !== undefined && (typeof value !== 'string' || value.startsWith('data:'))) return refuse(`${field} must be a URL or Base64 without a data: prefix`);
    }
    if (endpoint === 'image2video' && !body.image && !body.image_tail) return refuse('image or image_tail is required');
    if (body.image_tail !== undefined && body.mode !== 'pro') return refuse('image_tail needs mode pro');
    const external = body.external_task_id as string | undefined;
    if (external !== undefined && byExternal.has(external)) return refuse('external_task_id exists already');
    const taskId = `kv-${created.size + 1}`;
    const mode = body.mode === 'pro' || model === 'kling-v2-1-master' ? 'pro' : 'std';
    // image2video takes the first frame's shape: read from the image as Kling fetches it (a URL, or Base64)
    let size = KLING_SIZES[mode][String(body.aspect_ratio ?? '16:9')];
    if (endpoint === 'image2video' && typeof body.image === 'string') {
      const shape = await klingFrameShape(body.image);
      if ('refused' in shape) return refuse(shape.refused);
      size = shapedSize(shape.width, shape.height, mode === 'pro' ? 1080 : 720);
    }
    created.set(taskId, { path: endpoint, body, polls: 0, size, seconds: Number(body.duration ?? '5') });
    if (external !== undefined) byExternal.set(external, taskId);
    if (knobs.resetAfterCreate) {
      knobs.resetAfterCreate--;
      res.socket?.resetAndDestroy();
      return;
    }
    return sendJson(res, 200, envelope(record(taskId, 'submitted')));
  });
  const finish = async (id: string) => {
    const task = created.get(id)!;
    task.ended = true;
    return task.calledBack ? undefined : calledBack(id);
  };
  const fake: FakeVideoVendor = { server, url: server.url, created, knobs, callbacks, finish, authFailures, close: () => server.close() };
  return fake;
}

/** A Kling image's size as Kling reads it (fetched from its URL, or decoded from Base64), under its rules: at least 300 px a side, ratio within 1:2.5 and 2.5:1. */
async function klingFrameShape(image: string): Promise<{ width: number; height: number } | { refused: string }> {
  let bytes: Buffer;
  try {
    bytes = /^https?:\/\//.test(image) ? Buffer.from(await (await fetch(image)).arrayBuffer()) : Buffer.from(image, 'base64');
  } catch {
    return { refused: 'image could not be fetched' };
  }
  const meta = await sharp(bytes).metadata().catch(() => null);
  if (!meta?.width || !meta.height) return { refused: 'image is not a valid image' };
  if (Math.min(meta.width, meta.height) < 300) return { refused: 'image must be at least 300 px a side' };
  if (Math.max(meta.width / meta.height, meta.height / meta.width) > 2.5) return { refused: 'image aspect ratio must be within 1:2.5 and 2.5:1' };
  return { width: meta.width, height: meta.height };
}

/** A video size at an image's shape, its shorter side `short` px (even sides). */
function shapedSize(width: number, height: number, short: number): string {
  const long = Math.round((short * Math.max(width, height)) / Math.min(width, height) / 2) * 2;
  return width >= height ? `${long}x${short}` : `${short}x${long}`;
}

const RUNWAY_VERSION = '2024-11-06';
const GEN4_RATIOS = ['1280:720', '720:1280', '1104:832', '832:1104', '960:960', '1584:672'];
const VEO_RATIOS = ['1280:720', '720:1280', '1080:1920', '1920:1080'];
/** Runway's models as SDK 4.x types them: endpoints, ratios, durations, the frame positions they take. */
const RUNWAY_MODELS: Record<string, { t2v: boolean; ratios: string[]; durations: number[]; last: boolean }> = {
  'gen4.5': { t2v: true, ratios: GEN4_RATIOS, durations: [2, 3, 4, 5, 6, 7, 8, 9, 10], last: false },
  gen4_turbo: { t2v: false, ratios: GEN4_RATIOS, durations: [5, 10], last: false },
  'veo3.1': { t2v: true, ratios: VEO_RATIOS, durations: [4, 6, 8], last: true },
  'veo3.1_fast': { t2v: true, ratios: VEO_RATIOS, durations: [4, 6, 8], last: true },
  seedance2: { t2v: true, ratios: ['1280:720', '720:1280', '960:960'], durations: [5, 10], last: true },
};

/**
 * Runway's API as `@runwayml/sdk` 4.x speaks it: Bearer key and `X-Runway-Version`, POST /v1/image_to_video
 * and /v1/text_to_video → {id}, GET /v1/tasks/{id} (PENDING → RUNNING → SUCCEEDED with `output`, or FAILED
 * with `failure` and `failureCode`), DELETE /v1/tasks/{id} → 204 (then 404), GET /v1/organization; its 400s
 * `{error, issues}`; images only as HTTPS URLs or `data:` URIs under 5 MB.
 */
export async function startFakeRunway(apiKey: string): Promise<FakeVideoVendor> {
  const created: FakeVideoVendor['created'] = new Map();
  const authFailures: string[] = [];
  const knobs: FakeVideoVendor['knobs'] = { pollsUntilDone: 2 };
  const server = await startServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://x');
    const file = /^\/files\/(.+)\.mp4$/.exec(url.pathname);
    if (file && created.has(file[1])) return sendBytes(res, 'video/mp4', clip(created.get(file[1])!.size, created.get(file[1])!.seconds));
    if (req.headers.authorization !== `Bearer ${apiKey}`) {
      authFailures.push(req.headers.authorization ?? 'none');
      return sendJson(res, 401, { error: 'Invalid API key' });
    }
    if (req.headers['x-runway-version'] !== RUNWAY_VERSION) return sendJson(res, 400, { error: `Invalid X-Runway-Version header; use ${RUNWAY_VERSION}` });
    const invalid = (path: string, message: string) => sendJson(res, 400, { error: 'Validation of body failed', issues: [{ code: 'custom', path: [path], message }], docUrl: 'https://docs.dev.runwayml.com/api' });
    if (req.method === 'GET' && url.pathname === '/v1/organization') return sendJson(res, 200, { creditBalance: 1000, tier: { maxMonthlyCreditSpend: 10000, models: {} }, usage: { models: {} } });
    const task = /^\/v1\/tasks\/(.+)$/.exec(url.pathname);
    if (task) {
      const t = created.get(task[1]);
      if (!t || t.deleted) return sendJson(res, 404, { error: 'Not found' });
      if (req.method === 'DELETE') {
        t.deleted = true;
        res.writeHead(204).end();
        return;
      }
      t.polls++;
      const common = { id: task[1], createdAt: new Date().toISOString() };
      if (knobs.stall || t.polls < knobs.pollsUntilDone) return sendJson(res, 200, { ...common, status: t.polls === 1 ? 'PENDING' : 'RUNNING', ...(t.polls > 1 ? { progress: 0.5 } : {}), estimatedCost: { credits: 50 } });
      if (knobs.failWith) return sendJson(res, 200, { ...common, status: 'FAILED', failure: knobs.failWith, ...(knobs.failCode ? { failureCode: knobs.failCode } : {}), cost: { credits: 0 } });
      return sendJson(res, 200, { ...common, status: 'SUCCEEDED', output: [`${server.url}/files/${task[1]}.mp4?expires=${Date.now() + 86_400_000}`], cost: { credits: 50 } });
    }
    const create = /^\/v1\/(image_to_video|text_to_video)$/.exec(url.pathname);
    if (!create || req.method !== 'POST') return sendJson(res, 404, { error: 'Not found' });
    const body = JSON.parse(req.body.toString()) as Record<string, unknown>;
    const model = RUNWAY_MODELS[String(body.model)];
    if (!model || (create[1] === 'text_to_video' && !model.t2v)) return invalid('model', `Invalid input: ${String(body.model)} is not a model of ${create[1]}`);
    if (typeof body.ratio !== 'string' || !model.ratios.includes(body.ratio)) return invalid('ratio', `Invalid enum value. Expected ${model.ratios.join(' | ')}`);
    if (typeof body.duration !== 'number' || !model.durations.includes(body.duration)) return invalid('duration', `Invalid duration for ${String(body.model)}`);
    if (body.promptText !== undefined && (typeof body.promptText !== 'string' || body.promptText.length > 1000)) return invalid('promptText', 'String must contain at most 1000 character(s)');
    if (create[1] === 'text_to_video' && typeof body.promptText !== 'string') return invalid('promptText', 'Required');
    if (body.seed !== undefined && !Number.isInteger(body.seed)) return invalid('seed', 'Expected integer');
    if (create[1] === 'image_to_video') {
      const images = typeof body.promptImage === 'string' ? [{ uri: body.promptImage, position: 'first' }] : (body.promptImage as { uri?: unknown; position?: unknown }[] | undefined);
      if (!Array.isArray(images) || images.length === 0) return invalid('promptImage', 'Required');
      for (const image of images) {
        const uri = String(image.uri);
        if (!uri.startsWith('https://') && !/^data:image\/(png|jpeg|webp);base64,/.test(uri)) return sendJson(res, 400, { error: 'Only HTTPS URLs are allowed.' });
        if (uri.length >= 5 * 1024 * 1024) return sendJson(res, 400, { error: 'Invalid data URI.' });
        if (image.position !== 'first' && !(image.position === 'last' && model.last)) return invalid('promptImage', `position ${String(image.position)} is not taken by ${String(body.model)}`);
      }
      if (images.some((i) => i.position === 'last') && !images.some((i) => i.position === 'first')) return invalid('promptImage', 'a last frame needs a first frame');
    }
    const id = randomUUID();
    created.set(id, { path: create[1], body, polls: 0, size: body.ratio.replace(':', 'x'), seconds: body.duration });
    return sendJson(res, 200, { id, estimatedCost: { credits: 50 } });
  });
  return { server, url: server.url, created, knobs, authFailures, close: () => server.close() };
}
