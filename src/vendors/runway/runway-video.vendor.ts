import { Injectable } from '@nestjs/common';
import { z } from 'zod';
import { UpstreamClient, UpstreamRefused } from '../../infra/relay/upstream-client.js';
import type { RelayVendor } from '../contracts/relay.js';
import { madeDurationS, type VideoModelSpec, type VideoRequest } from '../contracts/video-request.js';
import { dataUri, type VendorCreate, type VendorStatus, type VideoVendor } from '../contracts/video-vendor.js';
import type { VendorAccount } from '../contracts/vendor.js';
import { readAnswer } from '../contracts/vendor-answer.js';
import { billedFigure } from '../contracts/vendor-billing.js';
import { RUNWAY, RUNWAY_VERSION } from './runway.vendor.js';

/** Runway takes a data: URI under 5 MB encoded. */
const DATA_URI_MAX = 5 * 1024 * 1024;

/** Runway's `ratio` for each frame shape and height it makes. */
const RATIOS: Record<string, string> = {
  '16:9@720p': '1280:720',
  '9:16@720p': '720:1280',
  '4:3@720p': '1104:832',
  '3:4@720p': '832:1104',
  '1:1@720p': '960:960',
  '21:9@720p': '1584:672',
  '16:9@1080p': '1920:1080',
  '9:16@1080p': '1080:1920',
};
const GEN4_SIZES = ['16:9@720p', '9:16@720p', '4:3@720p', '3:4@720p', '1:1@720p', '21:9@720p'];
const VEO_SIZES = ['16:9@720p', '9:16@720p', '16:9@1080p', '9:16@1080p'];

function runway(id: string, sizes: string[], over: Partial<VideoModelSpec>): VideoModelSpec {
  return {
    id,
    durations: [5, 10],
    aspectRatios: [...new Set(sizes.map((s) => s.split('@')[0]))],
    resolutions: [...new Set(sizes.map((s) => s.split('@')[1]))],
    sizes,
    textToVideo: true,
    firstFrame: true,
    lastFrame: false,
    continues: false,
    loop: false,
    seed: true,
    audio: false,
    negativePrompt: false,
    concepts: false,
    maxPromptChars: 1000,
    ...over,
  };
}

/** Runway's own models and, through it, Google's Veo and ByteDance's Seedance (SDK 4.x's types). */
export const RUNWAY_MODELS: readonly VideoModelSpec[] = [
  // a duration is always sent (Runway requires one): 5 s when none was asked
  runway('gen4.5', GEN4_SIZES, { durations: [2, 3, 4, 5, 6, 7, 8, 9, 10], defaultDurationS: 5 }),
  runway('gen4_turbo', GEN4_SIZES, { textToVideo: false }),
  runway('veo3.1', VEO_SIZES, { durations: [4, 6, 8], lastFrame: true, audio: true }),
  runway('veo3.1_fast', VEO_SIZES, { durations: [4, 6, 8], lastFrame: true, audio: true }),
  runway('seedance2', ['16:9@720p', '9:16@720p', '1:1@720p'], { lastFrame: true, audio: true }),
];

/**
 * A task as `GET /v1/tasks/{id}` answers it (`@runwayml/sdk` 4.20's TaskRetrieveResponse), as far as it is read:
 * `status`, `output` (URLs), `failure` and `failureCode`, and on a task that ended (SUCCEEDED, FAILED, CANCELLED)
 * `cost.credits`, what it finally cost.
 */
const TASK = z.object({
  status: z.string(),
  output: z.array(z.string()).nullish(),
  failure: z.string().nullish(),
  failureCode: z.string().nullish(),
  cost: z.object({ credits: z.unknown().optional() }).nullish(),
});
/** A create's answer: `{id}`. */
const CREATED = z.object({ id: z.string().min(1) });

/** The images of a create as they go out: each an HTTPS URL or a data: URI. */
export interface RunwayFrames {
  first?: string;
  last?: string;
}

/**
 * Runway's API: `POST /v1/image_to_video` or `/v1/text_to_video` ({id}), `GET /v1/tasks/{id}` (PENDING |
 * THROTTLED | RUNNING | SUCCEEDED | FAILED | CANCELLED, `output` links that expire in 24–48 h, so the
 * result is stored at once), Bearer key and `X-Runway-Version`. Images go as HTTPS URLs or, for any other
 * URL (or a sample), inline as `data:` URIs, the only two forms Runway fetches.
 */
@Injectable()
export class RunwayVendor implements VideoVendor, RelayVendor<VendorStatus> {
  static readonly protocol = RUNWAY.protocol;
  static readonly models = RUNWAY_MODELS;
  readonly protocol = RunwayVendor.protocol;
  readonly models = RUNWAY_MODELS;
  /** Runway asks not to expect updates more often than every 5 s. */
  readonly minPollS = RUNWAY.pollFloorS;

  constructor(private readonly client: UpstreamClient) {}

  async create(account: VendorAccount, create: VendorCreate): Promise<{ upstreamId: string; status: VendorStatus }> {
    const { model, request } = create;
    // the ratio first: nothing is read or sent for a shape Runway does not make
    runwayRatio(request);
    const frames = {
      ...(request.firstFrame ? { first: await this.imageUri(create, 'first') } : {}),
      ...(request.lastFrame ? { last: await this.imageUri(create, 'last') } : {}),
    };
    const answer = await this.calling(() =>
      this.client.call('POST', `${account.baseUrl}/v1/${runwayPath(frames)}`, { body: runwayBody(model, request, frames), auth: account.auth, failFast: true, headers: { 'x-runway-version': RUNWAY_VERSION } }),
    );
    return { upstreamId: readAnswer(CREATED, answer.json, 'the create request').id, status: { state: 'working' } };
  }

  async query(account: VendorAccount, upstreamId: string, once: boolean): Promise<VendorStatus> {
    const answer = await this.calling(() =>
      this.client.call('GET', `${account.baseUrl}/v1/tasks/${encodeURIComponent(upstreamId)}`, { auth: account.auth, idempotent: true, once, headers: { 'x-runway-version': RUNWAY_VERSION } }),
    );
    return runwayStatus(answer.json);
  }

  /** `DELETE /v1/tasks/{id}`: cancels a task still PENDING, THROTTLED or RUNNING (204, no body). */
  async cancel(account: VendorAccount, upstreamId: string): Promise<void> {
    await this.client.call('DELETE', `${account.baseUrl}/v1/tasks/${encodeURIComponent(upstreamId)}`, { auth: account.auth, idempotent: true, headers: { accept: '*/*', 'x-runway-version': RUNWAY_VERSION } });
  }

  /** An HTTPS URL as it is; anything else (an http URL, a sample, the gateway's own copy) inline, as a data: URI. */
  private async imageUri(create: VendorCreate, position: 'first' | 'last'): Promise<string> {
    const frame = position === 'first' ? create.request.firstFrame : create.request.lastFrame;
    if (frame?.type === 'image' && frame.url.startsWith('https://') && !frame.hosted) return frame.url;
    return runwayInline(await create.frameImage(position), position);
  }

  /** Runway's refusals, its lack of credit read as the account's (`runwayCreditRefusal`). */
  private async calling<T>(work: () => Promise<T>): Promise<T> {
    try {
      return await work();
    } catch (err) {
      throw runwayCreditRefusal(err);
    }
  }
}

/** Runway says a lack of credit under 400 ("You do not have enough credits"): the account's, not the task's; any other error as it is. */
export function runwayCreditRefusal(err: unknown): unknown {
  return err instanceof UpstreamRefused && err.kind === 'request' && /enough credits/i.test(err.message) ? new UpstreamRefused(err.message, err.status, 'account') : err;
}

/** Its `ratio` for the asked shape and height (16:9 and 720p unless asked); one it does not make is refused. */
export function runwayRatio(request: VideoRequest): string {
  const ratio = RATIOS[`${request.aspectRatio ?? '16:9'}@${request.resolution ?? '720p'}`];
  if (!ratio) throw new UpstreamRefused(`Runway makes no ${request.aspectRatio ?? '16:9'} video at ${request.resolution ?? '720p'}`, 0);
  return ratio;
}

/** The endpoint: image_to_video with a frame, else text_to_video. */
export function runwayPath(frames: RunwayFrames): 'image_to_video' | 'text_to_video' {
  return frames.first !== undefined || frames.last !== undefined ? 'image_to_video' : 'text_to_video';
}

/**
 * The create's body (the SDK's ImageToVideoCreateParams and TextToVideoCreateParams): `promptText`, `ratio`,
 * `duration` (5 s unless asked, or the model's first where it makes no 5 s), `promptImage` as the first frame's
 * URI alone or as `[{uri, position}]` with a last frame, `seed`, and `audio` on the models that make sound.
 */
export function runwayBody(model: VideoModelSpec, request: VideoRequest, frames: RunwayFrames): Record<string, unknown> {
  const positioned = [...(frames.first !== undefined ? [{ uri: frames.first, position: 'first' }] : []), ...(frames.last !== undefined ? [{ uri: frames.last, position: 'last' }] : [])];
  return {
    model: model.id,
    promptText: request.prompt,
    ratio: runwayRatio(request),
    duration: madeDurationS(model, request),
    ...(positioned.length === 1 && frames.first !== undefined ? { promptImage: frames.first } : positioned.length ? { promptImage: positioned } : {}),
    ...(request.seed !== undefined ? { seed: request.seed } : {}),
    ...(model.audio ? { audio: request.audio ?? false } : {}),
  };
}

/** A frame's bytes inline, as a data: URI under 5 MB encoded (its type read from its magic numbers, nothing decoded); none read, or too large, refused. */
export function runwayInline(bytes: Buffer | undefined, position: 'first' | 'last'): string {
  if (!bytes) throw new UpstreamRefused(`the ${position} frame could not be read`, 0);
  const uri = dataUri(bytes);
  if (uri.length >= DATA_URI_MAX) throw new UpstreamRefused(`the ${position} frame is too large for Runway inline (${uri.length} bytes encoded, under 5 MB taken); give it as an https URL`, 0);
  return uri;
}

/**
 * A task's state, and at its end what Runway charged: `cost.credits`, "final cost in credits for a terminal
 * task" (fully refunded tasks report 0), on SUCCEEDED, FAILED and CANCELLED tasks (its API reference for
 * `GET /v1/tasks/{id}`, as `@runwayml/sdk` 4.20's TaskRetrieveResponse types it). Running tasks carry an
 * `estimatedCost`, which is not what was billed and is not read.
 */
export function runwayStatus(answer: unknown): VendorStatus {
  const task = readAnswer(TASK, answer, 'the poll');
  const billed = billedFigure(task.cost?.credits, 'credits');
  const withBilled = billed ? { billed } : {};
  switch (task.status) {
    case 'SUCCEEDED': {
      const url = task.output?.[0];
      return url ? { state: 'succeeded', videoUrl: url, ...withBilled } : { state: 'failed', reason: 'the upstream succeeded without a video', ...withBilled };
    }
    case 'FAILED': {
      const words = task.failure || 'no reason given';
      // the code in brackets after the words: SAFETY.INPUT.*, SAFETY.OUTPUT.*, INPUT_PREPROCESSING.SAFETY.* are Runway's moderation (RUNWAY.contentRefusal)
      return { state: 'failed', reason: task.failureCode ? `${words} (${task.failureCode})` : words, ...withBilled };
    }
    case 'CANCELLED':
      return { state: 'failed', reason: 'the upstream task was cancelled', ...withBilled };
    default: // PENDING, THROTTLED, RUNNING
      return { state: 'working' };
  }
}
