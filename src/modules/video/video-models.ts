import { Injectable } from '@nestjs/common';
import { AppConfig } from '../../infra/config/app-config.js';
import { servedVideoModels } from '../channels/channel-models.js';
import { ChannelRouter } from '../channels/channel-router.js';
import { askedPool, type Offered, OfferCache, refuseUnmade } from '../channels/model-offer.js';
import { everything, madeDurationS, madeResolution, unmetFields, VIDEO_FIELDS, type VideoField, type VideoModelSpec, type VideoRequest } from '../../vendors/contracts/video-request.js';
import { VIDEO_VENDORS } from '../../vendors/video-vendors.js';
import type { ModelDto } from './dto/model.dto.js';
import { DEFAULT_DURATION_S } from './video-task.js';

/** A video model callers may ask for. */
export type OfferedModel = Offered<VideoModelSpec>;

/** The sandbox's model that makes anything it can render, for free-form trials: asked for by name only. */
export const SANDBOX_MODEL = 'sandbox';

/** What the video check needs of its fields. */
const VIDEO_RULES = { fields: VIDEO_FIELDS, unmet: unmetFields, describe: videoFieldWords, offers };

/**
 * The video models callers may ask for: those the video channels serve (any status: a disabled channel
 * may come back; a request none of them could ever make is refused at once), or, with the sandbox, every
 * vendor's model as its catalog describes it (so the sandbox accepts exactly what a real model makes, and a
 * team meets no difference when its gateway relays to the vendor), plus the model `sandbox`, which makes
 * anything the sandbox renders and is used only when a request names it.
 */
@Injectable()
export class VideoModels {
  private readonly cache = new OfferCache<VideoModelSpec>(() => this.read(), () => this.router.writes);

  constructor(
    private readonly router: ChannelRouter,
    private readonly config: AppConfig,
  ) {}

  offered(): Promise<OfferedModel[]> {
    return this.cache.offered();
  }

  /** The models callers may ask for, what each makes, its price (`GET /models`' video entries). */
  async entries(): Promise<ModelDto[]> {
    const perSecond = this.config.kinds.video.prices.second;
    return (await this.offered()).map(({ name, vendor, spec, declared }) => ({
      name,
      operation: 'video' as const,
      vendor,
      vendor_model: spec.id,
      declared: declared === true,
      durations_s: [...spec.durations],
      default_duration_s: madeDurationS(spec, {}),
      aspect_ratios: spec.aspectRatios === 'any' ? ['any'] : [...spec.aspectRatios],
      resolutions: [...spec.resolutions],
      default_resolution: madeResolution(spec, {}),
      ...(spec.sizes ? { sizes: [...spec.sizes] } : {}),
      ...(spec.durationsAt ? { durations_at: Object.fromEntries(Object.entries(spec.durationsAt).map(([resolution, seconds]) => [resolution, [...seconds]])) } : {}),
      text_to_video: spec.textToVideo,
      first_frame: spec.firstFrame,
      last_frame: spec.lastFrame,
      continues: spec.continues,
      loop: spec.loop,
      seed: spec.seed,
      audio: spec.audio,
      negative_prompt: spec.negativePrompt,
      concepts: spec.concepts,
      cfg_scale: spec.cfgScale === true,
      camera_control: spec.cameraControl === true,
      max_prompt_chars: spec.maxPromptChars,
      reference_images: spec.referenceImages ?? 0,
      references_with_frames: spec.referencesWithFrames === true,
      shape_from_first_frame: spec.shapeFromImage === true,
      credits_per_second: perSecond,
    }));
  }

  private async read(): Promise<OfferedModel[]> {
    if (this.config.kinds.video.provider === 'sandbox') {
      const catalogs = VIDEO_VENDORS.flatMap((v) => v.models.map((spec): OfferedModel => ({ name: spec.id, vendor: v.protocol, spec })));
      return [...catalogs, { name: SANDBOX_MODEL, vendor: 'sandbox', spec: everything(SANDBOX_MODEL), namedOnly: true }];
    }
    // one entry per (name, vendor, vendor model), however many channels serve it
    const offered = new Map<string, OfferedModel>();
    for (const channel of await this.router.configuredFor('video')) {
      for (const m of servedVideoModels(channel)) {
        // two channels declaring one vendor model alike are one model; declaring it otherwise, two
        const spec = m.declared ? JSON.stringify(m.spec) : m.spec.id;
        offered.set(`${m.name}\n${channel.protocol}\n${spec}\n${m.spec.frameFit ?? ''}`, { name: m.name, vendor: channel.protocol, spec: m.spec, ...(m.declared ? { declared: m.declared } : {}) });
      }
    }
    return [...offered.values()];
  }

  /**
   * Refuses (400) a request no configured model could ever make (refuseUnmade), naming the door's fields
   * (`labels`). Answers what the models it is for make of what the request leaves to them: their default
   * duration (madeDurationS: Veo's 8 s, Hailuo's 6), where every offered model able to make the request that
   * it may go to (askedPool: those of the name it asks, else any, at a vendor's door that vendor's) makes the
   * same. The door stores it in the task, which is then priced, sent, made and recorded at it, not at the
   * door's default (DEFAULT_DURATION_S, which stands where they differ: a request naming no model that Kling
   * and Veo channels could both make is priced 5 s, while Veo, should it make it, makes its own 8).
   */
  async check(request: VideoRequest, labels: Record<VideoField, string>, vendor?: string): Promise<Pick<VideoRequest, 'durationS'>> {
    const offered = await this.offered();
    refuseUnmade(offered, request, VIDEO_RULES, labels, vendor === undefined ? undefined : { protocol: vendor, title: vendorTitle(vendor) });
    if (request.durationS !== undefined) return {};
    const made = new Set(askedPool(offered, request, vendor).filter((m) => unmetFields(m.spec, request).length === 0).map((m) => madeDurationS(m.spec, request)));
    const [only] = made;
    // a request naming no model that they all make at the doors' default keeps it unsaid, as it was sent
    return made.size === 1 && (request.model !== undefined || only !== DEFAULT_DURATION_S) ? { durationS: only } : {};
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
  referenceImages: 'reference_images',
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


/**
 * What a model makes of a field for this request, in words, where one list says it: the durations at the asked
 * resolution where they differ by resolution; nothing where the rule is a pairing (sizes) or a first frame's
 * shape, which a list would misstate.
 */
function offers(field: VideoField, spec: VideoModelSpec, r: VideoRequest): string | undefined {
  switch (field) {
    case 'durationS': {
      const at = r.resolution ? spec.durationsAt?.[r.resolution] : undefined;
      return at ? `${spans(at)} s at ${r.resolution}` : spec.durationsAt ? undefined : `${spans(spec.durations)} s`;
    }
    case 'resolution':
      return spec.sizes ? undefined : spec.resolutions.join(', ');
    case 'aspectRatio':
      return spec.aspectRatios === 'any' || spec.sizes || r.firstFrame ? undefined : `aspect ratios ${spec.aspectRatios.join(', ')}`;
    case 'prompt':
      return `prompts of up to ${spec.maxPromptChars} characters`;
    case 'referenceImages':
      return spec.referenceImages ? `up to ${spec.referenceImages} reference images${spec.referencesWithFrames ? '' : ', without a frame'}` : 'no reference images';
    default:
      return undefined;
  }
}

/** Whole numbers in words, runs as ranges: [2, 3, 4, 5, 10] → "2 to 5, 10". */
function spans(values: readonly number[]): string {
  const runs: string[] = [];
  for (let i = 0; i < values.length; ) {
    let j = i;
    while (j + 1 < values.length && values[j + 1] === values[j] + 1) j++;
    runs.push(j - i >= 2 ? `${values[i]} to ${values[j]}` : values.slice(i, j + 1).join(', '));
    i = j + 1;
  }
  return runs.join(', ');
}

/** The asked value of a field, in words. */
export function videoFieldWords(field: VideoField, r: VideoRequest): string {
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
    case 'referenceImages':
      return `${r.referenceImages?.length ?? 0} reference image${r.referenceImages?.length === 1 ? '' : 's'}${r.firstFrame || r.lastFrame ? ' with a frame' : ''}`;
    case 'prompt':
      return `prompt of ${[...r.prompt].length} characters`;
    case 'negativePrompt':
      return 'negative prompt';
    case 'audio':
      return r.audio ? 'video with sound' : 'video without sound';
    case 'concepts':
      return `camera concept${r.concepts?.length === 1 ? '' : 's'} (${(r.concepts ?? []).join(', ')})`;
    case 'cfgScale':
      return `cfg scale of ${r.cfgScale}`;
    case 'cameraControl':
      return 'camera control';
    case 'loop':
      return 'looping video';
    case 'seed':
      return 'seed';
    case 'model':
      return 'model';
  }
}
