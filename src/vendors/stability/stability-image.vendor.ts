import { Injectable } from '@nestjs/common';
import { z } from 'zod';
import { SYNC_GENERATION_TIMEOUT_MS, type UpstreamAnswer, UpstreamClient, UpstreamRefused } from '../../infra/relay/upstream-client.js';
import { type ImageModelSpec, type ImageRequest, shapeOf, sidesOf } from '../contracts/image-request.js';
import type { ImageAnswer, ImageCreate, ImageInput, ImageVendor, VendorImage } from '../contracts/image-vendor.js';
import { failedGenerations } from '../contracts/sync-generation.js';
import { paintedWhite } from '../contracts/image-mask.js';
import { UnusableAnswer, type VendorAccount } from '../contracts/vendor.js';
import { STABILITY } from './stability.vendor.js';

/** The shapes its generate endpoints make (`aspect_ratio`), each at a size of the model's own. */
const RATIOS = ['16:9', '1:1', '21:9', '2:3', '3:2', '4:5', '5:4', '9:16', '9:21'];
/** Its limit of a prompt and of a negative prompt. */
const MAX_PROMPT_CHARS = 10_000;
/** An answer is one image: a PNG of ~1.5 MP, well under this. */
const RESULT_MAX_BYTES = 32 * 1024 * 1024;
/** Its seeds: 0 (random) to 4294967294. */
const SEEDS = 4_294_967_295;
/**
 * How far an image-to-image moves from its input (Stability's `strength`, required with an image: 0 keeps
 * it, 1 ignores it): halfway, as Kling's default reference strength (0.5) has it. No door field asks for it.
 */
const REFERENCE_STRENGTH = 0.5;

function stable(id: string, over: Partial<ImageModelSpec>): ImageModelSpec {
  return {
    id,
    aspectRatios: RATIOS,
    // ~1 MP (Ultra, SD 3.5: 1024x1024 at 1:1); Core's ~1.5 MP (1536x1536) is declared 1k too: a 1k size is a
    // downscale of every shape it makes, where a 2k one would be an upscale of most
    resolutions: ['1k'],
    qualities: [],
    // one image per call: n calls, one after another in the step that sends them (each takes seconds), so few
    maxN: 4,
    transparent: false,
    maxReferences: 0,
    // an edit, whichever model, is its inpaint (the edit endpoints take no model)
    maxEditImages: 1,
    mask: true,
    seed: true,
    negativePrompt: true,
    maxPromptChars: MAX_PROMPT_CHARS,
    ...over,
  };
}

/**
 * Stability's Stable Image models, by the names its API gives them: `ultra` and `core` (their endpoints),
 * `sd3.5-large` and `sd3.5-medium` (the `model` of its sd3 endpoint). Ultra and SD 3.5 take one input image
 * (image-to-image, which keeps the input's shape); Core none.
 */
export const STABILITY_IMAGE_MODELS: readonly ImageModelSpec[] = [
  stable('ultra', { maxReferences: 1 }),
  stable('core', {}),
  stable('sd3.5-large', { maxReferences: 1 }),
  stable('sd3.5-medium', { maxReferences: 1 }),
];

/**
 * Stability AI's Stable Image API (v2beta): synchronous, multipart, `accept: image/*` (the answer is the
 * image's bytes, with `finish-reason` and `seed` headers). A generation is `POST
 * /v2beta/stable-image/generate/{ultra|core|sd3}` (`prompt`, `negative_prompt`, `aspect_ratio`, `seed`,
 * `output_format`; sd3's `model`; with an input image, `image` and `strength`); an edit is `POST
 * /v2beta/stable-image/edit/inpaint` (`image`, `mask`: white where it paints, or else the image's own
 * transparency). One image per call: n images are n calls. Answers: `finish-reason: CONTENT_FILTERED` (a
 * blurred image) and 403 content_moderation are its moderation (a content refusal), 402 the account's credit,
 * 429 busy, 5xx a failed generation (not charged: another channel may take the task). It keeps no id of
 * ours: a create whose answer was lost is never sent again.
 */
@Injectable()
export class StabilityImageVendor implements ImageVendor {
  static readonly protocol = STABILITY.protocol;
  static readonly models = STABILITY_IMAGE_MODELS;
  readonly protocol = StabilityImageVendor.protocol;
  readonly models = STABILITY_IMAGE_MODELS;
  /** It answers at once: nothing is polled. */
  readonly minPollS = STABILITY.pollFloorS;

  constructor(private readonly client: UpstreamClient) {}

  async create(account: VendorAccount, create: ImageCreate): Promise<ImageAnswer> {
    const { model, request } = create;
    const images = request.images > 0 ? await create.images() : [];
    const mask = request.mode === 'edit' && request.mask && images[0] ? await create.mask() : undefined;
    const painted = mask && images[0] ? await paintedWhite(mask, images[0]) : undefined;
    const calls = stabilityImageCalls(model, request, images, painted);
    const made: VendorImage[] = [];
    for (const asked of calls) {
      made.push(
        await failedGenerations(async () => {
          const answer = await this.client.call('POST', `${account.baseUrl}${asked.path}`, { form: formOf(asked), auth: account.auth, refusal: stabilityRefusal, failFast: true, maxBytes: RESULT_MAX_BYTES, timeoutMs: SYNC_GENERATION_TIMEOUT_MS, headers: { accept: 'image/*' } });
          return stabilityImageOf(answer);
        }),
      );
    }
    return { made };
  }
}

/** A multipart call to Stability: its path, its text fields, its files (each its bytes, type and file name). */
export interface StabilityCall {
  path: string;
  fields: Record<string, string>;
  files: { name: string; bytes: Buffer; type: string; filename: string }[];
}

/**
 * The normalized request as Stability's v2beta takes it, one call per image: a generation `POST
 * /v2beta/stable-image/generate/{ultra|core|sd3}` (`prompt`, `negative_prompt`, `seed` (each call the next one),
 * `output_format`; sd3's `model`; with an input image `image` and `strength` (sd3: `mode: image-to-image`), else
 * `aspect_ratio`); an edit `POST /v2beta/stable-image/edit/inpaint` (`image`, and the `mask` painted white where it paints).
 */
export function stabilityImageCalls(model: ImageModelSpec, request: ImageRequest, images: ImageInput[], paintedMask: Buffer | undefined): StabilityCall[] {
  if (request.mode === 'edit' && !images[0]) throw new UpstreamRefused('an inpaint needs the image it edits', 0, 'request', true);
  const sd3 = model.id.startsWith('sd3');
  const path = `/v2beta/stable-image/${request.mode === 'edit' ? 'edit/inpaint' : `generate/${sd3 ? 'sd3' : model.id}`}`;
  return Array.from({ length: request.n }, (_, i): StabilityCall => {
    const fields: Record<string, string> = { prompt: request.prompt };
    const files: StabilityCall['files'] = [];
    if (request.negativePrompt) fields.negative_prompt = request.negativePrompt;
    // n images with one seed would be n copies: each takes the next
    if (request.seed !== undefined) fields.seed = String((request.seed + i) % SEEDS);
    fields.output_format = 'png';
    if (request.mode === 'edit') {
      files.push(file('image', images[0]));
      if (paintedMask) files.push({ name: 'mask', bytes: paintedMask, type: 'image/png', filename: 'mask.png' });
    } else {
      if (sd3) fields.model = model.id;
      if (images[0]) {
        if (sd3) fields.mode = 'image-to-image';
        files.push(file('image', images[0]));
        fields.strength = String(REFERENCE_STRENGTH);
      } else {
        const ratio = aspectRatioOf(request);
        if (ratio) fields.aspect_ratio = ratio;
      }
    }
    return { path, fields, files };
  });
}

/** Stability's answer to one call: the image's bytes; its moderation's blurred result (`finish-reason: CONTENT_FILTERED`) a content refusal; anything but an image refused. */
export function stabilityImageOf(answer: Pick<UpstreamAnswer, 'status' | 'headers' | 'body'>): VendorImage {
  if (answer.headers['finish-reason'] === 'CONTENT_FILTERED') throw new UpstreamRefused("the result was filtered by the upstream's moderation (finish-reason CONTENT_FILTERED)", 200, 'request');
  // a 200 that is no image made nothing usable: a failed generation (failedGenerations), another channel may make it
  if (!/^image\//.test(String(answer.headers['content-type'] ?? ''))) throw new UnusableAnswer('the upstream answered without an image');
  return { bytes: answer.body };
}

/** The asked shape: Kling's `aspect_ratio`, or an asked size's (the gateway resizes to the size); none: its default, 1:1. */
function aspectRatioOf(request: ImageRequest): string | undefined {
  if (request.size) {
    const { width, height } = sidesOf(request.size);
    return shapeOf(width, height, RATIOS);
  }
  return request.aspectRatio;
}

function file(name: string, image: ImageInput): StabilityCall['files'][number] {
  return { name, bytes: image.bytes, type: `image/${image.format}`, filename: `${name}.${image.format === 'jpeg' ? 'jpg' : image.format}` };
}

/** A call's multipart body. */
export function formOf(call: Pick<StabilityCall, 'fields' | 'files'>): FormData {
  const form = new FormData();
  for (const [name, value] of Object.entries(call.fields)) form.set(name, value);
  for (const part of call.files) form.set(part.name, new Blob([new Uint8Array(part.bytes)], { type: part.type }), part.filename);
  return form;
}

/** Stability's error `{id, name, errors}` when its moderation refused (403 `content_moderation`). */
const MODERATION_ERROR = z.object({ name: z.literal('content_moderation'), errors: z.array(z.unknown()).catch([]) });

/** Its 403 content_moderation refuses the request's content, not the key the status alone would say. */
export function stabilityRefusal(status: number, json: Record<string, unknown>): UpstreamRefused | undefined {
  const moderated = status === 403 ? MODERATION_ERROR.safeParse(json) : undefined;
  if (!moderated?.success) return undefined;
  const words = moderated.data.errors.filter((e) => typeof e === 'string').join('; ');
  return new UpstreamRefused(`the upstream's moderation refused the request (content_moderation)${words ? `: ${words}` : ''}`, 403, 'request');
}
