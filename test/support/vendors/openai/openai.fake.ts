import { createHash, randomBytes } from 'node:crypto';
import type { ServerResponse } from 'node:http';
import sharp from 'sharp';
import { sendJson, startServer, type TestServer } from '../../http-server.js';

/** The three sizes of the GPT image models before gpt-image-2. */
const FIXED_SIZES = ['1024x1024', '1536x1024', '1024x1536'];
/** What each model takes: gpt-image-2 any size within its rule, no transparency, no `input_fidelity` (always high). */
const MODELS: Record<string, { free: boolean; transparent: boolean; fidelity: boolean }> = {
  'gpt-image-1': { free: false, transparent: true, fidelity: true },
  'gpt-image-1-mini': { free: false, transparent: true, fidelity: false },
  'gpt-image-1.5': { free: false, transparent: true, fidelity: true },
  'gpt-image-2': { free: true, transparent: false, fidelity: false },
};
/** Shut down on 2026-05-12: they answer model_not_found. */
const GONE = ['dall-e-2', 'dall-e-3'];
/** Output image tokens by quality and shape (OpenAI's image generation guide, models before gpt-image-2). */
const OUTPUT_TOKENS: Record<string, [number, number]> = { low: [272, 400], medium: [1056, 1568], high: [4160, 6208], auto: [1056, 1568] };
const IMAGE_TYPES = ['image/png', 'image/jpeg', 'image/webp'];

/** A file part as the fake read it. */
export interface ReceivedFile {
  /** The part's name: `image`, `image[]` or `mask`. */
  field: string;
  filename: string;
  type: string;
  width: number;
  height: number;
  alpha: boolean;
  bytes: number;
}

export interface FakeOpenAIImages {
  server: TestServer;
  /** The base a client or a channel names: `…/v1`. */
  url: string;
  /**
   * Each create received (answered or refused), in OpenAI's own vocabulary: its path; a generation's JSON
   * `body`, an edit's form `fields` (strings, as multipart sends them) and `files`; and what was answered.
   */
  received: { path: string; body?: Record<string, unknown>; fields?: Record<string, string>; files?: ReceivedFile[]; status?: number; made?: { width: number; height: number; format: string; alpha: boolean }[]; streamed?: boolean }[];
  /**
   * `moderation`: creates refused by its safety system (400 moderation_blocked); `serverError`: the next
   * creates answer 500 server_error; `rateLimited`: the next creates answer 429 rate_limit_exceeded;
   * `insufficientQuota`: 429 insufficient_quota (the account's credit: waiting will not help); `unverified`:
   * 403, the organization is not verified for the GPT image models; `invalid`: the next create is refused as a
   * request its API does not take (400 invalid_request_error naming the parameter, as it refuses one);
   * `cutShort`: the next creates answer 200 as usual but each image's bytes cut off inside its header (a
   * corrupted answer: what a broken proxy or a truncated generation gives).
   */
  knobs: { moderation?: boolean; serverError?: number; rateLimited?: number; insufficientQuota?: boolean; unverified?: boolean; invalid?: { param: string; message: string }; cutShort?: number };
  authFailures: string[];
  close(): Promise<void>;
}

type Params = Record<string, unknown>;

/**
 * OpenAI's Images API for the GPT image models, from openai-node's `src/resources/images.ts` and OpenAI's
 * spec and image generation guide: `POST /v1/images/generations` (JSON) and `POST /v1/images/edits`
 * (multipart: `image` or `image[]` parts, up to 16, png/jpeg/webp — application/octet-stream refused; `mask`, a
 * PNG with alpha of the first image's size; fields as strings), both answered at once with `{created, data:
 * [{b64_json}], background, output_format, quality, size, usage}`, or, with `stream: true`, as server-sent
 * events (`image_generation.partial_image` × partial_images then `.completed`, per image; `image_edit.*` for
 * edits; no [DONE]); `GET /v1/models`. Its images are real, of the size asked (auto: 1024x1024, an edit's the
 * standard size nearest its first image's shape), in the asked format, transparent where asked. Errors as
 * `{error: {message, type, param, code}}` with an `x-request-id`.
 */
export async function startFakeOpenAIImages(apiKey: string): Promise<FakeOpenAIImages> {
  const received: FakeOpenAIImages['received'] = [];
  const authFailures: string[] = [];
  const knobs: FakeOpenAIImages['knobs'] = {};
  const fail = (res: ServerResponse, status: number, message: string, type: string, code: string | null, param: string | null = null, extra: Params = {}) => {
    res.setHeader('x-request-id', `req_${randomBytes(16).toString('hex')}`);
    sendJson(res, status, { error: { message, type, param, code, ...extra } });
  };
  const invalid = (res: ServerResponse, param: string, message: string, code: string | null = null) => fail(res, 400, message, 'invalid_request_error', code, param);

  const server = await startServer(async (req, res) => {
    const url = new URL(req.url ?? '/', 'http://x');
    const bearer = String(req.headers.authorization ?? '');
    if (bearer !== `Bearer ${apiKey}`) {
      authFailures.push(bearer);
      return fail(res, 401, `Incorrect API key provided: ${bearer.replace(/^Bearer /, '').slice(0, 6)}****. You can find your API key at https://platform.openai.com/account/api-keys.`, 'invalid_request_error', 'invalid_api_key');
    }
    if (req.method === 'GET' && url.pathname === '/v1/models') {
      const data = [...Object.keys(MODELS), 'gpt-4o', 'gpt-5'].map((id) => ({ id, object: 'model', created: 1_745_000_000, owned_by: 'system' }));
      return sendJson(res, 200, { object: 'list', data });
    }
    const kind = req.method === 'POST' && url.pathname === '/v1/images/generations' ? 'generation' : req.method === 'POST' && url.pathname === '/v1/images/edits' ? 'edit' : null;
    if (!kind) return fail(res, 404, `Invalid URL (${req.method} ${url.pathname})`, 'invalid_request_error', null);

    // the request as OpenAI reads it
    let params: Params;
    const entry: FakeOpenAIImages['received'][number] = { path: url.pathname };
    received.push(entry);
    const inputs: { file: ReceivedFile; bytes: Buffer }[] = [];
    let mask: { file: ReceivedFile; bytes: Buffer } | undefined;
    if (kind === 'generation') {
      if (!String(req.headers['content-type']).startsWith('application/json')) return invalid(res, 'body', 'The request body must be JSON.');
      try {
        params = JSON.parse(req.body.toString('utf8')) as Params;
      } catch {
        return invalid(res, 'body', 'We could not parse the JSON body of your request.');
      }
      entry.body = params;
    } else {
      if (!String(req.headers['content-type']).startsWith('multipart/form-data')) return invalid(res, 'body', "The edits endpoint takes multipart/form-data ('Content-Type: multipart/form-data').");
      const form = await new Request('http://x', { method: 'POST', headers: { 'content-type': String(req.headers['content-type']) }, body: req.body }).formData();
      const fields: Record<string, string> = {};
      entry.files = [];
      for (const [name, value] of form.entries()) {
        if (typeof value === 'string') {
          fields[name] = value;
          continue;
        }
        const bytes = Buffer.from(await value.arrayBuffer());
        const meta = await sharp(bytes)
          .metadata()
          .catch(() => null);
        const file: ReceivedFile = { field: name, filename: value.name, type: value.type, width: meta?.width ?? 0, height: meta?.height ?? 0, alpha: meta?.hasAlpha ?? false, bytes: bytes.length };
        entry.files.push(file);
        const param = name === 'mask' ? 'mask' : 'image';
        if (!IMAGE_TYPES.includes(value.type)) return invalid(res, param, `Invalid file '${param}': unsupported mimetype ('${value.type || 'application/octet-stream'}'). Supported file formats are 'image/jpeg', 'image/png', and 'image/webp'.`, 'unsupported_file_mimetype');
        if (!meta) return invalid(res, param, `Invalid file '${param}': the file could not be read as an image.`, 'invalid_image_file');
        if (name === 'image' || name === 'image[]') inputs.push({ file, bytes });
        else if (name === 'mask') mask = { file, bytes };
        else return invalid(res, name, `Unrecognized file parameter: ${name}.`, 'unknown_parameter');
      }
      entry.fields = fields;
      // multipart carries strings: OpenAI reads its numbers and booleans from them
      params = { ...fields };
      for (const key of ['n', 'partial_images', 'output_compression']) if (fields[key] !== undefined) params[key] = /^\d+$/.test(fields[key]) ? Number(fields[key]) : fields[key];
      if (fields.stream !== undefined) params.stream = fields.stream === 'true' ? true : fields.stream === 'false' ? false : fields.stream;
      if (fields.model === undefined) params.model = 'gpt-image-1.5';
    }

    // the model and its fields
    const modelId = params.model === undefined || params.model === null ? 'dall-e-2' : String(params.model);
    if (GONE.includes(modelId) || !MODELS[modelId]) return fail(res, 404, `The model \`${modelId}\` does not exist or you do not have access to it.`, 'invalid_request_error', 'model_not_found', 'model');
    const model = MODELS[modelId];
    if (typeof params.prompt !== 'string' || params.prompt.length === 0) return invalid(res, 'prompt', "Missing required parameter: 'prompt'.", 'missing_required_parameter');
    if (params.prompt.length > 32_000) return invalid(res, 'prompt', `Invalid 'prompt': string too long. Expected a string with maximum length 32000, but got a string with length ${params.prompt.length} instead.`, 'string_above_max_length');
    const n = params.n ?? 1;
    if (typeof n !== 'number' || !Number.isInteger(n) || n < 1 || n > 10) return invalid(res, 'n', `Invalid 'n': expected an integer between 1 and 10, got ${JSON.stringify(n)}.`, 'integer_out_of_range');
    const quality = String(params.quality ?? 'auto');
    if (!['low', 'medium', 'high', 'auto'].includes(quality)) return invalid(res, 'quality', `Invalid value: '${quality}'. Supported values are: 'low', 'medium', 'high', and 'auto'.`, 'invalid_value');
    const format = String(params.output_format ?? 'png');
    if (!['png', 'jpeg', 'webp'].includes(format)) return invalid(res, 'output_format', `Invalid value: '${format}'. Supported values are: 'png', 'jpeg', and 'webp'.`, 'invalid_value');
    const background = String(params.background ?? 'auto');
    if (!['transparent', 'opaque', 'auto'].includes(background)) return invalid(res, 'background', `Invalid value: '${background}'. Supported values are: 'transparent', 'opaque', and 'auto'.`, 'invalid_value');
    if (background === 'transparent' && !model.transparent) return invalid(res, 'background', `Transparent backgrounds are not supported for ${modelId}.`, 'invalid_value');
    if (background === 'transparent' && format === 'jpeg') return invalid(res, 'background', 'Transparent background requires output_format png or webp.', 'invalid_value');
    if (params.output_compression !== undefined && (typeof params.output_compression !== 'number' || params.output_compression < 0 || params.output_compression > 100)) return invalid(res, 'output_compression', 'output_compression must be an integer between 0 and 100.', 'integer_out_of_range');
    if (kind === 'generation' && params.moderation !== undefined && !['low', 'auto'].includes(String(params.moderation))) return invalid(res, 'moderation', `Invalid value: '${String(params.moderation)}'. Supported values are: 'low' and 'auto'.`, 'invalid_value');
    if (kind === 'edit' && params.moderation !== undefined) return invalid(res, 'moderation', 'Unrecognized request argument supplied: moderation', 'unknown_parameter');
    if (params.input_fidelity !== undefined && (kind === 'generation' || !model.fidelity || !['high', 'low'].includes(String(params.input_fidelity)))) return invalid(res, 'input_fidelity', `input_fidelity is not supported here (${modelId}).`, 'unsupported_parameter');
    const stream = params.stream ?? false;
    if (typeof stream !== 'boolean') return invalid(res, 'stream', 'stream must be a boolean.', 'invalid_type');
    const partials = params.partial_images ?? 0;
    if (typeof partials !== 'number' || !Number.isInteger(partials) || partials < 0 || partials > 3) return invalid(res, 'partial_images', 'partial_images must be an integer between 0 and 3.', 'integer_out_of_range');
    if (kind === 'edit') {
      if (inputs.length === 0) return invalid(res, 'image', "Missing required parameter: 'image'.", 'missing_required_parameter');
      if (inputs.length > 16) return invalid(res, 'image', `Too many images: at most 16, got ${inputs.length}.`, 'too_many_images');
      if (mask) {
        if (mask.file.type !== 'image/png' || !mask.file.alpha) return invalid(res, 'mask', 'Invalid mask image: the mask must be a PNG with an alpha channel.', 'invalid_mask_image');
        if (mask.file.width !== inputs[0].file.width || mask.file.height !== inputs[0].file.height) return invalid(res, 'mask', 'Invalid mask image: the mask and the image must be of the same size.', 'invalid_mask_image');
      }
    }
    const asked = String(params.size ?? 'auto');
    let size = asked;
    if (asked === 'auto') size = kind === 'edit' ? nearestFixed(inputs[0].file.width, inputs[0].file.height) : '1024x1024';
    else if (model.free ? !freeSizeOk(asked) : !FIXED_SIZES.includes(asked)) return invalid(res, 'size', `Invalid size '${asked}'. ${model.free ? 'Both sides must be multiples of 16, at most 3840, the long side at most 3 times the short one, 655,360 to 8,294,400 pixels.' : "Supported sizes are '1024x1024', '1024x1536', '1536x1024', and 'auto'."}`, 'invalid_size');

    // the account, then the request's content
    if (knobs.unverified) return fail(res, 403, `Your organization must be verified to use the model \`${modelId}\`. Please go to: https://platform.openai.com/settings/organization/general and click on Verify Organization. If you just verified, it can take up to 15 minutes for access to propagate.`, 'invalid_request_error', null);
    if (knobs.insufficientQuota) return fail(res, 429, 'You exceeded your current quota, please check your plan and billing details. For more information on this error, read the docs: https://platform.openai.com/docs/guides/error-codes/api-errors.', 'insufficient_quota', 'insufficient_quota');
    if ((knobs.rateLimited ?? 0) > 0) {
      knobs.rateLimited!--;
      return fail(res, 429, `Rate limit reached for ${modelId} in organization org-fake on images per minute (IPM): Limit 5, Used 5, Requested 1. Please try again in 12s.`, 'requests', 'rate_limit_exceeded');
    }
    if ((knobs.serverError ?? 0) > 0) {
      knobs.serverError!--;
      return fail(res, 500, 'The server had an error processing your request. Sorry about that! You can retry your request, or contact us through our help center at help.openai.com if you keep seeing this error.', 'server_error', null);
    }
    if (knobs.invalid) {
      const { param, message } = knobs.invalid;
      knobs.invalid = undefined;
      return invalid(res, param, message, 'invalid_value');
    }
    if (knobs.moderation) {
      const requestId = `req_${randomBytes(16).toString('hex')}`;
      return fail(res, 400, `Your request was rejected by the safety system. If you believe this is an error, contact us at help.openai.com and include the request ID ${requestId}. safety_violations=[sexual].`, 'image_generation_user_error', 'moderation_blocked', null, { moderation_details: { moderation_stage: 'input', categories: ['sexual'] } });
    }

    // the images
    const [width, height] = size.split('x').map(Number);
    const transparent = background === 'transparent';
    const made: Buffer[] = [];
    for (let i = 0; i < n; i++) made.push(await picture(width, height, `${String(params.prompt)}:${i}`, transparent, format, params.output_compression as number | undefined));
    entry.made = made.map(() => ({ width, height, format, alpha: transparent }));
    entry.status = 200;
    const resolved = { size, quality: quality === 'auto' ? 'medium' : quality, background: transparent ? 'transparent' : 'opaque', output_format: format };
    const outputTokens = (OUTPUT_TOKENS[quality] ?? OUTPUT_TOKENS.auto)[width === height ? 0 : 1] * n;
    const textTokens = Math.ceil(String(params.prompt).length / 4);
    const imageTokens = inputs.length * 323;
    const usage = { input_tokens: textTokens + imageTokens, input_tokens_details: { text_tokens: textTokens, image_tokens: imageTokens }, output_tokens: outputTokens, total_tokens: textTokens + imageTokens + outputTokens };
    const created = Math.floor(Date.now() / 1000);
    res.setHeader('x-request-id', `req_${randomBytes(16).toString('hex')}`);
    if ((knobs.cutShort ?? 0) > 0 && !stream) {
      knobs.cutShort!--;
      for (const [i, image] of made.entries()) made[i] = image.subarray(0, 20);
    }
    if (!stream) return sendJson(res, 200, { created, data: made.map((b) => ({ b64_json: b.toString('base64') })), ...resolved, usage: { ...usage, output_tokens_details: { image_tokens: outputTokens, text_tokens: 0 } } });

    // streamed: each image's partial images (rougher versions of it), then the image
    entry.streamed = true;
    const prefix = kind === 'edit' ? 'image_edit' : 'image_generation';
    res.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache' });
    const event = (type: string, data: Params) => res.write(`event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`);
    const echoed = { size: asked, quality, background, output_format: format };
    for (let i = 0; i < n; i++) {
      for (let k = 0; k < partials; k++) {
        const rough = await sharp(made[i]).blur(24 / (k + 1)).toFormat(format as 'png').toBuffer();
        event(`${prefix}.partial_image`, { b64_json: rough.toString('base64'), created_at: created, ...echoed, partial_image_index: k });
      }
      event(`${prefix}.completed`, { b64_json: made[i].toString('base64'), created_at: created, ...echoed, usage });
    }
    res.end();
  });
  return { server, url: `${server.url}/v1`, received, knobs, authFailures, close: () => server.close() };
}

/** gpt-image-2's rule (OpenAI's image generation guide). */
function freeSizeOk(size: string): boolean {
  const m = /^(\d+)x(\d+)$/.exec(size);
  if (!m) return false;
  const [w, h] = [Number(m[1]), Number(m[2])];
  return w % 16 === 0 && h % 16 === 0 && Math.max(w, h) <= 3840 && Math.max(w, h) <= 3 * Math.min(w, h) && w * h >= 655_360 && w * h <= 8_294_400;
}

/** The standard size whose shape is nearest a first image's (an edit's `auto`). */
function nearestFixed(width: number, height: number): string {
  const shape = width / height;
  return FIXED_SIZES.reduce((best, size) => {
    const [w, h] = size.split('x').map(Number);
    const [bw, bh] = best.split('x').map(Number);
    return Math.abs(Math.log(w / h / shape)) < Math.abs(Math.log(bw / bh / shape)) ? size : best;
  });
}

/** A real image: a colour of its words, a block in its middle (on a transparent background where asked: only the block is opaque). */
async function picture(width: number, height: number, words: string, transparent: boolean, format: string, compression: number | undefined): Promise<Buffer> {
  const hash = createHash('sha256').update(words).digest();
  const colour = (o: number) => ({ r: hash[o], g: hash[o + 1], b: hash[o + 2], alpha: 1 });
  const block = await sharp({ create: { width: Math.max(1, Math.round(width / 2)), height: Math.max(1, Math.round(height / 2)), channels: 4, background: colour(3) } })
    .png()
    .toBuffer();
  const image = sharp({ create: { width, height, channels: 4, background: transparent ? { r: 0, g: 0, b: 0, alpha: 0 } : colour(0) } }).composite([{ input: block, gravity: 'centre' }]);
  const quality = compression === undefined ? 90 : Math.max(1, compression);
  // opaque: no alpha channel at all, as OpenAI's opaque images
  if (!transparent) image.removeAlpha();
  if (format === 'jpeg') return image.flatten({ background: '#ffffff' }).jpeg({ quality }).toBuffer();
  if (format === 'webp') return image.webp({ quality }).toBuffer();
  return image.png().toBuffer();
}
