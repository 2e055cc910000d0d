import { randomUUID } from 'node:crypto';
import type { ServerResponse } from 'node:http';
import sharp from 'sharp';
import { sendBytes, sendJson, startServer, type TestServer } from '../../http-server.js';

/** What each model takes, from BFL's API reference: free sizes (their rule), an aspect ratio, input images, a mask. */
const MODELS: Record<string, { free?: { multipleOf: number; min: number; max: number; maxPixels: number }; ratio?: boolean; inputs: number; fill?: boolean; defaultSize: [number, number]; defaultFormat: 'jpeg' | 'png' }> = {
  'flux-2-pro': { free: { multipleOf: 16, min: 64, max: 2048, maxPixels: 2048 * 2048 }, inputs: 8, defaultSize: [1024, 1024], defaultFormat: 'jpeg' },
  'flux-2-max': { free: { multipleOf: 16, min: 64, max: 2048, maxPixels: 2048 * 2048 }, inputs: 8, defaultSize: [1024, 1024], defaultFormat: 'jpeg' },
  'flux-2-flex': { free: { multipleOf: 16, min: 64, max: 2048, maxPixels: 2048 * 2048 }, inputs: 8, defaultSize: [1024, 1024], defaultFormat: 'jpeg' },
  'flux-kontext-pro': { ratio: true, inputs: 1, defaultSize: [1024, 1024], defaultFormat: 'png' },
  'flux-pro-1.1': { free: { multipleOf: 32, min: 256, max: 1440, maxPixels: 1440 * 1440 }, inputs: 0, defaultSize: [1024, 768], defaultFormat: 'jpeg' },
  'flux-pro-1.0-fill': { fill: true, inputs: 0, defaultSize: [1024, 1024], defaultFormat: 'jpeg' },
};

export interface FakeBflTask {
  model: string;
  /** The body as sent, its Base64 images replaced by what they decode to. */
  body: Record<string, unknown>;
  /** The decoded input images (`input_image`, `input_image_2`, …; Fill's `image` and `mask`), by field. */
  inputs: Record<string, { width: number; height: number; format: string; white?: number }>;
  polls: number;
  /** The size and format it makes. */
  width: number;
  height: number;
  format: 'jpeg' | 'png';
  /** Webhook deliveries made for it (its end). */
  webhooks: number;
  /** Ended by `finish`, whatever the polls. */
  ended?: boolean;
}

export interface FakeBfl {
  server: TestServer;
  url: string;
  /** Creates taken, by BFL's id. */
  tasks: Map<string, FakeBflTask>;
  /** Every create received, answered or not: the model and the body (images as their sizes). */
  received: { model: string; body: Record<string, unknown> }[];
  /**
   * `pollsUntilReady`: polls answered Pending, then Generating, before the end; `fail`: tasks end in Error
   * after being taken; `moderate`: tasks end `Content Moderated` (or `Request Moderated`); `noCredit`: creates
   * answer 402; `busy`: the next N creates answer 429 (more than 24 active tasks); `pollingHost`: polling URLs
   * name this base instead of the fake's own; `webhookAnswer`: a create with a webhook_url answers `{id, status,
   * webhook_url}` without a polling_url (the OpenAPI's AsyncWebhookResponse).
   */
  knobs: { pollsUntilReady: number; fail?: boolean; moderate?: 'Content Moderated' | 'Request Moderated'; noCredit?: boolean; busy: number; pollingHost?: string; webhookAnswer?: boolean };
  /** BFL ends task `id` now, whatever the polls, and calls its webhook_url: resolves with the status the webhook was answered with. */
  finish(id: string): Promise<number | undefined>;
  authFailures: string[];
  close(): Promise<void>;
}

/** A validation error as FastAPI answers it (422). */
const invalid = (res: ServerResponse, field: string, msg: string) => sendJson(res, 422, { detail: [{ loc: ['body', field], msg, type: 'value_error' }] });

/**
 * Black Forest Labs' API, from its API reference (api.bfl.ai/openapi.json) and quick-start: `x-key` auth (403
 * `{"detail": "Not authenticated - Invalid Authentication"}` without it); `POST /v1/{model}` → `{id,
 * polling_url, cost, input_mp, output_mp}`; `GET /v1/get_result?id=` → `{id, status, result: {sample, prompt,
 * seed, start_time, end_time, duration} | null, progress, details}`, status Pending → Generating → Ready |
 * Error | Content Moderated | Request Moderated, `Task not found` for an id it does not have; the sample a
 * signed link (no auth) serving the image of the task's size; `GET /v1/credits` → `{credits}`; 402 without
 * credit, 422 FastAPI's `{detail: [{loc, msg, type}]}`, 429 more than 24 active tasks. A task's webhook_url is
 * called once it ends.
 */
export async function startFakeBfl(apiKey: string): Promise<FakeBfl> {
  const tasks = new Map<string, FakeBflTask>();
  const received: FakeBfl['received'] = [];
  const authFailures: string[] = [];
  const knobs: FakeBfl['knobs'] = { pollsUntilReady: 2, busy: 0 };
  const images = new Map<string, Buffer>();

  const server = await startServer(async (req, res) => {
    const url = new URL(req.url ?? '/', 'http://x');
    const delivery = /^\/delivery\/([\w-]+)\/sample\.(jpeg|png)$/.exec(url.pathname);
    if (req.method === 'GET' && delivery) {
      // a signed link: no key, as BFL's delivery hosts take none
      const task = tasks.get(delivery[1]);
      if (!task || url.searchParams.get('sig') !== 'ok') return sendJson(res, 403, { detail: 'the link is not valid' });
      const cached = images.get(delivery[1]) ?? (await render(task));
      images.set(delivery[1], cached);
      return sendBytes(res, `image/${task.format}`, cached);
    }
    if (req.headers['x-key'] !== apiKey) {
      authFailures.push(String(req.headers['x-key'] ?? req.headers.authorization ?? 'none'));
      return sendJson(res, 403, { detail: 'Not authenticated - Invalid Authentication' });
    }
    if (req.method === 'GET' && url.pathname === '/v1/credits') return sendJson(res, 200, { credits: 1234.5 });
    if (req.method === 'GET' && url.pathname === '/v1/get_result') return poll(res, url.searchParams.get('id') ?? '');
    const create = /^\/v1\/([\w.-]+)$/.exec(url.pathname);
    if (req.method !== 'POST' || !create) return sendJson(res, 404, { detail: 'Not Found' });
    const model = MODELS[create[1]];
    let body: Record<string, unknown>;
    try {
      body = JSON.parse(req.body.toString()) as Record<string, unknown>;
    } catch {
      return sendJson(res, 422, { detail: [{ loc: ['body'], msg: 'JSON decode error', type: 'json_invalid' }] });
    }
    const shown: Record<string, unknown> = { ...body };
    received.push({ model: create[1], body: shown });
    if (!model) return sendJson(res, 404, { detail: 'Not Found' });
    if (knobs.noCredit) return sendJson(res, 402, { detail: 'Insufficient credits. Please add credits at https://dashboard.bfl.ai' });
    if (knobs.busy > 0) {
      knobs.busy--;
      return sendJson(res, 429, { detail: 'You have exceeded the maximum number of active tasks (24). Please wait for a task to finish.' });
    }
    if (typeof body.prompt !== 'string' || !body.prompt) return invalid(res, 'prompt', 'Field required');
    // the decoded inputs: Base64 or a URL (a URL is not fetched here)
    const inputs: FakeBflTask['inputs'] = {};
    const names = model.fill ? ['image', 'mask'] : ['input_image', ...Array.from({ length: 7 }, (_, i) => `input_image_${i + 2}`)];
    for (const key of Object.keys(body).filter((k) => /^input_image(_\d+)?$|^image$|^mask$/.test(k))) {
      if (!names.includes(key) || names.indexOf(key) >= (model.fill ? 2 : model.inputs)) return invalid(res, key, `${create[1]} takes no ${key}`);
      const value = body[key];
      if (typeof value !== 'string' || /^data:/.test(value)) return invalid(res, key, 'must be a URL or Base64 of an image');
      const meta = await sharp(Buffer.from(value, 'base64')).metadata().catch(() => null);
      if (!meta?.width || !meta.height) return invalid(res, key, 'could not decode the image');
      const white = key === 'mask' ? await whiteShare(Buffer.from(value, 'base64')) : undefined;
      inputs[key] = { width: meta.width, height: meta.height, format: meta.format ?? '?', ...(white !== undefined ? { white } : {}) };
      shown[key] = `<${meta.format} ${meta.width}x${meta.height}>`;
    }
    if (model.fill && !inputs.image) return invalid(res, 'image', 'Field required');
    for (const field of ['width', 'height']) {
      if (body[field] === undefined) continue;
      const px = body[field];
      const rule = model.free;
      if (!rule) return invalid(res, field, `${create[1]} takes no ${field}`);
      if (typeof px !== 'number' || !Number.isInteger(px) || px % rule.multipleOf !== 0 || px < rule.min || px > rule.max) return invalid(res, field, `must be a multiple of ${rule.multipleOf} from ${rule.min} to ${rule.max}`);
    }
    if (model.free && typeof body.width === 'number' && typeof body.height === 'number' && body.width * body.height > model.free.maxPixels) return invalid(res, 'width', `width x height must be at most ${model.free.maxPixels} pixels`);
    if (body.aspect_ratio !== undefined) {
      const ratio = /^(\d+):(\d+)$/.exec(String(body.aspect_ratio));
      if (!model.ratio) return invalid(res, 'aspect_ratio', `${create[1]} takes no aspect_ratio`);
      if (!ratio || Number(ratio[1]) / Number(ratio[2]) > 21 / 9 + 1e-9 || Number(ratio[1]) / Number(ratio[2]) < 9 / 21 - 1e-9) return invalid(res, 'aspect_ratio', 'must be between 21:9 and 9:21');
    }
    if (body.seed !== undefined && !Number.isInteger(body.seed)) return invalid(res, 'seed', 'must be an integer');
    if (body.output_format !== undefined && !['jpeg', 'png'].includes(String(body.output_format))) return invalid(res, 'output_format', "must be 'jpeg' or 'png'");
    if (body.webhook_url !== undefined && (typeof body.webhook_url !== 'string' || !URL.canParse(body.webhook_url) || body.webhook_url.length > 2083)) return invalid(res, 'webhook_url', 'must be a URL of at most 2083 characters');
    for (const key of Object.keys(body)) {
      if (!['prompt', 'seed', 'output_format', 'webhook_url', 'webhook_secret', 'safety_tolerance', 'width', 'height', 'aspect_ratio', 'prompt_upsampling', 'steps', 'guidance', 'disable_pup', ...names].includes(key)) return invalid(res, key, 'Extra inputs are not permitted');
    }
    const [width, height] = sizeOf(model, body, inputs);
    const id = randomUUID();
    tasks.set(id, { model: create[1], body: shown, inputs, polls: 0, width, height, format: (body.output_format as 'jpeg' | 'png' | undefined) ?? model.defaultFormat, webhooks: 0 });
    const megapixels = Math.round((width * height) / 10_000) / 100;
    if (knobs.webhookAnswer && typeof body.webhook_url === 'string') return sendJson(res, 200, { id, status: 'Pending', webhook_url: body.webhook_url });
    return sendJson(res, 200, { id, polling_url: `${knobs.pollingHost ?? server.url}/v1/get_result?id=${id}`, cost: 3 + megapixels, input_mp: 0, output_mp: megapixels });
  });

  /** A poll: Pending, then Generating, until `pollsUntilReady`; then the task's end (a webhook sent once). */
  async function poll(res: ServerResponse, id: string) {
    const task = tasks.get(id);
    if (!task) return sendJson(res, 200, { id, status: 'Task not found', result: null, progress: null, details: null, preview: null });
    task.polls++;
    if (!task.ended && task.polls < knobs.pollsUntilReady) return sendJson(res, 200, { id, status: task.polls === 1 ? 'Pending' : 'Generating', result: null, progress: Math.min(0.9, task.polls / knobs.pollsUntilReady), details: null, preview: null });
    sendJson(res, 200, ending(id, task));
    await webhook(id, task);
  }

  /** The task's end, as a poll answers it and its webhook carries it. */
  function ending(id: string, task: FakeBflTask) {
    return knobs.moderate
      ? { id, status: knobs.moderate, result: null, progress: null, details: { 'Moderation Reasons': ['Derivative Works Filter'] }, preview: null }
      : knobs.fail
        ? { id, status: 'Error', result: null, progress: null, details: 'the generation failed', preview: null }
        : {
            id,
            status: 'Ready',
            result: { sample: `${server.url}/delivery/${id}/sample.${task.format}?sig=ok&se=${Date.now() + 600_000}`, prompt: task.body.prompt, seed: task.body.seed ?? 42, start_time: 1764201600, end_time: 1764201605, duration: 5 },
            progress: null,
            details: null,
            preview: null,
          };
  }

  /** The task's end POSTed to its webhook_url, once: the status it was answered with. */
  async function webhook(id: string, task: FakeBflTask): Promise<number | undefined> {
    if (typeof task.body.webhook_url !== 'string' || task.webhooks > 0) return undefined;
    task.webhooks++;
    return fetch(task.body.webhook_url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(ending(id, task)) })
      .then(async (r) => (await r.arrayBuffer(), r.status))
      .catch(() => undefined);
  }

  const finish = (id: string) => {
    const task = tasks.get(id)!;
    task.ended = true;
    return webhook(id, task);
  };
  return { server, url: server.url, tasks, received, knobs, finish, authFailures, close: () => server.close() };
}

/** The size a task makes: its width and height (free sizes), Kontext's ratio at about 1 MP, Fill's (or an edit's) input's, or the model's default. */
function sizeOf(model: (typeof MODELS)[string], body: Record<string, unknown>, inputs: FakeBflTask['inputs']): [number, number] {
  if (typeof body.width === 'number' && typeof body.height === 'number') return [body.width, body.height];
  const input = inputs.image ?? inputs.input_image;
  if (model.ratio && typeof body.aspect_ratio === 'string') {
    const [w, h] = body.aspect_ratio.split(':').map(Number);
    const width = Math.round(Math.sqrt((1024 * 1024 * w) / h) / 16) * 16;
    return [width, Math.round((width * h) / w / 16) * 16];
  }
  if (input) return [input.width, input.height];
  return model.defaultSize;
}

/** The image a task made: a flat picture of its size and format. */
function render(task: FakeBflTask): Promise<Buffer> {
  return sharp({ create: { width: task.width, height: task.height, channels: 3, background: { r: 200, g: 90, b: 40 } } })
    .toFormat(task.format)
    .toBuffer();
}

/** The share of a mask's pixels that are white (BFL paints there). */
async function whiteShare(bytes: Buffer): Promise<number> {
  const { data, info } = await sharp(bytes).greyscale().raw().toBuffer({ resolveWithObject: true });
  let white = 0;
  for (let i = 0; i < data.length; i += info.channels) if (data[i] > 127) white++;
  return Math.round((white / (data.length / info.channels)) * 100) / 100;
}
