import { Injectable } from '@nestjs/common';
import { UpstreamClient } from '../../infra/relay/upstream-client.js';
import type { VideoFrame, VideoModelSpec } from '../contracts/video-request.js';
import { type VendorCreate, type VendorStatus, type VideoVendor } from '../contracts/video-vendor.js';
import { UnusableAnswer, type VendorAccount } from '../contracts/vendor.js';
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

interface Generation {
  id?: unknown;
  state?: unknown;
  failure_reason?: unknown;
  assets?: { video?: unknown; image?: unknown } | null;
}

/**
 * Luma's Dream Machine API (`POST /generations`, `GET /generations/{id}`: queued | dreaming | completed |
 * failed, `failure_reason`, `assets.video` and `.image`), behind a channel whose base is the one before
 * `/generations` (https://api.lumalabs.ai/dream-machine/v1). A gateway speaking this interface's Luma door
 * is the same protocol (its states pending | processing … are read as working).
 */
@Injectable()
export class LumaVendor implements VideoVendor {
  static readonly protocol = 'luma';
  static readonly models = LUMA_MODELS;
  readonly protocol = LumaVendor.protocol;
  readonly models = LUMA_MODELS;
  /** Luma publishes no limit: the schedule (RELAY_POLL_MS and the age back-off) alone decides. */
  readonly minPollS = LUMA.pollFloorS;
  /** It calls back to `callback_url` (polled as the safety net). */
  readonly callsBack = true;

  constructor(private readonly client: UpstreamClient) {}

  async create(account: VendorAccount, { model, request, generationIds, callbackUrl }: VendorCreate): Promise<{ upstreamId: string; status: VendorStatus }> {
    const frame = (f: VideoFrame | undefined, id: string | undefined) => (f?.type === 'image' ? { type: 'image', url: f.url } : f ? { type: 'generation', id } : undefined);
    const keyframes = Object.fromEntries(
      ([['frame0', frame(request.firstFrame, generationIds.first)], ['frame1', frame(request.lastFrame, generationIds.last)]] as const).filter(([, f]) => f !== undefined),
    );
    const body = {
      prompt: request.prompt,
      aspect_ratio: request.aspectRatio ?? '16:9',
      loop: request.loop,
      model: model.id,
      ...(request.resolution ? { resolution: request.resolution } : {}),
      ...(request.durationS !== undefined ? { duration: `${request.durationS}s` } : {}),
      ...(request.concepts?.length ? { concepts: request.concepts.map((key) => ({ key })) } : {}),
      ...(Object.keys(keyframes).length ? { keyframes } : {}),
      ...(callbackUrl ? { callback_url: callbackUrl } : {}),
    };
    const answer = (await this.client.call('POST', `${account.baseUrl}/generations`, { body, auth: account.auth, failFast: true })).json as Generation;
    if (typeof answer.id !== 'string' || !answer.id) throw new UnusableAnswer('the upstream answered the create request without an id');
    return { upstreamId: answer.id, status: statusOf(answer) };
  }

  async query(account: VendorAccount, upstreamId: string, once: boolean): Promise<VendorStatus> {
    const answer = await this.client.call('GET', `${account.baseUrl}/generations/${encodeURIComponent(upstreamId)}`, { auth: account.auth, idempotent: true, once });
    return statusOf(answer.json as Generation);
  }
}

function statusOf(generation: Generation): VendorStatus {
  switch (generation.state) {
    case 'completed':
      return typeof generation.assets?.video === 'string'
        ? { state: 'succeeded', videoUrl: generation.assets.video, ...(typeof generation.assets.image === 'string' ? { thumbnailUrl: generation.assets.image } : {}) }
        : { state: 'failed', reason: 'the upstream completed without a video' };
    case 'failed':
    {
      const reason = typeof generation.failure_reason === 'string' && generation.failure_reason ? generation.failure_reason : 'no reason given';
      return { state: 'failed', reason };
    }
    default: // queued, dreaming, pending, processing
      return { state: 'working' };
  }
}
