import type { ServerResponse } from 'node:http';
import sharp from 'sharp';
import { klingAccount } from './fake-upstreams.js';
import { sendBytes, sendJson, startServer, type TestServer } from './http-server.js';

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
