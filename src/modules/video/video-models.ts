import { Injectable } from '@nestjs/common';
import { AppError } from '../../common/errors/app-error.js';
import { AppConfig } from '../../infra/config/app-config.js';
import { servedVideoModels } from '../channels/channel-models.js';
import { ChannelRouter } from '../channels/channel-router.js';
import { everything, unmetFields, VIDEO_FIELDS, type VideoField, type VideoModelSpec, type VideoRequest } from '../../vendors/contracts/video-request.js';
import { VIDEO_VENDORS } from '../../vendors/video-vendors.js';

/** A model callers may ask for: its name, the vendor behind it, what it can do. */
export interface OfferedModel {
  name: string;
  vendor: string;
  spec: VideoModelSpec;
  /** Taken only when a request names it (the sandbox's free-form model): never a match for a request that names none. */
  namedOnly?: boolean;
}

/** The sandbox's model that makes anything it can render, for free-form trials: asked for by name only. */
export const SANDBOX_MODEL = 'sandbox';

/** How long the configured models are reused before the channels are read again. */
const CACHE_MS = 2000;

/**
 * The video models callers may ask for: those the video channels serve (any status: a disabled channel
 * may come back; a request none of them could ever make is refused at once), or, with the sandbox, every
 * vendor's model as its catalog describes it (so the sandbox accepts exactly what a real model makes, and a
 * team meets no difference when its gateway relays to the vendor), plus the model `sandbox`, which makes
 * anything the sandbox renders and is used only when a request names it.
 */
@Injectable()
export class VideoModels {
  private cached?: { at: number; models: Promise<OfferedModel[]> };

  constructor(
    private readonly router: ChannelRouter,
    private readonly config: AppConfig,
  ) {}

  offered(): Promise<OfferedModel[]> {
    if (this.cached && Date.now() - this.cached.at < CACHE_MS) return this.cached.models;
    const models = this.read().catch((err: unknown) => {
      this.cached = undefined;
      throw err;
    });
    this.cached = { at: Date.now(), models };
    return models;
  }

  private async read(): Promise<OfferedModel[]> {
    if (this.config.kinds.video.provider === 'sandbox') {
      const catalogs = VIDEO_VENDORS.flatMap((v) => v.models.map((spec): OfferedModel => ({ name: spec.id, vendor: v.protocol, spec })));
      return [...catalogs, { name: SANDBOX_MODEL, vendor: 'sandbox', spec: everything(SANDBOX_MODEL), namedOnly: true }];
    }
    // one entry per (name, vendor, vendor model), however many channels serve it
    const offered = new Map<string, OfferedModel>();
    for (const channel of await this.router.configuredFor('video')) {
      for (const m of servedVideoModels(channel)) offered.set(`${m.name}\n${channel.protocol}\n${m.spec.id}`, { name: m.name, vendor: channel.protocol, spec: m.spec });
    }
    return [...offered.values()];
  }

  /**
   * Refuses (400) a request no configured model could ever make, naming the door's fields (`labels`) it
   * cannot have together and the models that could make it, or each field. A door that is one vendor's API
   * (`vendor`: Kling's) takes, for a request that names no model, what that vendor's configured models make,
   * as the vendor itself would (Kling refuses a duration of "7"); any configured model's when none of them is
   * configured. Which channel then makes it is the router's choice among all that can.
   */
  async check(request: VideoRequest, labels: Record<VideoField, string>, vendor?: string): Promise<void> {
    const offered = await this.offered();
    if (offered.length === 0) return; // no channel yet: the task waits for one, as any relayed task does
    const native = vendor !== undefined && offered.some((m) => m.vendor === vendor);
    const pool = offered.filter((m) => (request.model === undefined ? !m.namedOnly && (!native || m.vendor === vendor) : m.name === request.model));
    if (pool.length === 0) {
      throw new AppError('INVALID_PARAMETER', `${labels.model} must be one of the configured models: ${names(offered)} (not ${request.model})`);
    }
    const unmet = pool.map((m) => unmetFields(m.spec, request));
    if (unmet.some((u) => u.length === 0)) return;
    const failing = VIDEO_FIELDS.filter((f) => unmet.some((u) => u.includes(f)));
    const blocking = failing.filter((f) => unmet.every((u) => u.includes(f)));
    const fields = blocking.length > 0 ? blocking : failing;
    const asked = request.model !== undefined ? `model ${request.model} does not make` : native ? `no configured ${vendorTitle(vendor!)} model makes` : 'no configured model makes';
    const whole = offered.filter((m) => unmetFields(m.spec, request).length === 0);
    const could = whole.length > 0
      ? `models that could make it: ${names(whole)}`
      : fields.map((f) => `${labels[f]} is made by ${names(offered.filter((m) => !unmetFields(m.spec, request).includes(f))) || 'no configured model'}`).join('; ');
    throw new AppError('INVALID_PARAMETER', `${fields.map((f) => labels[f]).join(', ')}: ${asked} this ${fields.map((f) => describe(f, request)).join(' with ')}; ${could}`);
  }
}

/** The normalized fields by the names most doors give them; a door overrides those it names otherwise. */
const FIELD_NAMES: Record<VideoField, string> = {
  model: 'model',
  prompt: 'prompt',
  negativePrompt: 'negative_prompt',
  aspectRatio: 'aspect_ratio',
  resolution: 'resolution',
  durationS: 'duration',
  firstFrame: 'first_frame',
  lastFrame: 'last_frame',
  continues: 'continuation',
  loop: 'loop',
  seed: 'seed',
  audio: 'audio',
  concepts: 'concepts',
  cfgScale: 'cfg_scale',
  cameraControl: 'camera_control',
};

/** A door's names of the normalized fields (for its 400s): the common names, with its own where they differ. */
export function doorFieldNames(own: Partial<Record<VideoField, string>>): Record<VideoField, string> {
  return { ...FIELD_NAMES, ...own };
}

/** A vendor's name in a sentence: kling → Kling. */
function vendorTitle(vendor: string): string {
  return vendor.charAt(0).toUpperCase() + vendor.slice(1);
}

function names(models: OfferedModel[]): string {
  return [...new Set(models.map((m) => `${m.name} (${m.vendor})`))].join(', ');
}

/** The asked value of a field, in words. */
function describe(field: VideoField, r: VideoRequest): string {
  switch (field) {
    case 'durationS':
      return `duration of ${r.durationS} s`;
    case 'resolution':
      return `resolution (${r.resolution}${r.aspectRatio ? ` at ${r.aspectRatio}` : ''})`;
    case 'aspectRatio':
      return `aspect ratio (${r.aspectRatio}${r.firstFrame ? ', with a first frame' : ''})`;
    case 'firstFrame':
      return r.firstFrame ? 'first frame' : 'video from a prompt alone';
    case 'lastFrame':
      return r.firstFrame ? 'end frame' : 'end frame without a first frame';
    case 'continues':
      return 'continuation of a generation';
    case 'prompt':
      return `prompt of ${[...r.prompt].length} characters`;
    case 'negativePrompt':
      return 'negative prompt';
    default:
      return field;
  }
}
