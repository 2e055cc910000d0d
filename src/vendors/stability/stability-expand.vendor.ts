import { Injectable } from '@nestjs/common';
import { AppConfig } from '../../infra/config/app-config.js';
import { boundedMetadata, ImageRejected } from '../../infra/images/image-bounds.js';
import { type UpstreamAnswer, UpstreamClient, UpstreamRefused } from '../../infra/relay/upstream-client.js';
import { type ExpandAnswer, type ExpandCreate, type ExpandImageSize, type ExpandRequest, type ExpandVendor, type MadeImage, marginsOf } from '../contracts/expand-vendor.js';
import { failedGenerations } from '../contracts/sync-generation.js';
import { UnusableAnswer, type VendorAccount } from '../contracts/vendor.js';
import { formOf, type StabilityCall } from './stability-image.vendor.js';
import { STABILITY } from './stability.vendor.js';

/** Stability's limits of an outpaint: margins per side, the input's sides, pixels and shape, the prompt. */
const MAX_MARGIN_PX = 2000;
const MIN_SIDE_PX = 64;
const MIN_PIXELS = 4096;
const MAX_PIXELS = 9_437_184;
const MAX_SHAPE = 2.5;
const MAX_PROMPT_CHARS = 10_000;
/** An outpaint answers the image itself: a PNG of up to ~(4096 + 4000)² px. */
const RESULT_MAX_BYTES = 64 * 1024 * 1024;

/**
 * Stability AI's outpaint (`POST /v2beta/stable-image/edit/outpaint`): multipart, synchronous (the answer is
 * the image), margins `left`, `right`, `up`, `down` in pixels (each ratio of the request times the side it
 * extends, at most 2000), Bearer key. One image per call: an expand of `n` is n calls. It has no watermark,
 * and takes inputs of 64 px a side or more, 4,096 to 9,437,184 pixels, shapes up to 2.5:1. Answers: 403
 * content_moderation (the request's content, not the key), 402 the account's credit, 5xx a failed generation
 * (not charged: another channel may take the task), `finish-reason: CONTENT_FILTERED` a blurred result
 * (refused as content). It keeps no id of ours: a create whose answer was lost is never sent again.
 */
@Injectable()
export class StabilityExpandVendor implements ExpandVendor {
  static readonly protocol = STABILITY.protocol;
  /** Its one expand model (the outpaint endpoint), as a channel names it to price it. */
  static readonly model = 'outpaint';
  readonly protocol = StabilityExpandVendor.protocol;
  /** It answers at once: nothing is polled. */
  readonly minPollS = STABILITY.pollFloorS;

  constructor(
    private readonly client: UpstreamClient,
    private readonly config: AppConfig,
  ) {}

  unmet(request: ExpandRequest, size: ExpandImageSize | null): string | null {
    return stabilityExpandUnmet(request, size);
  }

  /** The n images, one call each. */
  async create(account: VendorAccount, { request, image }: ExpandCreate): Promise<ExpandAnswer> {
    const input = await image.bytes();
    const asked = outpaintCall(request, input);
    const made: MadeImage[] = [];
    for (let i = 0; i < request.n; i++) {
      made.push(
        await this.calling(async () => {
          const answer = await this.client.call('POST', `${account.baseUrl}${asked.path}`, { form: formOf(asked), auth: account.auth, failFast: true, maxBytes: RESULT_MAX_BYTES, headers: { accept: 'image/*' } });
          outpaintFiltered(answer);
          // an upstream's bytes: the header only, under the pixel limit
          const meta = await boundedMetadata(answer.body, this.config.images).catch((err: unknown) => (err instanceof ImageRejected ? null : Promise.reject(err)));
          return outpaintImage(answer, meta, this.config.images.maxPixels);
        }),
      );
    }
    return { made };
  }

  /** Stability's answers as the relay reads them (see the class). */
  private async calling<T>(work: () => Promise<T>): Promise<T> {
    try {
      return await failedGenerations(work);
    } catch (err) {
      if (err instanceof UpstreamRefused && err.status === 403 && /content_moderation/.test(err.message)) throw new UpstreamRefused(`the upstream's moderation refused the request: ${err.message}`, 403, 'request');
      throw err;
    }
  }
}

/** Why Stability cannot make this expand exactly as asked (naming the field), or null: its watermark, prompt, input and margin limits. */
export function stabilityExpandUnmet(request: ExpandRequest, size: ExpandImageSize | null): string | null {
  if (request.watermark) return 'watermark_info: Stability makes no watermarked copy';
  if (request.prompt && [...request.prompt].length > MAX_PROMPT_CHARS) return `prompt: Stability takes at most ${MAX_PROMPT_CHARS} characters`;
  if (!size) return 'image: its size is not known yet';
  const { width, height } = size;
  if (Math.min(width, height) < MIN_SIDE_PX || width * height < MIN_PIXELS || width * height > MAX_PIXELS) return `image: Stability takes ${MIN_SIDE_PX} px a side and ${MIN_PIXELS} to ${MAX_PIXELS} pixels`;
  if (Math.max(width / height, height / width) > MAX_SHAPE) return `image: Stability takes shapes up to ${MAX_SHAPE}:1`;
  const margins = marginsOf(request, size);
  const over = Object.entries(margins).find(([, px]) => px > MAX_MARGIN_PX);
  if (over) return `${over[0] === 'down' ? 'bottom' : over[0]}_expansion_ratio: ${over[1]} px, Stability adds at most ${MAX_MARGIN_PX} px a side`;
  if (Object.values(margins).every((px) => px === 0)) return 'the expansion ratios: Stability needs at least one side to add a pixel';
  return null;
}

/** An expand as Stability's outpaint takes it (one call an image): the input `image`, the margins `left`, `right`, `up`, `down` in pixels, `prompt`, PNG. */
export function outpaintCall(request: ExpandRequest, input: { bytes: Buffer; format: 'png' | 'jpeg'; width: number; height: number }): StabilityCall {
  const fields: Record<string, string> = Object.fromEntries(Object.entries(marginsOf(request, input)).map(([side, px]) => [side, String(px)]));
  if (request.prompt) fields.prompt = request.prompt;
  fields.output_format = 'png';
  return { path: '/v2beta/stable-image/edit/outpaint', fields, files: [{ name: 'image', bytes: input.bytes, type: `image/${input.format}`, filename: `input.${input.format === 'jpeg' ? 'jpg' : input.format}` }] };
}

/** An outpaint its moderation blurred (`finish-reason: CONTENT_FILTERED`): refused as content. */
export function outpaintFiltered(answer: Pick<UpstreamAnswer, 'headers'>): void {
  if (answer.headers['finish-reason'] === 'CONTENT_FILTERED') throw new UpstreamRefused("the result was filtered by the upstream's moderation (finish-reason CONTENT_FILTERED)", 200);
}

/** The image an outpaint answered, from what its header says (`meta`: null when it is no image within the pixel limit): a PNG or JPEG, else refused. */
export function outpaintImage(answer: Pick<UpstreamAnswer, 'status' | 'body'>, meta: { format?: string; width: number; height: number } | null, maxPixels: number): MadeImage {
  if (meta?.format !== 'png' && meta?.format !== 'jpeg') throw new UnusableAnswer(`the upstream answered without a PNG or JPEG image of at most ${maxPixels} pixels`);
  return { body: answer.body, contentType: meta.format === 'png' ? 'image/png' : 'image/jpeg', width: meta.width, height: meta.height };
}
