import type { IncomingHttpHeaders, ServerResponse } from 'node:http';
import { jwtVerify } from 'jose';
import sharp from 'sharp';
import { type FakeUpstream, fakeDefaults } from '../../fake-upstreams.js';
import { sendBytes, sendJson, startServer, type TestServer } from '../../http-server.js';
import { png } from '../../images.js';
import { sizedMp4 as clip } from '../../media.js';
import { callBack, type VendorCallback } from '../../vendor-callback.js';
import type { FakeVideoVendor } from '../video-fake.js';

// Kling's one fake file: its expand (startFakeKling), video (startFakeKlingVideo) and image generation
// (startFakeKlingImages) APIs, each from Kling's documented shapes, behind the JWT Kling verifies (klingAccount).

/**
 * The Kling account (access key) whose valid JWT the request carries, verified as Kling does (HS256 signed
 * with the secret key, iss = access key, exp = now + 1800 s, nbf = now - 5 s); null when it carries none
 * (why, pushed to `failures`).
 */
export async function klingAccount(headers: IncomingHttpHeaders, accounts: Map<string, string>, failures: string[]): Promise<string | null> {
  const token = /^Bearer (.+)$/.exec(headers.authorization ?? '')?.[1];
  try {
    if (!token) throw new Error('no bearer token');
    const iss = JSON.parse(Buffer.from(token.split('.')[1] ?? '', 'base64url').toString() || '{}').iss as string;
    const secret = accounts.get(iss);
    if (!secret) throw new Error(`unknown access key ${iss}`);
    const { payload, protectedHeader } = await jwtVerify(token, new TextEncoder().encode(secret), { issuer: iss, algorithms: ['HS256'] });
    const now = Math.floor(Date.now() / 1000);
    if (protectedHeader.typ !== 'JWT') throw new Error('typ is not JWT');
    // as Kling's sample mints them: valid 30 minutes from minting, usable from 5 s before (jwtVerify checks both against now)
    if (payload.exp === undefined || payload.nbf === undefined || payload.exp - payload.nbf !== 1805) throw new Error(`exp - nbf is not 1805 s: ${payload.exp! - payload.nbf!}`);
    if (payload.exp - now > 1800) throw new Error(`exp is more than 1800 s away: ${payload.exp - now}`);
    return iss;
  } catch (err) {
    failures.push((err as Error).message);
    return null;
  }
}

/**
 * Kling's image expand API: POST /v1/images/editing/expand and GET …/{task_id or external_task_id},
 * answered by the `{code, message, request_id, data}` envelope, behind a JWT it verifies as Kling does
 * (HS256 signed with the secret key, iss = access key, exp = now + 1800 s, nbf = now - 5 s). A task created
 * with a callback_url gets its end POSTed there: the task record (task_id, task_status at the top level, no
 * envelope), as Kling's callback protocol gives it.
 */
export async function startFakeKling(accessKey: string, secretKey: string, others: [string, string][] = []): Promise<FakeUpstream> {
  const created: FakeUpstream['created'] = new Map();
  const byExternalId = new Map<unknown, string>();
  const queries: NonNullable<FakeUpstream['queries']> = [];
  const overlaps: NonNullable<FakeUpstream['overlaps']> = [];
  const answering = new Map<string, string[]>();
  const stalled: string[] = [];
  const accounts = new Map([[accessKey, secretKey], ...others]);
  const authFailures: string[] = [];
  const knobs = fakeDefaults();
  const image = await png(640, 480);
  let seq = 0;
  const envelope = (data: unknown, code = 0, message = 'SUCCEED') => ({ code, message, request_id: `kling-req-${++seq}`, data });

  const authorised = (headers: IncomingHttpHeaders) => klingAccount(headers, accounts, authFailures);
  const callbacks: VendorCallback[] = [];
  /** The task as a query answers it (its `data`) and its callback carries it. */
  const taskRecord = (id: string, status: string) => {
    const task = created.get(id)!;
    const n = Number(task.body.n ?? 1);
    return {
      task_id: id,
      task_status: status,
      task_status_msg: status === 'failed' ? knobs.failWith : '',
      task_info: { external_task_id: task.body.external_task_id },
      task_result: { images: status === 'succeed' ? Array.from({ length: n }, (_, i) => ({ index: i, url: `${server.url}/files/${id}-${i}.png` })) : [] },
    };
  };
  /** The task's end, called back once. */
  const calledBack = (id: string) => {
    const task = created.get(id)!;
    task.calledBack = true;
    return callBack(task.body.callback_url, taskRecord(id, knobs.failWith ? 'failed' : 'succeed'), callbacks);
  };

  const server = await startServer(async (req, res) => {
    const url = new URL(req.url ?? '/', 'http://x');
    if (url.pathname.startsWith('/files/')) return sendBytes(res, 'image/png', image);
    const account = knobs.rejectAuth ? null : await authorised(req.headers);
    if (!account) return sendJson(res, 401, envelope(null, 1000, 'Authentication failed'));
    if (req.method === 'GET' && url.pathname === '/v1/images/editing/expand') return sendJson(res, 200, envelope([]));
    if (req.method === 'POST' && url.pathname === '/v1/images/editing/expand') {
      if (knobs.createBusy > 0) {
        knobs.createBusy--;
        const busy = knobs.busyAnswer ?? { status: 429, code: 1302 };
        if (busy.retryAfter !== undefined) res.setHeader('retry-after', busy.retryAfter);
        else if (busy.status === 429) res.setHeader('retry-after', '0');
        const messages: Record<number, string> = { 1102: 'Account exception: resource pack exhausted', 1302: 'API request too fast', 1303: 'Concurrent tasks exceed the limit of the resource pack' };
        return sendJson(res, busy.status, envelope(null, busy.code, busy.message ?? messages[busy.code] ?? 'busy'));
      }
      if (knobs.createRefusal) return sendJson(res, knobs.createRefusal.status, knobs.createRefusal.body);
      const body = JSON.parse(req.body.toString()) as Record<string, unknown>;
      const id = `kling-${created.size + 1}`;
      created.set(id, { body, polls: 0, at: Date.now() });
      byExternalId.set(body.external_task_id, id);
      if (knobs.createHangMs) await new Promise((r) => setTimeout(r, knobs.createHangMs));
      if (knobs.createAnswerHeld) await knobs.createAnswerHeld;
      return sendJson(res, 200, envelope({ task_id: id, task_status: 'submitted', task_info: { external_task_id: body.external_task_id }, created_at: Date.now(), updated_at: Date.now() }));
    }
    const query = /^\/v1\/images\/editing\/expand\/(.+)$/.exec(url.pathname);
    if (req.method === 'GET' && query) {
      if (knobs.queryErrors > 0) {
        knobs.queryErrors--;
        return sendJson(res, 500, envelope(null, 5000, 'Server internal error'));
      }
      if (knobs.pollBusy && knobs.pollBusy.count > 0) {
        knobs.pollBusy.count--;
        if (knobs.pollBusy.retryAfter !== undefined) res.setHeader('retry-after', knobs.pollBusy.retryAfter);
        return sendJson(res, 429, envelope(null, 1302, 'API request too fast'));
      }
      const key = decodeURIComponent(query[1]);
      const id = created.has(key) ? key : byExternalId.get(key);
      const task = id ? created.get(id) : undefined;
      if (!id || !task) return sendJson(res, 404, envelope(null, 1203, 'The requested resource does not exist'));
      const others = answering.get(id) ?? [];
      if (others.length) overlaps.push({ id, at: Date.now(), accounts: [...others, account] });
      answering.set(id, [...others, account]);
      res.once('close', () => {
        const left = answering.get(id)!.slice(1);
        if (left.length) answering.set(id, left);
        else answering.delete(id);
      });
      if (knobs.stallAccount === account) {
        stalled.push(id);
        return; // answered never: the request ends when its client goes away
      }
      if (knobs.queryDelayMs) await new Promise((r) => setTimeout(r, knobs.queryDelayMs));
      task.polls++;
      const done = task.ended || (!knobs.hold && task.polls >= knobs.pollsUntilDone);
      queries.push({ id, at: Date.now(), account, processing: !done });
      const status = !done ? 'processing' : knobs.failWith ? 'failed' : 'succeed';
      sendJson(res, 200, envelope(taskRecord(id, status)));
      if (done && !task.calledBack) void calledBack(id);
      return;
    }
    sendJson(res, 404, envelope(null, 1203, 'no such route'));
  });
  const finish = async (id: string) => {
    const task = created.get(id)!;
    task.ended = true;
    return task.calledBack ? undefined : calledBack(id);
  };
  return { server, url: server.url, knobs, created, queries, overlaps, stalled, callbacks, finish, authFailures, close: () => server.close() };
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

const RATIOS = ['16:9', '9:16', '1:1', '4:3', '3:4', '3:2', '2:3', '21:9'];
/** What each model takes, from Kling's image generation page and capability map. */
const MODELS: Record<string, { ratios: string[]; resolutions: string[]; image: boolean; reference: boolean; fidelity: boolean }> = {
  'kling-v1': { ratios: RATIOS.filter((r) => r !== '21:9'), resolutions: ['1k'], image: true, reference: false, fidelity: true },
  'kling-v1-5': { ratios: RATIOS, resolutions: ['1k'], image: true, reference: true, fidelity: true },
  'kling-v2': { ratios: RATIOS, resolutions: ['1k', '2k'], image: true, reference: false, fidelity: false },
  'kling-v2-new': { ratios: RATIOS, resolutions: ['1k', '2k'], image: true, reference: false, fidelity: false },
  'kling-v2-1': { ratios: RATIOS, resolutions: ['1k', '2k'], image: true, reference: false, fidelity: false },
  'kling-v3': { ratios: RATIOS, resolutions: ['1k', '2k'], image: true, reference: false, fidelity: false },
};

export interface FakeKlingImageTask {
  id: string;
  body: Record<string, unknown>;
  /** The input image as it decoded (its Base64 left out of `body`). */
  image: { width: number; height: number; format: string } | null;
  status: 'submitted' | 'processing' | 'succeed' | 'failed';
  polls: number;
  /** The size of the images it makes (its ratio at its resolution). */
  width: number;
  height: number;
  /** The states its callback_url was called with, in order, and how it answered. */
  callbacks: { status: string; answered: number }[];
  createdAt: number;
  updatedAt: number;
}

export interface FakeKlingImages {
  server: TestServer;
  url: string;
  /** Tasks created, by Kling's task id. */
  tasks: Map<string, FakeKlingImageTask>;
  /**
   * `pollsUntilDone`: queries before a task ends (the first moves it to processing); `failWith`: tasks end
   * failed with these words (`task_status_msg`); `hold`: tasks stay processing; `advance`: tasks move on by
   * themselves, processing at once and done after this many ms, without a query (as when only callbacks
   * tell); `createBusy`: the next N creates answer 429 code 1303; `createRefusal`: creates answer this.
   */
  knobs: { pollsUntilDone: number; failWith?: string; hold?: boolean; advance?: number; createBusy: number; createRefusal?: { status: number; code: number; message: string } };
  /** Kling ends task `id` now, whatever `hold` and the queries (failed with `failWith` when set): resolves once its callback (if asked) is answered. */
  finish(id: string): Promise<void>;
  authFailures: string[];
  close(): Promise<void>;
}

/**
 * Kling's image generation API, from its image generation page, capability map and callback protocol:
 * `POST /v1/images/generations` (model_name, prompt ≤ 2500, negative_prompt ≤ 2500 and not with an image,
 * image: a URL or raw Base64 without a data: prefix, each side ≥ 300 px, image_reference subject | face on
 * kling-v1-5 only and required there with an image, image_fidelity on kling-v1 and kling-v1-5,
 * human_fidelity with a subject reference, resolution 1k | 2k by model, n 1–9, aspect_ratio (kling-v1: no
 * 21:9), external_task_id unique per account, callback_url); `GET …/{task_id}`, `…/{external_task_id}`,
 * `…?external_task_id=`, the list `?pageNum&pageSize`; its envelope `{code, message, request_id, data}`
 * (1201 a bad parameter, 1203 not found, 1303 concurrency); states submitted → processing → succeed |
 * failed with `task_result.images[{index, url}]`, links serving PNGs of the task's ratio and resolution; the
 * bare task object POSTed to callback_url on each change of state. Behind the JWT Kling verifies.
 */
export async function startFakeKlingImages(accessKey: string, secretKey: string): Promise<FakeKlingImages> {
  const tasks = new Map<string, FakeKlingImageTask>();
  const byExternal = new Map<string, string>();
  const accounts = new Map([[accessKey, secretKey]]);
  const authFailures: string[] = [];
  const knobs: FakeKlingImages['knobs'] = { pollsUntilDone: 2, createBusy: 0 };
  const rendered = new Map<string, Buffer>();
  let seq = 0;
  const envelope = (data: unknown, code = 0, message = 'SUCCEED') => ({ code, message, request_id: `kling-img-req-${++seq}`, data });
  const refuse = (res: ServerResponse, status: number, code: number, message: string) => sendJson(res, status, envelope(null, code, message));

  /** The task object Kling answers (and calls back with, without the envelope). */
  const record = (task: FakeKlingImageTask) => ({
    task_id: task.id,
    task_status: task.status,
    task_status_msg: task.status === 'failed' ? knobs.failWith : '',
    task_info: task.body.external_task_id !== undefined ? { external_task_id: task.body.external_task_id } : {},
    created_at: task.createdAt,
    updated_at: task.updatedAt,
    ...(task.status === 'succeed'
      ? { final_unit_deduction: String(Number(task.body.n ?? 1)), task_result: { images: Array.from({ length: Number(task.body.n ?? 1) }, (_, i) => ({ index: i, url: `${server.url}/files/${task.id}-${i}.png` })) } }
      : { task_result: { images: [] } }),
  });

  /** One change of state, called back when the task asked for it. */
  const move = async (task: FakeKlingImageTask, status: FakeKlingImageTask['status']) => {
    if (task.status === status) return;
    task.status = status;
    task.updatedAt = Date.now();
    const callback = task.body.callback_url;
    if (typeof callback !== 'string') return;
    const entry = { status, answered: 0 };
    task.callbacks.push(entry);
    await fetch(callback, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(record(task)) })
      .then(async (r) => {
        entry.answered = r.status;
        await r.arrayBuffer();
      })
      .catch(() => (entry.answered = -1));
  };
  const end = (task: FakeKlingImageTask) => move(task, knobs.failWith ? 'failed' : 'succeed');

  const server = await startServer(async (req, res) => {
    const url = new URL(req.url ?? '/', 'http://x');
    const file = /^\/files\/(.+)-(\d+)\.png$/.exec(url.pathname);
    if (req.method === 'GET' && file) {
      const task = tasks.get(file[1]);
      if (!task || task.status !== 'succeed') return sendJson(res, 404, { message: 'no such file' });
      const image = rendered.get(task.id) ?? (await sharp({ create: { width: task.width, height: task.height, channels: 3, background: { r: 30, g: 80, b: 200 } } }).png().toBuffer());
      rendered.set(task.id, image);
      return sendBytes(res, 'image/png', image);
    }
    const account = await klingAccount(req.headers, accounts, authFailures);
    if (!account) return refuse(res, 401, 1000, 'Authentication failed');
    const base = '/v1/images/generations';
    if (req.method === 'GET' && url.pathname === base) {
      const external = url.searchParams.get('external_task_id');
      if (external !== null) return answerQuery(res, byExternal.get(external));
      const pageNum = Number(url.searchParams.get('pageNum') ?? 1);
      const pageSize = Number(url.searchParams.get('pageSize') ?? 30);
      if (!(pageNum >= 1 && pageNum <= 1000 && pageSize >= 1 && pageSize <= 500)) return refuse(res, 400, 1201, 'pageNum must be 1-1000 and pageSize 1-500');
      const all = [...tasks.values()].reverse().map(record);
      return sendJson(res, 200, envelope(all.slice((pageNum - 1) * pageSize, pageNum * pageSize)));
    }
    if (req.method === 'GET' && url.pathname.startsWith(`${base}/`)) {
      const key = decodeURIComponent(url.pathname.slice(base.length + 1));
      const byExternalForm = url.searchParams.has('external_task_id');
      return answerQuery(res, byExternalForm ? (byExternal.get(url.searchParams.get('external_task_id') === 'true' ? key : (url.searchParams.get('external_task_id') ?? key)) ?? byExternal.get(key)) : tasks.has(key) ? key : byExternal.get(key));
    }
    if (req.method !== 'POST' || url.pathname !== base) return refuse(res, 404, 1202, 'no such route');
    if (knobs.createBusy > 0) {
      knobs.createBusy--;
      return refuse(res, 429, 1303, 'Concurrent tasks exceed the limit of the resource pack');
    }
    if (knobs.createRefusal) return refuse(res, knobs.createRefusal.status, knobs.createRefusal.code, knobs.createRefusal.message);
    const body = JSON.parse(req.body.toString()) as Record<string, unknown>;
    const bad = (words: string) => refuse(res, 400, 1201, words);
    const modelName = String(body.model_name ?? 'kling-v1');
    const model = MODELS[modelName];
    if (!model) return refuse(res, 404, 1203, `model_name ${modelName} does not exist`);
    if (typeof body.prompt !== 'string' || !body.prompt || [...body.prompt].length > 2500) return bad('prompt is required, at most 2500 characters');
    if (body.negative_prompt !== undefined && (typeof body.negative_prompt !== 'string' || [...body.negative_prompt].length > 2500)) return bad('negative_prompt: at most 2500 characters');
    let image: FakeKlingImageTask['image'] = null;
    if (body.image !== undefined && body.image !== '') {
      if (typeof body.image !== 'string' || /^data:/.test(body.image)) return bad('image: a URL or Base64 without a data: prefix');
      if (!model.image) return bad(`image: ${modelName} takes no image`);
      if (!/^https?:\/\//.test(body.image)) {
        const meta = await sharp(Buffer.from(body.image, 'base64')).metadata().catch(() => null);
        if (!meta?.width || !meta.height || !['jpeg', 'png'].includes(meta.format ?? '')) return bad('image: jpg, jpeg or png');
        if (Math.min(meta.width, meta.height) < 300 || Math.max(meta.width / meta.height, meta.height / meta.width) > 2.5) return bad('image: each side at least 300 px, a ratio from 1:2.5 to 2.5:1');
        image = { width: meta.width, height: meta.height, format: meta.format! };
      }
      if (body.negative_prompt) return bad('negative_prompt is not supported with image');
    }
    if (body.image_reference !== undefined) {
      if (!model.reference) return bad(`image_reference: ${modelName} does not support it`);
      if (!['subject', 'face'].includes(String(body.image_reference))) return bad('image_reference: subject or face');
      if (!body.image) return bad('image_reference needs image');
    } else if (model.reference && body.image) return bad(`image_reference is required for ${modelName} with an image`);
    for (const field of ['image_fidelity', 'human_fidelity']) {
      const value = body[field];
      if (value === undefined) continue;
      if (typeof value !== 'number' || value < 0 || value > 1) return bad(`${field}: a number from 0 to 1`);
      if (field === 'image_fidelity' && !model.fidelity) return bad(`image_fidelity: only kling-v1 and kling-v1-5 support it`);
      if (field === 'human_fidelity' && body.image_reference !== 'subject') return bad('human_fidelity: only with image_reference subject');
    }
    const resolution = String(body.resolution ?? '1k');
    if (!model.resolutions.includes(resolution)) return bad(`resolution ${resolution}: ${modelName} makes ${model.resolutions.join(', ')}`);
    const n = body.n === undefined ? 1 : body.n;
    if (typeof n !== 'number' || !Number.isInteger(n) || n < 1 || n > 9) return bad('n: an integer from 1 to 9');
    const ratio = String(body.aspect_ratio ?? '16:9');
    if (!model.ratios.includes(ratio)) return bad(`aspect_ratio ${ratio}: ${modelName} makes ${model.ratios.join(', ')}`);
    if (body.callback_url !== undefined && (typeof body.callback_url !== 'string' || !URL.canParse(body.callback_url))) return bad('callback_url: a URL');
    const external = body.external_task_id;
    if (external !== undefined && external !== '') {
      if (typeof external !== 'string') return bad('external_task_id: a string');
      if (byExternal.has(external)) return bad(`external_task_id ${external} already exists`);
    }
    for (const key of Object.keys(body)) {
      if (!['model_name', 'prompt', 'negative_prompt', 'image', 'image_reference', 'image_fidelity', 'human_fidelity', 'resolution', 'n', 'aspect_ratio', 'watermark_info', 'callback_url', 'external_task_id'].includes(key)) return bad(`${key}: unknown parameter`);
    }
    const id = `8672837417591${String(100_000 + tasks.size + 1)}`; // a numeric string, as Kling's newer ids
    const [width, height] = sizeOf(ratio, resolution);
    const shown = { ...body, ...(typeof body.image === 'string' && image ? { image: `<${image.format} ${image.width}x${image.height}>` } : {}) };
    const task: FakeKlingImageTask = { id, body: shown, image, status: 'submitted', polls: 0, width, height, callbacks: [], createdAt: Date.now(), updatedAt: Date.now() };
    tasks.set(id, task);
    if (typeof external === 'string' && external) byExternal.set(external, id);
    sendJson(res, 200, envelope({ task_id: id, task_status: 'submitted', task_info: typeof external === 'string' && external ? { external_task_id: external } : {}, created_at: task.createdAt, updated_at: task.updatedAt }));
    if (knobs.advance !== undefined) {
      void move(task, 'processing');
      const finishAfter = knobs.advance;
      setTimeout(() => (knobs.hold || task.status !== 'processing' ? undefined : end(task)), finishAfter).unref();
    }
  });

  /** A query: the first moves the task to processing; `pollsUntilDone` of them end it. */
  function answerQuery(res: ServerResponse, id: string | undefined) {
    const task = id ? tasks.get(id) : undefined;
    if (!task) return refuse(res, 404, 1203, 'The requested resource does not exist');
    task.polls++;
    if (task.status === 'submitted' || task.status === 'processing') {
      if (!knobs.hold && knobs.advance === undefined && task.polls >= knobs.pollsUntilDone) void end(task);
      else void move(task, 'processing');
    }
    return sendJson(res, 200, envelope(record(task)));
  }

  const finish = (id: string) => end(tasks.get(id)!);
  return { server, url: server.url, tasks, knobs, finish, authFailures, close: () => server.close() };
}

/** The images' size: the ratio at about 1 MP (1k) or 4 MP (2k), its longer side at most 1536 (1k) or 2880 (2k), sides in multiples of 16. */
function sizeOf(ratio: string, resolution: string): [number, number] {
  const [w, h] = ratio.split(':').map(Number);
  const shape = Math.max(w, h) / Math.min(w, h);
  const pixels = resolution === '2k' ? 2048 * 2048 : 1024 * 1024;
  const long = Math.min(resolution === '2k' ? 2880 : 1536, Math.round(Math.sqrt(pixels * shape) / 16) * 16);
  const short = Math.round(long / shape / 16) * 16;
  return w >= h ? [long, short] : [short, long];
}
