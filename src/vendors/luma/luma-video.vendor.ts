import { Injectable } from '@nestjs/common';
import { z } from 'zod';
import { UpstreamClient } from '../../infra/relay/upstream-client.js';
import type { RelayVendor } from '../contracts/relay.js';
import { sentDurationS, sentResolution, type VideoFrame, type VideoModelSpec, type VideoRequest } from '../contracts/video-request.js';
import { type VendorCreate, type VendorStatus, type VideoVendor } from '../contracts/video-vendor.js';
import type { VendorAccount } from '../contracts/vendor.js';
import { readAnswer } from '../contracts/vendor-answer.js';
import { LUMA } from './luma.vendor.js';

const ASPECTS = ['1:1', '16:9', '9:16', '4:3', '3:4', '21:9', '9:21'];

/** Luma's Ray models (its API's enum: per-model limits are not published, so all share one row). */
function ray(id: string): VideoModelSpec {
  return {
    id,
    durations: [5, 9],
    aspectRatios: ASPECTS,
    resolutions: ['540p', '720p', '1080p', '4k'],
    textToVideo: true,
    firstFrame: true,
    lastFrame: true,
    lastFrameAlone: true,
    continues: true,
    loop: true,
    seed: false,
    audio: false,
    negativePrompt: false,
    concepts: true,
    maxPromptChars: 5000,
  };
}

export const LUMA_MODELS: readonly VideoModelSpec[] = [ray('ray-2'), ray('ray-flash-2'), ray('ray-1-6')];

/**
 * A generation as Luma answers it (the lumaai SDK's `Generation`: `id`, `state` queued | dreaming | completed |
 * failed, `failure_reason`, `assets.video` and `.image`), as far as it is read. A gateway speaking the Luma door
 * answers its own states (pending, processing …): any state but completed and failed is work in progress.
 */
const GENERATION = z.object({
  state: z.string().nullish(),
  failure_reason: z.string().nullish(),
  assets: z.object({ video: z.string().nullish(), image: z.string().nullish() }).nullish(),
});
const CREATED = GENERATION.extend({ id: z.string().min(1) });

/**
 * Luma's Dream Machine API (`POST /generations`, `GET /generations/{id}`: queued | dreaming | completed |
 * failed, `failure_reason`, `assets.video` and `.image`), behind a channel whose base is the one before
 * `/generations` (https://api.lumalabs.ai/dream-machine/v1). A gateway speaking this interface's Luma door
 * is the same protocol (its states pending | processing … are read as working).
 */
@Injectable()
export class LumaVendor implements VideoVendor, RelayVendor<VendorStatus> {
  static readonly protocol = LUMA.protocol;
  static readonly models = LUMA_MODELS;
  readonly protocol = LumaVendor.protocol;
  readonly models = LUMA_MODELS;
  /** Luma publishes no limit: the schedule (RELAY_POLL_MS and the age back-off) alone decides. */
  readonly minPollS = LUMA.pollFloorS;
  /** It calls back to `callback_url` (polled as the safety net). */
  readonly callsBack = true;

  constructor(private readonly client: UpstreamClient) {}

  async create(account: VendorAccount, { model, request, generationIds, callbackUrl }: VendorCreate): Promise<{ upstreamId: string; status: VendorStatus }> {
    const body = lumaBody(model, request, generationIds, callbackUrl);
    return lumaCreated((await this.client.call('POST', `${account.baseUrl}/generations`, { body, auth: account.auth, failFast: true })).json);
  }

  async query(account: VendorAccount, upstreamId: string, once: boolean): Promise<VendorStatus> {
    return lumaStatus((await this.client.call('GET', `${account.baseUrl}/generations/${encodeURIComponent(upstreamId)}`, { auth: account.auth, idempotent: true, once })).json);
  }
}

/**
 * The create's body (the SDK's `GenerationCreateParams`): the prompt, its aspect ratio (16:9 unless asked),
 * `loop`, the model, the resolution and duration (`"5s"`) when asked, concepts by key, and keyframes `frame0`
 * (first) and `frame1` (last), each an image by URL or an earlier generation by its id.
 */
export function lumaBody(model: VideoModelSpec, request: VideoRequest, generationIds: VendorCreate['generationIds'], callbackUrl?: string): Record<string, unknown> {
  const frame = (f: VideoFrame | undefined, id: string | undefined) => (f?.type === 'image' ? { type: 'image', url: f.url } : f ? { type: 'generation', id } : undefined);
  const keyframes = Object.fromEntries(
    ([['frame0', frame(request.firstFrame, generationIds.first)], ['frame1', frame(request.lastFrame, generationIds.last)]] as const).filter(([, f]) => f !== undefined),
  );
  const resolution = sentResolution(model, request);
  const duration = sentDurationS(model, request);
  return {
    prompt: request.prompt,
    aspect_ratio: request.aspectRatio ?? '16:9',
    loop: request.loop,
    model: model.id,
    ...(resolution ? { resolution } : {}),
    ...(duration !== undefined ? { duration: `${duration}s` } : {}),
    ...(request.concepts?.length ? { concepts: request.concepts.map((key) => ({ key })) } : {}),
    ...(Object.keys(keyframes).length ? { keyframes } : {}),
    ...(callbackUrl ? { callback_url: callbackUrl } : {}),
  };
}

/** A create's answer: the generation's id (UnusableAnswer naming `id` without one) and its state. */
export function lumaCreated(answer: unknown): { upstreamId: string; status: VendorStatus } {
  const generation = readAnswer(CREATED, answer, 'the create request');
  return { upstreamId: generation.id, status: lumaStatus(generation) };
}

/** A generation's state: completed with its video (and thumbnail), failed with its words, else working. */
export function lumaStatus(answer: unknown): VendorStatus {
  const generation = readAnswer(GENERATION, answer, 'the generation');
  switch (generation.state) {
    case 'completed': {
      const assets = generation.assets;
      return assets?.video ? { state: 'succeeded', videoUrl: assets.video, ...(assets.image ? { thumbnailUrl: assets.image } : {}) } : { state: 'failed', reason: 'the upstream completed without a video' };
    }
    case 'failed':
      return { state: 'failed', reason: generation.failure_reason || 'no reason given' };
    default: // queued, dreaming, pending, processing
      return { state: 'working' };
  }
}
