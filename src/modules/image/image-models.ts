import { Injectable } from '@nestjs/common';
import { AppError } from '../../common/errors/app-error.js';
import { AppConfig } from '../../infra/config/app-config.js';
import { everyImage, IMAGE_FIELDS, type ImageField, type ImageModelSpec, type ImageRequest, unmetImageFields } from '../../vendors/contracts/image-request.js';
import { IMAGE_VENDORS } from '../../vendors/image-vendors.js';
import { servedImageModels } from '../channels/channel-models.js';
import { ChannelRouter } from '../channels/channel-router.js';

/** An image model callers may ask for: its name, the vendor behind it, what it can do. */
export interface OfferedImageModel {
  name: string;
  vendor: string;
  spec: ImageModelSpec;
  /** Taken only when a request names it (the sandbox's free-form model). */
  namedOnly?: boolean;
}

/** The sandbox's model that makes anything it can draw: asked for by name only (while vendors' catalogs exist). */
export const SANDBOX_IMAGE_MODEL = 'sandbox';

const CACHE_MS = 2000;

/**
 * The image models callers may ask for: those the image channels serve (any status: a disabled channel may
 * come back), or, with the sandbox, every vendor's model as its catalog describes it (the sandbox accepts
 * exactly what a real model makes), plus the model `sandbox`, which draws anything and is used only when a
 * request names it.
 */
@Injectable()
export class ImageModels {
  private cached?: { at: number; models: Promise<OfferedImageModel[]> };

  constructor(
    private readonly router: ChannelRouter,
    private readonly config: AppConfig,
  ) {}

  offered(): Promise<OfferedImageModel[]> {
    if (this.cached && Date.now() - this.cached.at < CACHE_MS) return this.cached.models;
    const models = this.read().catch((err: unknown) => {
      this.cached = undefined;
      throw err;
    });
    this.cached = { at: Date.now(), models };
    return models;
  }

  private async read(): Promise<OfferedImageModel[]> {
    if (this.config.kinds.image.provider === 'sandbox') {
      const catalogs = (IMAGE_VENDORS as readonly { protocol: string; models: readonly ImageModelSpec[] }[]).flatMap((v) => v.models.map((spec): OfferedImageModel => ({ name: spec.id, vendor: v.protocol, spec })));
      return [...catalogs, { name: SANDBOX_IMAGE_MODEL, vendor: 'sandbox', spec: everyImage(SANDBOX_IMAGE_MODEL), namedOnly: catalogs.length > 0 }];
    }
    const offered = new Map<string, OfferedImageModel>();
    for (const channel of await this.router.configuredFor('image')) {
      for (const m of servedImageModels(channel)) offered.set(`${m.name}\n${channel.protocol}\n${m.spec.id}`, { name: m.name, vendor: channel.protocol, spec: m.spec });
    }
    return [...offered.values()];
  }

  /**
   * Refuses (400) a request no configured model could ever make, naming the door's fields (`labels`) it cannot
   * have together and the models that could make it, or each field. A door that is one vendor's API (`vendor`:
   * Kling's) takes, for a request that names no model, what that vendor's configured models make.
   */
  async check(request: ImageRequest, labels: Record<ImageField, string>, vendor?: string): Promise<void> {
    const offered = await this.offered();
    if (offered.length === 0) return; // no channel yet: the task waits for one, as any relayed task does
    const native = vendor !== undefined && offered.some((m) => m.vendor === vendor);
    const pool = offered.filter((m) => (request.model === undefined ? !m.namedOnly && (!native || m.vendor === vendor) : m.name === request.model));
    if (pool.length === 0) throw new AppError('INVALID_PARAMETER', `${labels.model} must be one of the configured models: ${names(offered)} (not ${request.model})`);
    const unmet = pool.map((m) => unmetImageFields(m.spec, request));
    if (unmet.some((u) => u.length === 0)) return;
    const failing = IMAGE_FIELDS.filter((f) => unmet.some((u) => u.includes(f)));
    const blocking = failing.filter((f) => unmet.every((u) => u.includes(f)));
    const fields = blocking.length > 0 ? blocking : failing;
    const asked = request.model !== undefined ? `model ${request.model} does not make` : native ? `no configured ${vendor} model makes` : 'no configured model makes';
    const whole = offered.filter((m) => !m.namedOnly && unmetImageFields(m.spec, request).length === 0);
    const could = whole.length > 0
      ? `models that could make it: ${names(whole)}`
      : fields.map((f) => `${labels[f]} is made by ${names(offered.filter((m) => !m.namedOnly && !unmetImageFields(m.spec, request).includes(f))) || 'no configured model'}`).join('; ');
    throw new AppError('INVALID_PARAMETER', `${[...new Set(fields.map((f) => labels[f]))].join(', ')}: ${asked} this ${fields.map((f) => describe(f, request)).join(' with ')}; ${could}`);
  }
}

function names(models: OfferedImageModel[]): string {
  return [...new Set(models.map((m) => `${m.name} (${m.vendor})`))].join(', ');
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
