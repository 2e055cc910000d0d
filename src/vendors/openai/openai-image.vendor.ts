import { Injectable } from '@nestjs/common';
import { SYNC_GENERATION_TIMEOUT_MS, UpstreamBusy, UpstreamClient, UpstreamUnavailable } from '../../infra/relay/upstream-client.js';
import { COMMON_IMAGE_RATIOS, type ImageModelSpec, type ImageRequest, shapeOf, sidesOf } from '../contracts/image-request.js';
import type { ImageAnswer, ImageCreate, ImageInput, ImageVendor, VendorImage } from '../contracts/image-vendor.js';
import { UnusableAnswer, type VendorAccount } from '../contracts/vendor.js';
import { OPENAI, openaiRefusal } from './openai.vendor.js';

/** The three sizes of the GPT image models before gpt-image-2 (`auto` is left out: not asking is asking for it). */
const FIXED_SIZES = ['1024x1024', '1536x1024', '1024x1536'] as const;

/** gpt-image-2's free sizes (OpenAI's image generation guide): sides multiples of 16, at most 3840, 655,360 to 8,294,400 pixels, shapes up to 3:1. */
const FREE = { multipleOf: 16, maxSide: 3840, minPixels: 655_360, maxPixels: 8_294_400, maxShape: 3 };
/** The longer side gpt-image-2 is asked for when only a shape and a class are (the contract's classes; 4k is its 3840). */
const FREE_LONG_SIDE: Record<string, number> = { '1k': 1024, '2k': 2048, '4k': 3840 };

function gptImage(id: string, over: Partial<ImageModelSpec> = {}): ImageModelSpec {
  return {
    id,
    sizes: FIXED_SIZES,
    aspectRatios: ['1:1', '3:2', '2:3'],
    resolutions: ['1k'],
    qualities: ['low', 'medium', 'high'],
    maxN: 10,
    transparent: true,
    // a generation with reference images goes to /images/edits without a mask, as OpenAI's own guide does
    maxReferences: 16,
    maxEditImages: 16,
    mask: true,
    seed: false,
    negativePrompt: false,
    // it streams them, but the UpstreamClient reads an answer only once it is whole: none are handed on (see the class)
    partials: false,
    maxPromptChars: 32_000,
    ...over,
  };
}

/**
 * OpenAI's GPT image models (openai-node `src/resources/images.ts`, OpenAI's image generation guide):
 * gpt-image-1, gpt-image-1-mini and gpt-image-1.5 make three sizes, transparent where asked; gpt-image-2 makes
 * any size within its rule (the rule's bounds the contract cannot say, the fewest pixels and the 3:1 shape, are
 * met here by asking for the nearest size it makes: the gateway fits its images to the asked size) and no
 * transparent background (the guide: "doesn't currently support transparent backgrounds"; openai-node's HEAD
 * says "preview": the guide is followed). dall-e-2 and dall-e-3 are left out: OpenAI shut them down on
 * 2026-05-12 (the SDK's types still name them).
 */
export const OPENAI_IMAGE_MODELS: readonly ImageModelSpec[] = [
  gptImage('gpt-image-1'),
  gptImage('gpt-image-1-mini'),
  gptImage('gpt-image-1.5'),
  gptImage('gpt-image-2', {
    sizes: 'any',
    sizeRule: { multipleOf: FREE.multipleOf, minSide: FREE.multipleOf, maxSide: FREE.maxSide, maxPixels: FREE.maxPixels },
    aspectRatios: [...COMMON_IMAGE_RATIOS],
    resolutions: ['1k', '2k', '4k'],
    transparent: false,
  }),
];

/** An answer of up to 10 images as Base64 PNG in JSON (a high-quality 1536x1024 PNG is a few MB). */
const RESULT_MAX_BYTES = 96 * 1024 * 1024;

interface ImagesResponse {
  data?: { b64_json?: unknown; url?: unknown; revised_prompt?: unknown }[] | null;
}

/**
 * OpenAI's Images API, synchronous: `POST /images/generations` (JSON: model, prompt, n, size, quality,
 * background, output_format) answers `{data: [{b64_json}]}`; `POST /images/edits` (multipart: `image[]` parts,
 * `mask`, the same fields as strings) changes the input images, the mask applying to the first. A generation
 * with reference images is sent as an edit without a mask, as OpenAI's guide does. Its images are always asked
 * for as PNG: lossless (a transparent background kept), the gateway converts them once into the asked format.
 * Not streamed: OpenAI streams partial images as server-sent events (`stream: true, partial_images`), but the
 * UpstreamClient hands on an answer only once it is whole, so partial images would come with the final ones,
 * at 100 output tokens each. Answers: 400 `moderation_blocked` its safety system (a content refusal), 401
 * credentials, 403 an organization not verified (the account's), 429 `insufficient_quota` the account's
 * credit and other 429s its rate limits (busy), 5xx a failed generation (not charged: another channel may take
 * the task). It keeps no id of ours: a create whose answer was lost is never sent there again.
 */
@Injectable()
export class OpenAIImageVendor implements ImageVendor {
  static readonly protocol = 'openai';
  static readonly models = OPENAI_IMAGE_MODELS;
  readonly protocol = OpenAIImageVendor.protocol;
  readonly models = OPENAI_IMAGE_MODELS;
  /** It answers at once: nothing is polled. */
  readonly minPollS = OPENAI.pollFloorS;

  constructor(private readonly client: UpstreamClient) {}

  async create(account: VendorAccount, create: ImageCreate): Promise<ImageAnswer> {
    const { model, request } = create;
    const images = request.images > 0 ? await create.images() : [];
    const fields = {
      model: model.id,
      prompt: request.prompt,
      n: request.n,
      ...optional('size', sizeFor(model, request, images[0])),
      ...optional('quality', request.quality),
      ...optional('background', request.background),
      output_format: 'png',
    };
    const answer = await this.calling(async () => {
      if (images.length === 0) return this.client.call('POST', `${account.baseUrl}/images/generations`, { body: fields, auth: account.auth, failFast: true, refusal: openaiRefusal, maxBytes: RESULT_MAX_BYTES, timeoutMs: SYNC_GENERATION_TIMEOUT_MS });
      const form = new FormData();
      for (const [name, value] of Object.entries(fields)) form.set(name, String(value));
      images.forEach((image, i) => form.append('image[]', blobOf(image), `image-${i}.${extension(image)}`));
      const mask = request.mode === 'edit' && request.mask ? await create.mask() : undefined;
      if (mask) form.set('mask', blobOf(mask), `mask.${extension(mask)}`);
      return this.client.call('POST', `${account.baseUrl}/images/edits`, { form, auth: account.auth, failFast: true, refusal: openaiRefusal, maxBytes: RESULT_MAX_BYTES, timeoutMs: SYNC_GENERATION_TIMEOUT_MS });
    });
    const data = (answer.json as ImagesResponse).data;
    const made: VendorImage[] = (Array.isArray(data) ? data : []).flatMap((image): VendorImage[] => {
      if (typeof image?.b64_json === 'string' && image.b64_json) return [{ bytes: Buffer.from(image.b64_json, 'base64') }];
      return typeof image?.url === 'string' && image.url ? [{ url: image.url }] : [];
    });
    if (made.length === 0) throw new UnusableAnswer('the upstream answered without an image');
    const revised = Array.isArray(data) ? data.find((image) => typeof image?.revised_prompt === 'string' && image.revised_prompt)?.revised_prompt : undefined;
    return { made, ...(typeof revised === 'string' ? { revisedPrompt: revised } : {}) };
  }

  /** OpenAI's answers the UpstreamClient's reading and `openaiRefusal` leave (see the class). */
  private async calling<T>(work: () => Promise<T>): Promise<T> {
    try {
      return await work();
    } catch (err) {
      // a generation that failed upstream is not charged: the task may go to another channel
      if (err instanceof UpstreamUnavailable && !(err instanceof UpstreamBusy) && err.answer.status !== undefined && err.answer.status >= 500) throw new UpstreamBusy(err.message, undefined, err.answer);
      throw err;
    }
  }
}

/**
 * The `size` sent: the asked one (gpt-image-2: the nearest it makes); else, where a shape or a class was asked,
 * the model's size of that shape (a generation's default shape is square, an edit's its first image's);
 * else none (OpenAI's `auto`).
 */
function sizeFor(model: ImageModelSpec, request: ImageRequest, first: ImageInput | undefined): string | undefined {
  if (request.size) return model.sizes === 'any' ? freeSize(sidesOf(request.size)) : request.size;
  if (request.aspectRatio === undefined && request.resolution === undefined) return undefined;
  const shape = request.aspectRatio ?? (request.mode === 'edit' && first ? shapeOf(first.width, first.height, model.aspectRatios) : '1:1');
  if (Array.isArray(model.sizes)) return model.sizes.find((size) => shapeOf(sidesOf(size).width, sidesOf(size).height, model.aspectRatios) === shape);
  const [w, h] = shape.split(':').map(Number);
  const long = FREE_LONG_SIDE[request.resolution ?? '1k'] ?? FREE_LONG_SIDE['1k'];
  return freeSize(w >= h ? { width: long, height: (long * h) / w } : { width: (long * w) / h, height: long });
}

/** The size gpt-image-2 makes nearest to `width` x `height`: the shape within 3:1, the pixels within its bounds, the sides multiples of 16. */
function freeSize({ width, height }: { width: number; height: number }): string {
  const step = FREE.multipleOf;
  let [w, h] = [width, height];
  if (w > FREE.maxShape * h) h = w / FREE.maxShape;
  else if (h > FREE.maxShape * w) w = h / FREE.maxShape;
  const scale = Math.min(Math.max(1, Math.sqrt(FREE.minPixels / (w * h))), FREE.maxSide / Math.max(w, h), Math.sqrt(FREE.maxPixels / (w * h)));
  w = Math.max(step, Math.round((w * scale) / step) * step);
  h = Math.max(step, Math.round((h * scale) / step) * step);
  // the rounding may have left it a step outside its bounds
  while (w * h < FREE.minPixels) [w, h] = w <= h ? [w + step, h] : [w, h + step];
  while (w * h > FREE.maxPixels || Math.max(w, h) > FREE.maxSide) [w, h] = w >= h ? [w - step, h] : [w, h - step];
  while (w > FREE.maxShape * h) h += step;
  while (h > FREE.maxShape * w) w += step;
  return `${w}x${h}`;
}

function optional<K extends string, V>(key: K, value: V | undefined): Partial<Record<K, V>> {
  return value === undefined ? {} : ({ [key]: value } as Record<K, V>);
}

/** A file part OpenAI takes: its own image type (it refuses application/octet-stream). */
function blobOf(image: ImageInput): Blob {
  return new Blob([new Uint8Array(image.bytes)], { type: `image/${image.format}` });
}

function extension(image: ImageInput): string {
  return image.format === 'jpeg' ? 'jpg' : image.format;
}
