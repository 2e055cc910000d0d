import { Injectable } from '@nestjs/common';
import { UpstreamClient, UpstreamRefused } from '../../infra/relay/upstream-client.js';
import { type ImageModelSpec, type ImageRequest, resolutionOf, shapeOf, sidesOf } from '../contracts/image-request.js';
import type { ImageAnswer, ImageCreate, ImageInput, ImageStatus, ImageVendor } from '../contracts/image-vendor.js';
import type { VendorAccount } from '../contracts/vendor.js';
import { type KlingImageTask, klingImagesStatus, KlingTasks } from './kling-tasks.js';
import { KLING } from './kling.vendor.js';

/** The shapes of its `aspect_ratio` (its default 16:9). */
const RATIOS = ['16:9', '9:16', '1:1', '4:3', '3:4', '3:2', '2:3', '21:9'];

function kling(id: string, over: Partial<ImageModelSpec>): ImageModelSpec {
  return {
    id,
    aspectRatios: RATIOS,
    resolutions: ['1k', '2k'],
    qualities: [],
    maxN: 9,
    transparent: false,
    // its one `image` (URL or Base64): the reference of an image-to-image
    maxReferences: 1,
    maxEditImages: 0,
    mask: false,
    seed: false,
    negativePrompt: true,
    // its image-to-image takes none
    negativePromptWithImages: false,
    imageReference: false,
    imageFidelity: false,
    maxPromptChars: 2500,
    ...over,
  };
}

/**
 * Kling's image models as its image generation page and capability map give them: kling-v1 (1k, no 21:9),
 * kling-v1-5 (1k; its reference is a `subject` or a `face`), kling-v2 and kling-v2-1 (1k and 2k), kling-v3
 * (newer pages: as kling-v2-1). `image_fidelity` is kling-v1's and kling-v1-5's only ("Only kling-v1,
 * kling-v1-5 support this parameter"), `human_fidelity` a subject reference's. kling-v2's image-to-image on
 * this endpoint is a style transfer at the input's own size (neither shape nor class could be promised): it is
 * declared without one. Where the capability map and ComfyUI's older spec disagree (ComfyUI refuses a
 * reference on kling-v1), the map, Kling's own, is followed.
 */
export const KLING_IMAGE_MODELS: readonly ImageModelSpec[] = [
  kling('kling-v1', { aspectRatios: RATIOS.filter((r) => r !== '21:9'), resolutions: ['1k'], imageFidelity: true }),
  kling('kling-v1-5', { resolutions: ['1k'], imageReference: true, imageFidelity: true }),
  kling('kling-v2', { maxReferences: 0 }),
  kling('kling-v2-1', {}),
  kling('kling-v3', {}),
];


/**
 * Kling's image generation (`POST /v1/images/generations`, `GET …/{task_id}`), its envelope `{code, message,
 * request_id, data}` and states submitted | processing | succeed | failed, the JWT from the channel's access
 * and secret keys. Our task id goes as `external_task_id` (unique per account: a create sent twice is refused
 * the second time, and a task is found by it when a create's answer was lost). Its input image goes as raw
 * Base64 (Kling calls a `data:` prefix incorrect). What a spec cannot say is refused here before anything
 * is sent: a negative prompt with an image (Kling takes none then), a `human_fidelity` without a subject
 * reference, a reference kind without an image. kling-v1-5 needs a reference kind with an image: a request
 * that names none (the OpenAI door's) is sent as a `subject` reference.
 */
@Injectable()
export class KlingImageVendor implements ImageVendor {
  static readonly protocol = KLING.protocol;
  static readonly models = KLING_IMAGE_MODELS;
  readonly protocol = KlingImageVendor.protocol;
  readonly models = KLING_IMAGE_MODELS;
  readonly minPollS = KLING.pollFloorS;

  private readonly tasks: KlingTasks<KlingImageTask, ImageStatus>;

  constructor(client: UpstreamClient) {
    this.tasks = new KlingTasks(client, '/v1/images/generations', klingImageStatus);
  }

  async create(account: VendorAccount, create: ImageCreate): Promise<ImageAnswer> {
    const { model, request, taskId, callbackUrl } = create;
    const unmet = unmetByKling(model, request);
    if (unmet) throw new UpstreamRefused(unmet, 400, 'request');
    const image = request.images > 0 ? (await create.images())[0] : undefined;
    return this.tasks.create(account, klingImageBody(model, request, image, callbackUrl), taskId);
  }

  query(account: VendorAccount, upstreamId: string, once: boolean): Promise<ImageStatus> {
    return this.tasks.query(account, upstreamId, once);
  }

  findByOwnId(account: VendorAccount, taskId: string): Promise<{ upstreamId: string; status: ImageStatus } | null> {
    return this.tasks.findByOwnId(account, taskId);
  }
}

/**
 * The normalized request as Kling's `POST /v1/images/generations` takes it (our task id is added as
 * `external_task_id` by KlingTasks): `model_name`, `prompt`, `negative_prompt`, its one `image` in raw Base64,
 * `image_reference` (kling-v1-5: `subject` unless asked), `image_fidelity`, `human_fidelity`, `n`, the shape
 * fields and `callback_url`.
 */
export function klingImageBody(model: ImageModelSpec, request: ImageRequest, image: ImageInput | undefined, callbackUrl: string | undefined): Record<string, unknown> {
  const reference = image && model.imageReference ? (request.imageReference ?? 'subject') : undefined;
  return {
    model_name: model.id,
    prompt: request.prompt,
    ...(request.negativePrompt ? { negative_prompt: request.negativePrompt } : {}),
    ...(image ? { image: image.bytes.toString('base64') } : {}),
    ...(reference ? { image_reference: reference } : {}),
    ...(request.imageFidelity !== undefined ? { image_fidelity: request.imageFidelity } : {}),
    ...(request.humanFidelity !== undefined ? { human_fidelity: request.humanFidelity } : {}),
    n: request.n,
    ...shapeFields(model, request),
    ...(callbackUrl ? { callback_url: callbackUrl } : {}),
  };
}

/** What Kling refuses that a model spec cannot say (its words, as its 400 would put them); null: nothing. */
export function unmetByKling(model: ImageModelSpec, request: ImageRequest): string | null {
  if (request.negativePrompt && request.images > 0) return 'negative_prompt: Kling takes no negative prompt with an image (image-to-image)';
  if (request.imageReference && request.images === 0) return 'image_reference: a reference kind needs an image';
  const reference = request.images > 0 && model.imageReference ? (request.imageReference ?? 'subject') : undefined;
  if (request.humanFidelity !== undefined && reference !== 'subject') return 'human_fidelity: Kling takes it with a subject reference (image_reference subject, kling-v1-5) only';
  if (request.imageFidelity !== undefined && request.images === 0) return 'image_fidelity: a reference strength needs an image';
  return null;
}

/**
 * Its `aspect_ratio` (the asked one, or the asked size's shape: the gateway resizes to the size) and
 * `resolution` (the asked class, or the asked size's); neither asked: its defaults (16:9, 1k).
 */
export function shapeFields(model: ImageModelSpec, request: ImageRequest): { aspect_ratio?: string; resolution?: string } {
  const sides = request.size ? sidesOf(request.size) : undefined;
  const ratio = request.aspectRatio ?? (sides ? shapeOf(sides.width, sides.height, model.aspectRatios) : undefined);
  const resolution = sides ? resolutionOf(sides.width, sides.height) : request.resolution;
  return { ...(ratio ? { aspect_ratio: ratio } : {}), ...(resolution ? { resolution } : {}) };
}

/** A task of Kling's image generations (its create's, query's or callback's `data`) as an image status: its images' URLs in order. */
export function klingImageStatus(task: KlingImageTask): ImageStatus {
  return klingImagesStatus(task, (i) => ({ url: i.url }));
}
