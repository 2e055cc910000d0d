import { Injectable } from '@nestjs/common';
import { SYNC_GENERATION_TIMEOUT_MS, UpstreamClient, UpstreamRefused } from '../../infra/relay/upstream-client.js';
import { type ImageModelSpec, type ImageRequest, shapeOf, sidesOf } from '../contracts/image-request.js';
import type { ImageAnswer, ImageCreate, ImageInput, ImageVendor, VendorImage } from '../contracts/image-vendor.js';
import { failedGenerationsAsBusy } from '../contracts/sync-generation.js';
import { paintedWhite } from '../contracts/image-mask.js';
import type { VendorAccount } from '../contracts/vendor.js';
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
    if (request.mode === 'edit' && !images[0]) throw new UpstreamRefused('an inpaint needs the image it edits', 0, 'request', true);
    const mask = request.mode === 'edit' && request.mask ? await create.mask() : undefined;
    const painted = mask && images[0] ? await paintedWhite(mask, images[0]) : undefined;
    const path = request.mode === 'edit' ? 'edit/inpaint' : `generate/${model.id.startsWith('sd3') ? 'sd3' : model.id}`;
    const made: VendorImage[] = [];
    for (let i = 0; i < request.n; i++) {
      const form = new FormData();
      form.set('prompt', request.prompt);
      if (request.negativePrompt) form.set('negative_prompt', request.negativePrompt);
      // n images with one seed would be n copies: each takes the next
      if (request.seed !== undefined) form.set('seed', String((request.seed + i) % SEEDS));
      form.set('output_format', 'png');
      if (request.mode === 'edit') {
        form.set('image', file(images[0]), 'image.' + extension(images[0]));
        if (painted) form.set('mask', new Blob([new Uint8Array(painted)], { type: 'image/png' }), 'mask.png');
      } else {
        if (model.id.startsWith('sd3')) form.set('model', model.id);
        if (images[0]) {
          if (model.id.startsWith('sd3')) form.set('mode', 'image-to-image');
          form.set('image', file(images[0]), 'image.' + extension(images[0]));
          form.set('strength', String(REFERENCE_STRENGTH));
        } else {
          const ratio = aspectRatioOf(request);
          if (ratio) form.set('aspect_ratio', ratio);
        }
      }
      const answer = await failedGenerationsAsBusy(() => this.client.call('POST', `${account.baseUrl}/v2beta/stable-image/${path}`, { form, auth: account.auth, refusal: stabilityRefusal, failFast: true, maxBytes: RESULT_MAX_BYTES, timeoutMs: SYNC_GENERATION_TIMEOUT_MS, headers: { accept: 'image/*' } }));
      if (answer.headers['finish-reason'] === 'CONTENT_FILTERED') throw new UpstreamRefused("the result was filtered by the upstream's moderation (finish-reason CONTENT_FILTERED)", 200, 'request');
      if (!/^image\//.test(String(answer.headers['content-type'] ?? ''))) throw new UpstreamRefused('the upstream answered without an image', answer.status, 'request', true);
      made.push({ bytes: answer.body });
    }
    return { made };
  }

}

/** The asked shape: Kling's `aspect_ratio`, or an asked size's (the gateway resizes to the size); none: its default, 1:1. */
function aspectRatioOf(request: ImageRequest): string | undefined {
  if (request.size) {
    const { width, height } = sidesOf(request.size);
    return shapeOf(width, height, RATIOS);
  }
  return request.aspectRatio;
}

function file(image: ImageInput): Blob {
  return new Blob([new Uint8Array(image.bytes)], { type: `image/${image.format}` });
}

function extension(image: ImageInput): string {
  return image.format === 'jpeg' ? 'jpg' : image.format;
}


/** Its 403 content_moderation refuses the request's content, not the key the status alone would say. */
function stabilityRefusal(status: number, json: Record<string, unknown>): UpstreamRefused | undefined {
  if (status === 403 && json.name === 'content_moderation') {
    const words = Array.isArray(json.errors) ? json.errors.filter((e) => typeof e === 'string').join('; ') : '';
    return new UpstreamRefused(`the upstream's moderation refused the request (content_moderation)${words ? `: ${words}` : ''}`, 403, 'request');
  }
  return undefined;
}
