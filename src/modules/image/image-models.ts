import { Injectable } from '@nestjs/common';
import { AppError } from '../../common/errors/app-error.js';
import { AppConfig, type ImageLimits } from '../../infra/config/app-config.js';
import { everyImage, IMAGE_FIELDS, type ImageField, type ImageModelSpec, type ImageRequest, unmetImageFields } from '../../vendors/contracts/image-request.js';
import { IMAGE_VENDORS } from '../../vendors/image-vendors.js';
import { servedImageModels } from '../channels/channel-models.js';
import { ChannelRouter } from '../channels/channel-router.js';
import { type Offered, OfferCache, refuseUnmade } from '../channels/model-offer.js';

/** An image model callers may ask for. */
export type OfferedImageModel = Offered<ImageModelSpec>;

/** The sandbox's stand-in that draws anything it can (any size, every field): taken only when a request names it, as video's `sandbox`. */
export const SANDBOX_IMAGE_MODEL = 'sandbox';

/** A door that is one vendor's API (OpenAI's Images API, Kling's image API): its channel protocol and its name in a sentence. */
export interface NativeVendor {
  protocol: string;
  title: string;
}

/** What the image check needs of its fields. */
export const IMAGE_RULES = { fields: IMAGE_FIELDS, unmet: unmetImageFields, describe };

/**
 * The image models callers may ask for: those the image channels serve (any status: a disabled channel may
 * come back), or, with the sandbox, every vendor's model as its catalog describes it (the sandbox accepts
 * exactly what a real model makes, so a team meets no difference when its gateway relays to the vendor),
 * plus the model `sandbox`, which draws anything and is used only when a request names it.
 */
@Injectable()
export class ImageModels {
  private readonly cache = new OfferCache<ImageModelSpec>(() => this.read(), () => this.router.writes);

  constructor(
    private readonly router: ChannelRouter,
    private readonly config: AppConfig,
  ) {}

  offered(): Promise<OfferedImageModel[]> {
    return this.cache.offered();
  }

  private async read(): Promise<OfferedImageModel[]> {
    if (this.config.kinds.image.provider === 'sandbox') return sandboxImageModels();
    const offered = new Map<string, OfferedImageModel>();
    for (const channel of await this.router.configuredFor('image')) {
      for (const m of servedImageModels(channel)) {
        const spec = m.declared ? JSON.stringify(m.spec) : m.spec.id;
        offered.set(`${m.name}\n${channel.protocol}\n${spec}`, { name: m.name, vendor: channel.protocol, spec: m.spec, ...(m.declared ? { declared: m.declared } : {}) });
      }
    }
    return [...offered.values()];
  }

  /**
   * Refuses (400) a request no configured model could ever make (refuseUnmade), naming the door's fields
   * (`labels`). `vendor`: the door is that vendor's API, so a request that names no model takes what that
   * vendor's configured models make, as the vendor itself would (any configured model's when none of them is).
   */
  async check(request: ImageRequest, labels: Record<ImageField, string>, vendor?: NativeVendor): Promise<void> {
    refuseOversized(request, labels, this.config.images);
    refuseUnmade(await this.offered(), request, IMAGE_RULES, labels, vendor);
  }
}

/**
 * Refuses (400) an asked size past the image limits (IMAGE_MAX_SIDE, IMAGE_MAX_PIXELS): every image made is
 * read under them before it is kept, so such a task could only fail once made (and billed); and no model is
 * offered for it. Before the models are looked at, so none is named as one that could make it.
 */
export function refuseOversized(request: ImageRequest, labels: Record<ImageField, string>, limits: ImageLimits): void {
  if (!request.size) return;
  const [width, height] = request.size.split('x').map(Number);
  if (!Number.isFinite(width) || !Number.isFinite(height)) return; // not WxH: the models' rules refuse it
  if (width <= limits.maxSide && height <= limits.maxSide && width * height <= limits.maxPixels) return;
  const param = labels.size;
  throw AppError.invalidParameter(`${param}: ${request.size} is past this gateway's image limits (at most ${limits.maxSide} px a side and ${limits.maxPixels.toLocaleString('en-US')} pixels)`, { param, rule: 'above_max' });
}

/** The sandbox's models: every vendor's as its catalog describes it, and the stand-in `sandbox`, taken only when named. */
export function sandboxImageModels(): OfferedImageModel[] {
  const catalogs = (IMAGE_VENDORS as readonly { protocol: string; models: readonly ImageModelSpec[] }[]).flatMap((v) => v.models.map((spec): OfferedImageModel => ({ name: spec.id, vendor: v.protocol, spec })));
  return [...catalogs, { name: SANDBOX_IMAGE_MODEL, vendor: 'sandbox', spec: everyImage(SANDBOX_IMAGE_MODEL), namedOnly: true }];
}

/** The asked value of a field, in words. */
function describe(field: ImageField, r: ImageRequest): string {
  switch (field) {
    case 'mode':
      return 'edit';
    case 'n':
      return `number of images (${r.n})`;
    case 'size':
      return `size (${r.size})`;
    case 'aspectRatio':
      return `aspect ratio (${r.aspectRatio})`;
    case 'resolution':
      return `resolution (${r.resolution})`;
    case 'quality':
      return `quality (${r.quality})`;
    case 'background':
      return 'transparent background';
    case 'images':
      return r.mode === 'edit' ? `edit of ${r.images} images` : `generation with ${r.images} reference images`;
    case 'mask':
      return 'mask';
    case 'prompt':
      return `prompt of ${[...r.prompt].length} characters`;
    case 'negativePrompt':
      return 'negative prompt';
    case 'imageReference':
      return `image_reference (${r.imageReference})`;
    default:
      return field;
  }
}
