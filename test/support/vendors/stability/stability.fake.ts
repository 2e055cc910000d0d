import { randomUUID } from 'node:crypto';
import type { ServerResponse } from 'node:http';
import sharp from 'sharp';
import { sendJson, startServer, type TestServer } from '../../http-server.js';

/** Its `aspect_ratio` values and the size Ultra and SD 3.5 make of each (~1 MP); Core makes them 1.5 times larger a side. */
const SIZES: Record<string, [number, number]> = {
  '1:1': [1024, 1024],
  '16:9': [1344, 768],
  '9:16': [768, 1344],
  '21:9': [1536, 640],
  '9:21': [640, 1536],
  '3:2': [1216, 832],
  '2:3': [832, 1216],
  '5:4': [1088, 896],
  '4:5': [896, 1088],
};
const SD3_MODELS = ['sd3.5-large', 'sd3.5-large-turbo', 'sd3.5-medium', 'sd3.5-flash'];
const PATHS = ['generate/ultra', 'generate/core', 'generate/sd3', 'edit/inpaint'];

export interface FakeStabilityImages {
  server: TestServer;
  url: string;
  /** Each call received: its path, its form fields, its image and mask as their sizes (the mask: the share of its pixels that are white), and what was answered. */
  received: { path: string; fields: Record<string, string>; image: { width: number; height: number; type: string; alpha: boolean } | null; mask: { width: number; height: number; white: number } | null; accept: string; status: number; made?: { width: number; height: number } }[];
  /**
   * `moderate`: 403 content_moderation; `filter`: 200 with a blurred image and `finish-reason: CONTENT_FILTERED`;
   * `fail`: 500; `busy`: 429; `noCredit`: 402 payment_required.
   */
  knobs: { moderate?: boolean; filter?: boolean; fail?: boolean; busy?: boolean; noCredit?: boolean };
  authFailures: string[];
  close(): Promise<void>;
}

/**
 * Stability AI's Stable Image API (v2beta), from its OpenAPI description: `POST
 * /v2beta/stable-image/generate/{ultra,core,sd3}` and `/edit/inpaint`, multipart only (`prompt` 1–10,000,
 * `negative_prompt`, `aspect_ratio` of nine, `seed` 0–4294967294, `output_format` png | jpeg | webp; sd3's
 * `model` and `mode`; Ultra's and sd3's `image` with `strength`, which keeps the input's shape; inpaint's
 * `image` and `mask`, white where it paints, else the image's alpha), answered synchronously with the image
 * (`accept: image/*`: raw bytes, `finish-reason` and `seed` headers); errors `{id, name, errors: [...]}` (400
 * bad_request, 401, 402 payment_required, 403 content_moderation, 429, 500); GET /v1/user/balance → {credits}.
 */
export async function startFakeStabilityImages(apiKey: string): Promise<FakeStabilityImages> {
  const received: FakeStabilityImages['received'] = [];
  const authFailures: string[] = [];
  const knobs: FakeStabilityImages['knobs'] = {};
  const error = (res: ServerResponse, status: number, name: string, errors: string[]) => sendJson(res, status, { id: randomUUID().replace(/-/g, ''), name, errors });
  const server = await startServer(async (req, res) => {
    const url = new URL(req.url ?? '/', 'http://x');
    if (req.headers.authorization !== `Bearer ${apiKey}`) {
      authFailures.push(req.headers.authorization ?? 'none');
      return error(res, 401, 'unauthorized', ['authorization: invalid or missing API key']);
    }
    if (req.method === 'GET' && url.pathname === '/v1/user/balance') return sendJson(res, 200, { credits: 42.5 });
    const path = url.pathname.replace(/^\/v2beta\/stable-image\//, '');
    if (req.method !== 'POST' || !url.pathname.startsWith('/v2beta/stable-image/') || !PATHS.includes(path)) return error(res, 404, 'not_found', [`${url.pathname}: not found`]);
    if (!String(req.headers['content-type']).startsWith('multipart/form-data')) return error(res, 400, 'bad_request', ['content-type: must be multipart/form-data']);
    const form = await new Request('http://x', { method: 'POST', headers: { 'content-type': String(req.headers['content-type']) }, body: req.body }).formData();
    const fields: Record<string, string> = {};
    const files: Record<string, { bytes: Buffer; type: string }> = {};
    for (const [name, value] of form.entries()) {
      if (typeof value === 'string') fields[name] = value;
      else files[name] = { bytes: Buffer.from(await value.arrayBuffer()), type: value.type };
    }
    const imageMeta = files.image ? await sharp(files.image.bytes).metadata().catch(() => null) : null;
    const maskMeta = files.mask ? await sharp(files.mask.bytes).metadata().catch(() => null) : null;
    const entry: FakeStabilityImages['received'][number] = {
      path,
      fields,
      image: imageMeta?.width && imageMeta.height ? { width: imageMeta.width, height: imageMeta.height, type: files.image.type, alpha: imageMeta.hasAlpha ?? false } : null,
      mask: maskMeta?.width && maskMeta.height ? { width: maskMeta.width, height: maskMeta.height, white: await whiteShare(files.mask.bytes) } : null,
      accept: String(req.headers.accept ?? ''),
      status: 200,
    };
    received.push(entry);
    const refuse = (status: number, name: string, errors: string[]) => {
      entry.status = status;
      return error(res, status, name, errors);
    };
    if (knobs.busy) return refuse(429, 'rate_limit_exceeded', ['You have exceeded the rate limit of 150 requests within a 10 second period']);
    if (knobs.noCredit) return refuse(402, 'payment_required', ['You lack sufficient credits to make this request. Please purchase more credits at https://platform.stability.ai/account/credits and try again.']);
    const bad = (field: string, words: string) => refuse(400, 'bad_request', [`${field}: ${words}`]);
    if (!fields.prompt || fields.prompt.length > 10_000) return bad('prompt', 'is required, 1 to 10000 characters');
    if (fields.negative_prompt !== undefined && fields.negative_prompt.length > 10_000) return bad('negative_prompt', 'at most 10000 characters');
    if (fields.seed !== undefined && (!/^\d+$/.test(fields.seed) || Number(fields.seed) > 4_294_967_294)) return bad('seed', 'must be an integer from 0 to 4294967294');
    if (fields.output_format !== undefined && !['png', 'jpeg', 'webp'].includes(fields.output_format)) return bad('output_format', 'must be png, jpeg or webp');
    if (fields.aspect_ratio !== undefined && !SIZES[fields.aspect_ratio]) return bad('aspect_ratio', `must be one of ${Object.keys(SIZES).join(', ')}`);
    if ((files.image && !entry.image) || (files.mask && !entry.mask)) return bad(files.image && !entry.image ? 'image' : 'mask', 'could not be decoded');
    if (entry.image && Math.min(entry.image.width, entry.image.height) < 64) return bad('image', 'must be at least 64 pixels a side');
    const strength = fields.strength === undefined ? undefined : Number(fields.strength);
    if (strength !== undefined && !(strength >= 0 && strength <= 1)) return bad('strength', 'must be from 0 to 1');
    if (path === 'generate/sd3') {
      if (fields.model !== undefined && !SD3_MODELS.includes(fields.model)) return bad('model', `must be one of ${SD3_MODELS.join(', ')}`);
      const mode = fields.mode ?? 'text-to-image';
      if (mode === 'image-to-image' ? !entry.image || strength === undefined : entry.image) return bad('mode', 'image-to-image needs image and strength; text-to-image takes neither');
    }
    if (path === 'generate/ultra' && entry.image && strength === undefined) return bad('strength', 'is required with an image');
    if (path === 'generate/core' && (files.image || fields.strength)) return bad('image', 'core takes no image');
    if (path === 'edit/inpaint') {
      if (!entry.image) return bad('image', 'is required');
      if (!entry.mask && !entry.image.alpha) return bad('mask', 'is required when the image has no alpha channel');
      if (fields.aspect_ratio !== undefined) return bad('aspect_ratio', 'inpaint takes none');
    } else if (files.mask) return bad('mask', 'only inpaint takes one');
    if (knobs.moderate) return refuse(403, 'content_moderation', ['Your request was flagged by our content moderation system, as a result your request was denied and you were not charged.']);
    if (knobs.fail) return refuse(500, 'internal_error', ['An unexpected server error has occurred, please try again later.']);
    // the size: an input's (image-to-image and inpaint keep it), else the ratio's at the model's size
    const [w, h] = entry.image ? [entry.image.width, entry.image.height] : SIZES[fields.aspect_ratio ?? '1:1'].map((px) => (path === 'generate/core' ? px * 1.5 : px));
    const format = (fields.output_format ?? 'png') as 'png' | 'jpeg' | 'webp';
    let image = sharp({ create: { width: w, height: h, channels: 3, background: { r: 60, g: 140, b: 90 } } });
    if (knobs.filter) image = image.blur(20);
    entry.made = { width: w, height: h };
    res.writeHead(200, { 'content-type': `image/${format}`, 'finish-reason': knobs.filter ? 'CONTENT_FILTERED' : 'SUCCESS', seed: fields.seed ?? '343940597', 'x-request-id': randomUUID() });
    res.end(await image.toFormat(format).toBuffer());
  });
  return { server, url: server.url, received, knobs, authFailures, close: () => server.close() };
}

/** The share of a mask's pixels that are white (Stability paints there). */
async function whiteShare(bytes: Buffer): Promise<number> {
  const { data, info } = await sharp(bytes).greyscale().raw().toBuffer({ resolveWithObject: true });
  let white = 0;
  for (let i = 0; i < data.length; i += info.channels) if (data[i] > 127) white++;
  return Math.round((white / (data.length / info.channels)) * 100) / 100;
}

/** A fake Stability account's outpaint (the expand operation): what it received and how it misbehaves. */
export interface FakeStability {
  server: TestServer;
  url: string;
  /** Each outpaint received: its form fields (the image as its size) and what was answered. */
  received: { fields: Record<string, string>; image: { width: number; height: number; type: string } | null; status: number }[];
  /** `moderate`: 403 content_moderation; `fail`: 500; `busy`: 429; `reset`: the connection closed once the outpaint was read (its answer lost). */
  knobs: { moderate?: boolean; fail?: boolean; busy?: boolean; reset?: boolean };
  authFailures: string[];
  close(): Promise<void>;
}

const STABILITY_MAX_MARGIN = 2000;

/**
 * Stability AI's outpaint, from its OpenAPI description: POST /v2beta/stable-image/edit/outpaint, multipart
 * (image; left, right, up, down 0–2000, at least one above 0; prompt up to 10,000; output_format png | jpeg |
 * webp), answered synchronously with the image (`accept: image/*`: raw bytes, `finish-reason` and `seed`
 * headers) of the input's size plus the margins; errors `{id, name, errors: [...]}` (400 bad_request, 401,
 * 403 content_moderation, 429, 500); GET /v1/user/balance → {credits}.
 */
export async function startFakeStability(apiKey: string): Promise<FakeStability> {
  const received: FakeStability['received'] = [];
  const authFailures: string[] = [];
  const knobs: FakeStability['knobs'] = {};
  const error = (res: ServerResponse, status: number, name: string, errors: string[]) => sendJson(res, status, { id: randomUUID().replace(/-/g, ''), name, errors });
  const server = await startServer(async (req, res) => {
    const url = new URL(req.url ?? '/', 'http://x');
    if (req.headers.authorization !== `Bearer ${apiKey}`) {
      authFailures.push(req.headers.authorization ?? 'none');
      return error(res, 401, 'unauthorized', ['authorization: invalid or missing API key']);
    }
    if (req.method === 'GET' && url.pathname === '/v1/user/balance') return sendJson(res, 200, { credits: 42.5 });
    if (req.method !== 'POST' || url.pathname !== '/v2beta/stable-image/edit/outpaint') return error(res, 404, 'not_found', [`${url.pathname}: not found`]);
    if (!String(req.headers['content-type']).startsWith('multipart/form-data')) return error(res, 400, 'bad_request', ['content-type: must be multipart/form-data']);
    const form = await new Request('http://x', { method: 'POST', headers: { 'content-type': String(req.headers['content-type']) }, body: req.body }).formData();
    const fields: Record<string, string> = {};
    let image: FakeStability['received'][number]['image'] = null;
    let bytes: Buffer | null = null;
    for (const [name, value] of form.entries()) {
      if (typeof value === 'string') fields[name] = value;
      else if (name === 'image') {
        bytes = Buffer.from(await value.arrayBuffer());
        const meta = await sharp(bytes).metadata().catch(() => null);
        image = meta?.width && meta.height ? { width: meta.width, height: meta.height, type: value.type } : null;
      }
    }
    const entry = { fields, image, status: 200 };
    received.push(entry);
    if (knobs.reset) {
      entry.status = 0;
      return void req.socket.destroy();
    }
    const refuse = (status: number, name: string, errors: string[]) => {
      entry.status = status;
      return error(res, status, name, errors);
    };
    if (knobs.busy) return refuse(429, 'rate_limit_exceeded', ['You have exceeded the rate limit of 150 requests within a 10 second period']);
    if (!bytes || !image) return refuse(400, 'bad_request', ['image: is required (jpeg, png or webp)']);
    const margins: Record<string, number> = {};
    for (const side of ['left', 'right', 'up', 'down']) {
      const raw = fields[side] ?? '0';
      const px = Number(raw);
      if (!/^\d+$/.test(raw) || px > STABILITY_MAX_MARGIN) return refuse(400, 'bad_request', [`${side}: must be an integer from 0 to ${STABILITY_MAX_MARGIN}`]);
      margins[side] = px;
    }
    if (Object.values(margins).every((px) => px === 0)) return refuse(400, 'bad_request', ['left, right, up, down: at least one must be greater than 0']);
    if (fields.prompt !== undefined && fields.prompt.length > 10_000) return refuse(400, 'bad_request', ['prompt: must be at most 10000 characters']);
    if (fields.output_format !== undefined && !['png', 'jpeg', 'webp'].includes(fields.output_format)) return refuse(400, 'bad_request', ['output_format: must be png, jpeg or webp']);
    const { width, height } = image;
    if (Math.min(width, height) < 64 || width * height < 4096 || width * height > 9_437_184 || Math.max(width / height, height / width) > 2.5) return refuse(400, 'bad_request', ['image: must be 64 px a side, 4,096 to 9,437,184 pixels, aspect ratio within 1:2.5 and 2.5:1']);
    if (knobs.moderate) return refuse(403, 'content_moderation', ['Your request was flagged by our content moderation system, as a result your request was denied and you were not charged.']);
    if (knobs.fail) return refuse(500, 'internal_error', ['An unexpected server error has occurred, please try again later.']);
    const format = (fields.output_format ?? 'png') as 'png' | 'jpeg' | 'webp';
    const out = await sharp({ create: { width: width + margins.left + margins.right, height: height + margins.up + margins.down, channels: 3, background: { r: 90, g: 120, b: 160 } } })
      .composite([{ input: bytes, left: margins.left, top: margins.up }])
      .toFormat(format)
      .toBuffer();
    res.writeHead(200, { 'content-type': `image/${format}`, 'finish-reason': 'SUCCESS', seed: '343940597', 'x-request-id': randomUUID() });
    res.end(out);
  });
  return { server, url: server.url, received, knobs, authFailures, close: () => server.close() };
}
