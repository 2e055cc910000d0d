import { isIP } from 'node:net';
import { Injectable } from '@nestjs/common';
import { z } from 'zod';
import { UpstreamClient, UpstreamRefused } from '../../infra/relay/upstream-client.js';
import { COMMON_IMAGE_RATIOS, IMAGE_RESOLUTIONS, type ImageModelSpec, type ImageRequest, shapeOf, sidesOf } from '../contracts/image-request.js';
import type { ImageAnswer, ImageCreate, ImageInput, ImageStatus, ImageVendor } from '../contracts/image-vendor.js';
import { paintedWhite } from '../contracts/image-mask.js';
import { UnusableAnswer, type VendorAccount } from '../contracts/vendor.js';
import { readAnswer } from '../contracts/vendor-answer.js';
import { BFL } from './bfl.vendor.js';

/**
 * BFL publishes no prompt limit (its schemas set no maxLength; FLUX.2 reads up to 32K tokens, FLUX.1 reads
 * the first 512 and refuses none): OpenAI's, 32,000 characters, so that no prompt a door takes is refused for its length.
 */
const MAX_PROMPT_CHARS = 32_000;

/** Its inpainting model: an edit with a mask (white where it paints), no generation. */
const FILL = 'flux-pro-1.0-fill';

function flux(id: string, over: Partial<ImageModelSpec>): ImageModelSpec {
  return {
    id,
    aspectRatios: [...COMMON_IMAGE_RATIOS],
    resolutions: ['1k'],
    qualities: [],
    // BFL has no `n`: one task makes one image, and an image task holds one upstream task (one upstreamId)
    maxN: 1,
    transparent: false,
    maxReferences: 0,
    maxEditImages: 0,
    mask: false,
    seed: true,
    negativePrompt: false,
    maxPromptChars: MAX_PROMPT_CHARS,
    ...over,
  };
}

/**
 * FLUX.2 takes any size of 64 px a side or more in multiples of 16, up to 4 MP (2048x2048, its documented
 * largest; no larger side is promised), and up to 8 input images (references of a generation, or the images
 * it edits as the prompt says, without a mask).
 */
const FLUX_2 = { sizes: 'any', sizeRule: { multipleOf: 16, minSide: 64, maxSide: 2048, maxPixels: 2048 * 2048 }, resolutions: ['1k', '2k'], maxReferences: 8, maxEditImages: 8 } as const;

/**
 * BFL's FLUX models, as its API reference (docs.bfl.ai, api.bfl.ai/openapi.json) gives them: FLUX.2 [pro],
 * [max] and [flex] (free sizes); FLUX.1 Kontext [pro] (an aspect ratio from 21:9 to 9:21 at about 1 MP, one
 * input image it follows or edits); FLUX1.1 [pro] (256 to 1440 px a side in multiples of 32, no input
 * image here: its `image_prompt` is Redux, not a reference); FLUX.1 Fill [pro] (an edit with a mask). Fill
 * comes last and makes no more than Kontext for a generation: the contract cannot say "edits only", and a
 * channel's first model that makes a request serves it, so a generation never reaches Fill unless a
 * channel lists Fill alone (then it is refused).
 */
export const BFL_IMAGE_MODELS: readonly ImageModelSpec[] = [
  flux('flux-2-pro', FLUX_2),
  flux('flux-2-max', FLUX_2),
  flux('flux-2-flex', FLUX_2),
  flux('flux-kontext-pro', { maxReferences: 1, maxEditImages: 1 }),
  flux('flux-pro-1.1', { sizes: 'any', sizeRule: { multipleOf: 32, minSide: 256, maxSide: 1440, maxPixels: 1440 * 1440 } }),
  flux(FILL, { maxEditImages: 1, mask: true }),
];

/** BFL's answer to a create (`AsyncResponse`: `{id, polling_url}`; `AsyncWebhookResponse` with a webhook_url: `{id, status, webhook_url}`). */
const CREATED = z.object({ id: z.string().min(1), polling_url: z.string().nullish() });

/** BFL's answer to a poll of its polling_url (`GET /v1/get_result?id=`: `ResultResponse`): its status, its result's `sample`, its `details`. */
const RESULT = z.object({ status: z.string(), result: z.looseObject({ sample: z.unknown().optional() }).nullish().catch(null), details: z.unknown().optional() });

/** FastAPI's `HTTPValidationError` (BFL's 422): `{detail: [{loc, msg, type}]}`; an item or field of another shape is read as empty. */
const VALIDATION_ERROR = z.object({
  detail: z.array(z.object({ loc: z.array(z.union([z.string(), z.number()])).optional().catch(undefined), msg: z.string().optional().catch(undefined) }).catch({})),
});

/** A create mapped out for BFL: the model's path (`/v1/{model}`) and its JSON body. */
export interface BflCall {
  path: string;
  body: Record<string, unknown>;
}

/**
 * The normalized request as BFL takes it: `prompt`, the input images (`input_image`, `input_image_2`, … in Base64;
 * Fill's `image` and `mask`, the mask already painted white where it paints), the size fields of the model, `seed`,
 * `output_format` (PNG unless a JPEG was asked) and `webhook_url`. Fill makes no generation: refused here.
 */
export function bflCall(model: ImageModelSpec, request: ImageRequest, images: ImageInput[], paintedMask: Buffer | undefined, callbackUrl: string | undefined): BflCall {
  if (model.id === FILL && request.mode !== 'edit') throw new UpstreamRefused(`${FILL} only edits an image (with a mask): it makes no generation`, 0, 'request', true);
  return {
    path: `/v1/${model.id}`,
    body: {
      prompt: request.prompt,
      ...(model.id === FILL ? fillInputs(images[0], paintedMask) : inputImages(images)),
      ...sizeFields(model, request),
      ...(request.seed !== undefined ? { seed: request.seed } : {}),
      // the relay converts into the asked format: a lossless PNG unless a JPEG was asked anyway
      output_format: request.outputFormat === 'jpeg' ? 'jpeg' : 'png',
      ...(callbackUrl ? { webhook_url: callbackUrl } : {}),
    },
  };
}

/**
 * The task a create answered, as the upstream id kept: its `polling_url` (with a webhook_url BFL may answer none:
 * its documented result path on the channel's host), which must be the channel's own service (the key goes there).
 */
export function bflCreated(json: unknown, baseUrl: string): string {
  const answer = readAnswer(CREATED, json, 'the create request');
  const pollingUrl = answer.polling_url || `${baseUrl}/v1/get_result?id=${encodeURIComponent(answer.id)}`;
  if (!sameService(baseUrl, pollingUrl)) throw new UnusableAnswer('the upstream answered a polling_url outside its own domain: the key is not sent there');
  return pollingUrl;
}

/**
 * Black Forest Labs' API: `POST /v1/{model}` (x-key) answers `{id, polling_url}`, and the task is asked
 * about at that polling_url, which is kept as the upstream id (BFL: "always poll the returned polling_url",
 * as the global host routes each task to a cluster of its own). Its states: Pending, Reasoning, Generating
 * (working); Ready, with `result.sample`, a signed link valid 10 minutes that the relay downloads at once;
 * Request Moderated and Content Moderated (its moderation, of the prompt and inputs or of the image); Error,
 * Failed, and Task not found (expired). One image per task (no `n`). Errors: 402 out of credits, 403 a
 * refused key, 422 a refused request (FastAPI's `detail` list), 429 more than 24 active tasks on the account
 * (busy: nothing was made), 503 maintenance or load. It keeps no id of ours: a create whose answer was lost
 * is never sent again. With a callback URL it is sent as `webhook_url` (BFL then calls it once the task ends;
 * its body is not read: it makes the poll come now).
 */
@Injectable()
export class BflImageVendor implements ImageVendor {
  static readonly protocol = BFL.protocol;
  static readonly models = BFL_IMAGE_MODELS;
  readonly protocol = BflImageVendor.protocol;
  readonly models = BFL_IMAGE_MODELS;
  readonly minPollS = BFL.pollFloorS;

  constructor(private readonly client: UpstreamClient) {}

  async create(account: VendorAccount, create: ImageCreate): Promise<ImageAnswer> {
    const { model, request, callbackUrl } = create;
    const images = request.images > 0 && (model.id !== FILL || request.mode === 'edit') ? await create.images() : [];
    const mask = model.id === FILL && images[0] && request.mask ? await create.mask() : undefined;
    const painted = mask && images[0] ? await paintedWhite(mask, images[0]) : undefined;
    const asked = bflCall(model, request, images, painted, callbackUrl);
    const answer = await this.client.call('POST', `${account.baseUrl}${asked.path}`, { body: asked.body, auth: account.auth, refusal: bflRefusal, failFast: true });
    return { upstreamId: bflCreated(answer.json, account.baseUrl), status: { state: 'working' } };
  }

  async query(account: VendorAccount, upstreamId: string, once: boolean): Promise<ImageStatus> {
    // the key goes only where the channel's own host is (the polling_url was checked when it came; the channel's address may have changed since)
    if (!sameService(account.baseUrl, upstreamId)) return { state: 'failed', reason: "the task's polling_url is not on the channel's upstream any more" };
    let task: unknown;
    try {
      task = (await this.client.call('GET', upstreamId, { auth: account.auth, refusal: bflRefusal, idempotent: true, once })).json;
    } catch (err) {
      if (err instanceof UpstreamRefused && err.status === 404) return { state: 'failed', reason: 'the upstream no longer has the task (Task not found)' };
      throw err;
    }
    return bflStatus(task);
  }
}

/** Reference images (or the images an edit changes) as `input_image`, `input_image_2`, …: Base64 of their bytes. */
function inputImages(images: ImageInput[]): Record<string, string> {
  return Object.fromEntries(images.map((image, i) => [i === 0 ? 'input_image' : `input_image_${i + 1}`, image.bytes.toString('base64')]));
}

/**
 * Fill's `image` and `mask` (Base64). BFL's mask is white where it paints and black where it keeps; the
 * door's is OpenAI's, transparent where the image changes: given here already painted (`paintedWhite`).
 */
function fillInputs(image: ImageInput | undefined, painted: Buffer | undefined): Record<string, string> {
  if (!image) throw new UpstreamRefused(`${FILL} needs the image it edits`, 0, 'request', true);
  return { image: image.bytes.toString('base64'), ...(painted ? { mask: painted.toString('base64') } : {}) };
}

/**
 * The size fields of a model: a free-size model's `width` and `height` (the asked size; else the asked
 * shape and class at about 1 MP for 1k, the most the model makes for 2k; else none, so that BFL picks: an
 * input image's size, or its default); Kontext's `aspect_ratio` (the asked one, or the asked size's shape);
 * none for Fill, which keeps its input's size.
 */
export function sizeFields(model: ImageModelSpec, request: ImageRequest): Record<string, unknown> {
  if (model.sizes === 'any' && model.sizeRule) {
    if (request.size) return sidesOf(request.size);
    if (!request.aspectRatio && !request.resolution) return {};
    return freeSize(request.aspectRatio ?? '1:1', request.resolution ?? '1k', model.sizeRule);
  }
  if (model.id === FILL) return {};
  if (request.size) {
    const { width, height } = sidesOf(request.size);
    return { aspect_ratio: shapeOf(width, height, model.aspectRatios) };
  }
  return request.aspectRatio ? { aspect_ratio: request.aspectRatio } : {};
}

/**
 * A free size of a shape and class: its longer side as a square of the class's pixels would have it (1k:
 * 1 MP; 2k: 4 MP), held under the class's longest side, the rule's longest side and its pixels, both sides
 * multiples of the rule's (the shorter rounded to the nearest, so the shape stays within 2 %).
 */
export function freeSize(ratio: string, resolution: string, rule: NonNullable<ImageModelSpec['sizeRule']>): { width: number; height: number } {
  const [w, h] = ratio.split(':').map(Number);
  const shape = Math.max(w, h) / Math.min(w, h);
  const pixels = Math.min(rule.maxPixels, resolution === '1k' ? 1024 * 1024 : 2048 * 2048);
  const m = rule.multipleOf;
  const cap = Math.min(rule.maxSide, IMAGE_RESOLUTIONS[resolution] ?? rule.maxSide);
  let long = Math.floor(Math.min(cap, Math.sqrt(pixels * shape)) / m) * m;
  const shortOf = (l: number) => Math.max(rule.minSide, Math.round(l / shape / m) * m);
  while (long * shortOf(long) > rule.maxPixels) long -= m;
  return w >= h ? { width: long, height: shortOf(long) } : { width: shortOf(long), height: long };
}

/**
 * Whether a polling URL is the channel's upstream's (its host, or a host of the same domain, as
 * api.us1.bfl.ai is api.bfl.ai's), over the same scheme or HTTPS: the account's key is sent with each poll.
 */
export function sameService(baseUrl: string, url: string): boolean {
  if (!URL.canParse(url) || !URL.canParse(baseUrl)) return false;
  const base = new URL(baseUrl);
  const target = new URL(url);
  if ((target.protocol !== base.protocol && target.protocol !== 'https:') || target.username || target.password) return false;
  if (target.hostname === base.hostname) return true;
  const domain = (host: string) => host.split('.').slice(-2).join('.');
  return !isIP(base.hostname) && !isIP(target.hostname) && base.hostname.includes('.') && domain(target.hostname) === domain(base.hostname);
}

/** A task's state, as its poll answers it. */
export function bflStatus(json: unknown): ImageStatus {
  const task = readAnswer(RESULT, json, 'the poll');
  switch (task.status) {
    case 'Ready': {
      const sample = task.result?.sample;
      return typeof sample === 'string' && sample ? { state: 'succeeded', images: [{ url: sample }] } : { state: 'failed', reason: 'the upstream reported the task ready without a sample (result.sample)' };
    }
    case 'Request Moderated':
    case 'Content Moderated':
      return { state: 'failed', reason: `${task.status}${detailsOf(task.details)}` };
    case 'Error':
    case 'Failed':
      return { state: 'failed', reason: `the task ended in ${task.status}${detailsOf(task.details)}` };
    case 'Task not found':
      return { state: 'failed', reason: 'the upstream no longer has the task (Task not found)' };
    default:
      // Pending, Reasoning, Generating, and any in-progress state BFL adds (it added the last two): the task's deadline ends one that never ends
      return { state: 'working' };
  }
}

/** BFL's `details` in a few words: `{"Moderation Reasons": ["…"]}` or a sentence. */
function detailsOf(details: unknown): string {
  if (typeof details === 'string' && details) return `: ${details.slice(0, 300)}`;
  if (typeof details !== 'object' || details === null) return '';
  const parts = Object.entries(details as Record<string, unknown>)
    .map(([key, value]) => (Array.isArray(value) ? `${key}: ${value.map(String).join(', ')}` : typeof value === 'string' || typeof value === 'number' ? `${key}: ${value}` : ''))
    .filter(Boolean);
  return parts.length ? ` (${parts.join('; ').slice(0, 300)})` : '';
}

/**
 * BFL's refusals in its own words: FastAPI's 422 `{"detail": [{loc, msg}]}`, which the generic reading
 * cannot put into words (a 402, 403 and 429 read as their statuses say: credit, key, busy).
 */
export function bflRefusal(status: number, json: Record<string, unknown>): UpstreamRefused | undefined {
  const invalid = status === 400 || status === 422 ? VALIDATION_ERROR.safeParse(json) : undefined;
  if (!invalid?.success) return undefined;
  const words = invalid.data.detail
    .map((d) => `${d.loc ? `${d.loc.filter((l) => l !== 'body').join('.')}: ` : ''}${d.msg ?? ''}`)
    .filter(Boolean)
    .join('; ');
  return new UpstreamRefused(words || `HTTP ${status}`, status, 'request');
}
