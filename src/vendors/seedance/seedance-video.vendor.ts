import { Injectable } from '@nestjs/common';
import { z } from 'zod';
import { UpstreamClient } from '../../infra/relay/upstream-client.js';
import type { RelayVendor } from '../contracts/relay.js';
import { madeDurationS, madeResolution, type VideoFrame, type VideoModelSpec, type VideoRequest } from '../contracts/video-request.js';
import { dataUri, urlOrInline, type VendorCreate, type VendorStatus, type VideoVendor } from '../contracts/video-vendor.js';
import type { VendorAccount } from '../contracts/vendor.js';
import { readAnswer } from '../contracts/vendor-answer.js';
import { billedFigure } from '../contracts/vendor-billing.js';
import { SEEDANCE } from './seedance.vendor.js';

/** The frame shapes Seedance makes (besides `adaptive`, the first frame's: sent whenever a first frame is). */
const RATIOS = ['16:9', '4:3', '1:1', '3:4', '9:16', '21:9'];
const range = (from: number, to: number) => Array.from({ length: to - from + 1 }, (_, i) => from + i);

function seedance(id: string, over: Partial<VideoModelSpec>): VideoModelSpec {
  return {
    id,
    durations: range(2, 12),
    aspectRatios: RATIOS,
    // its 480p is left out: no normalized resolution of ours is 480 px high
    resolutions: ['720p', '1080p'],
    textToVideo: true,
    firstFrame: true,
    lastFrame: true,
    continues: false,
    loop: false,
    seed: true,
    audio: false,
    negativePrompt: false,
    concepts: false,
    maxPromptChars: 2000,
    // from a first frame it takes the image's shape (ratio "adaptive"): the gateway fits the frame to an asked ratio first
    shapeFromImage: true,
    // its images: 300 to 6000 px a side
    frameMinSide: 300,
    // a request naming no duration is made 5 s long (ModelArk's default for every model)
    defaultDurationS: 5,
    ...over,
  };
}

/**
 * Seedance 2.0's reference images: up to 9 `image_url` items of role `reference_image`, never with a first or
 * last frame in the same request (Ark refuses "first/last frame content cannot be mixed with reference media
 * content"; ModelArk's Seedance 2.0 guide, and the aggregators' pages that quote it).
 */
const REFERENCES: Partial<VideoModelSpec> = { referenceImages: 9, referencesWithFrames: false };

/**
 * Seedance's models on ModelArk as its Video Generation API pages give them (docs.byteplus.com, ModelArk,
 * "Video Generation API"): 1.0 Pro 2-12 s, first and last frame; 1.0 Pro Fast the first frame only; 1.5 Pro
 * 4-12 s with generated sound; 2.0 and 2.0 Fast 4-15 s at 720p, with sound. Sources disagreed on durations (the
 * older pages' "5 or 10", the API reference's 2-12 for 1.0 and 4-12 for 1.5): the API reference is followed.
 */
export const SEEDANCE_MODELS: readonly VideoModelSpec[] = [
  // 1.0 Pro and Pro Fast make 1080p when no resolution is named (the later models 720p)
  seedance('seedance-1-0-pro-250528', { defaultResolution: '1080p' }),
  seedance('seedance-1-0-pro-fast-251015', { lastFrame: false, defaultResolution: '1080p' }),
  seedance('seedance-1-5-pro-251215', { durations: range(4, 12), audio: true }),
  seedance('dreamina-seedance-2-0-260128', { durations: range(4, 15), resolutions: ['720p'], audio: true, ...REFERENCES }),
  seedance('dreamina-seedance-2-0-fast-260128', { durations: range(4, 15), resolutions: ['720p'], audio: true, ...REFERENCES }),
];

/**
 * A task as ModelArk answers it ("Retrieve a video generation task"), as far as it is read: `status`,
 * `content.video_url`, `error` {code, message}, and `usage.completion_tokens`, the tokens it was billed (its
 * reference's samples: 108900 for 5 s of 720p 16:9).
 */
const TASK = z.object({
  status: z.enum(['queued', 'running', 'succeeded', 'failed', 'cancelled', 'expired']),
  content: z.object({ video_url: z.string().nullish() }).nullish(),
  error: z.object({ code: z.string().nullish(), message: z.string().nullish() }).nullish(),
  usage: z.object({ completion_tokens: z.unknown().optional() }).nullish(),
});
/** A create's answer: `{id}`. */
const CREATED = z.object({ id: z.string().min(1) });

/** The images of a create as they go out: each a URL or a data: URI (the frames', and the references' in order). */
export interface SeedanceImages {
  first?: string;
  last?: string;
  references: string[];
}

/**
 * ModelArk's content generation tasks: `POST /contents/generations/tasks` (model; `content`: the prompt as a
 * text item and each frame as an `image_url` item with its role, `first_frame` or `last_frame`; `ratio`,
 * `duration`, `resolution`, `seed`, `generate_audio`, `watermark: false`, `callback_url`), `GET
 * /contents/generations/tasks/{id}` (queued, running, succeeded with `content.video_url`, valid 24 h: the
 * relay stores it at once; failed with `error`, cancelled, expired), `DELETE` of a queued task; a Bearer API
 * key; errors as HTTP statuses with `{error: {code, message}}` (401 credentials, 403 an overdue account, 429
 * its rate limits, 400 a refused request: `…SensitiveContentDetected` is its moderation). It calls back to
 * `callback_url` on each change of state (polled as the safety net). A task cannot be asked for by the
 * caller's own id, so a create whose answer was lost is not looked up.
 */
@Injectable()
export class SeedanceVideoVendor implements VideoVendor, RelayVendor<VendorStatus> {
  static readonly protocol = SEEDANCE.protocol;
  static readonly models = SEEDANCE_MODELS;
  readonly protocol = SeedanceVideoVendor.protocol;
  readonly models = SEEDANCE_MODELS;
  readonly minPollS = SEEDANCE.pollFloorS;
  /** It calls back to `callback_url` (polled as the safety net). */
  readonly callsBack = true;

  constructor(private readonly client: UpstreamClient) {}

  async create(account: VendorAccount, { model, request, callbackUrl, frameImage, referenceImage }: VendorCreate): Promise<{ upstreamId: string; status: VendorStatus }> {
    // a URL, or the gateway's own copy (an upstream may not reach it) as a Base64 data: URI, as Ark takes images
    const image = async (frame: VideoFrame | undefined, position: 'first' | 'last') => (frame?.type === 'image' ? urlOrInline(frame, () => frameImage(position), dataUri) : undefined);
    const images = {
      first: await image(request.firstFrame, 'first'),
      last: await image(request.lastFrame, 'last'),
      references: await Promise.all((request.referenceImages ?? []).map((r, i) => urlOrInline(r, () => referenceImage(i), dataUri))),
    };
    const answer = await this.client.call('POST', `${account.baseUrl}/contents/generations/tasks`, { body: seedanceBody(model, request, images, callbackUrl), auth: account.auth, failFast: true });
    return { upstreamId: readAnswer(CREATED, answer.json, 'the create request').id, status: { state: 'working' } };
  }

  async query(account: VendorAccount, upstreamId: string, once: boolean): Promise<VendorStatus> {
    return seedanceStatus((await this.client.call('GET', this.taskUrl(account, upstreamId), { auth: account.auth, idempotent: true, once })).json);
  }

  /** Ark cancels a task still queued (one running cannot be). */
  async cancel(account: VendorAccount, upstreamId: string): Promise<void> {
    await this.client.call('DELETE', this.taskUrl(account, upstreamId), { auth: account.auth, idempotent: true });
  }

  private taskUrl(account: VendorAccount, upstreamId: string): string {
    return `${account.baseUrl}/contents/generations/tasks/${encodeURIComponent(upstreamId)}`;
  }
}

/**
 * The create's body: the prompt as a text item, the frames as `image_url` items of role first_frame and
 * last_frame, the references of role reference_image; `ratio` adaptive from a first frame on a model that takes
 * its shape from it (`shapeFromImage`: the gateway fitted the frame to the asked ratio; and whenever none is
 * asked), else the asked one (16:9 unless asked, Seedance's default too: a declared model that says nothing of
 * taking the frame's shape is asked the ratio, which ModelArk crops the frame to); `duration` and `resolution`
 * always, what the task is priced at (madeDurationS, madeResolution: the asked ones, else the model's defaults,
 * ModelArk's own for the catalog's models), so that what is made is what was priced; seed; `generate_audio` on
 * the models that make sound; no watermark.
 */
export function seedanceBody(model: VideoModelSpec, request: VideoRequest, images: SeedanceImages, callbackUrl?: string): Record<string, unknown> {
  const item = (url: string | undefined, role: string) => (url === undefined ? [] : [{ type: 'image_url', image_url: { url }, role }]);
  return {
    model: model.id,
    content: [{ type: 'text', text: request.prompt }, ...item(images.first, 'first_frame'), ...item(images.last, 'last_frame'), ...images.references.flatMap((url) => item(url, 'reference_image'))],
    ratio: request.firstFrame && (model.shapeFromImage || !request.aspectRatio) ? 'adaptive' : (request.aspectRatio ?? '16:9'),
    duration: madeDurationS(model, request),
    resolution: madeResolution(model, request),
    ...(request.seed !== undefined ? { seed: request.seed } : {}),
    ...(model.audio ? { generate_audio: request.audio ?? false } : {}),
    watermark: false,
    ...(callbackUrl ? { callback_url: callbackUrl } : {}),
  };
}

/**
 * A task's state, and what it billed: `usage.completion_tokens` (ModelArk's "Retrieve a video generation task"
 * reference: the tokens the output consumed, the figure its video models are priced by; a failed task has no
 * usage, and is not billed). A status it does not document is an answer that cannot be used (UnusableAnswer naming `status`).
 */
export function seedanceStatus(answer: unknown): VendorStatus {
  const task = readAnswer(TASK, answer, 'the poll');
  const billed = billedFigure(task.usage?.completion_tokens, 'tokens');
  const withBilled = billed ? { billed } : {};
  switch (task.status) {
    case 'queued':
    case 'running':
      return { state: 'working' };
    case 'succeeded': {
      const link = task.content?.video_url;
      return link ? { state: 'succeeded', videoUrl: link, ...withBilled } : { state: 'failed', reason: 'the upstream succeeded without a video_url', ...withBilled };
    }
    case 'failed': {
      const code = task.error?.code ?? '';
      const words = task.error?.message ?? '';
      // the code in brackets after the words: …SensitiveContentDetected is its moderation (SEEDANCE.contentRefusal)
      return { state: 'failed', reason: words && code ? `${words} (${code})` : words || code || 'no reason given', ...withBilled };
    }
    case 'cancelled':
    case 'expired':
      return { state: 'failed', reason: `the upstream task was ${task.status}` };
  }
}
