import { Injectable } from '@nestjs/common';
import { z } from 'zod';
import { UpstreamClient } from '../../infra/relay/upstream-client.js';
import type { RelayVendor } from '../contracts/relay.js';
import { sentDurationS, sentResolution, type VideoModelSpec, type VideoRequest } from '../contracts/video-request.js';
import { type VendorCreate, type VendorStatus, type VideoVendor } from '../contracts/video-vendor.js';
import type { VendorAccount } from '../contracts/vendor.js';
import { readAnswer } from '../contracts/vendor-answer.js';
import { BASE_RESP, minimaxChecked } from './minimax-answer.js';
import { MINIMAX } from './minimax.vendor.js';

/**
 * MiniMax's models as its video generation pages give them (platform.minimax.io, "Video Generation"): a
 * prompt-only video is 16:9 (no aspect parameter); from a first frame it takes the image's shape. Hailuo 2.3
 * and 02 make 6 or 10 s at 768P and 6 s at 1080P (their 512P is for image-to-video only and left out: no
 * normalized resolution of ours is 512 px high); the 01 series makes 6 s at 720P. Hailuo 02 alone takes a
 * last frame. Sources disagreed on durations (a reseller's 5/10 against MiniMax's own 6/10): MiniMax's
 * pages are followed.
 */
function minimax(id: string, over: Partial<VideoModelSpec>): VideoModelSpec {
  return {
    id,
    durations: [6, 10],
    aspectRatios: ['16:9'],
    resolutions: ['768p', '1080p'],
    durationsAt: { '1080p': [6] },
    textToVideo: true,
    firstFrame: true,
    lastFrame: false,
    continues: false,
    loop: false,
    seed: false,
    audio: false,
    negativePrompt: false,
    concepts: false,
    maxPromptChars: 2000,
    shapeFromImage: true,
    ...over,
  };
}

export const MINIMAX_VIDEO_MODELS: readonly VideoModelSpec[] = [
  minimax('MiniMax-Hailuo-2.3', {}),
  minimax('MiniMax-Hailuo-2.3-Fast', { textToVideo: false }),
  minimax('MiniMax-Hailuo-02', { lastFrame: true, lastFrameResolution: undefined }),
  minimax('T2V-01', { firstFrame: false, durations: [6], resolutions: ['720p'], durationsAt: undefined }),
  minimax('T2V-01-Director', { firstFrame: false, durations: [6], resolutions: ['720p'], durationsAt: undefined }),
  minimax('I2V-01', { textToVideo: false, durations: [6], resolutions: ['720p'], durationsAt: undefined }),
  minimax('I2V-01-Director', { textToVideo: false, durations: [6], resolutions: ['720p'], durationsAt: undefined }),
];


/** A create's answer: `{task_id, base_resp}`. */
const CREATED = z.object({ task_id: z.string().min(1) });
/** A query's answer: `{task_id, status, file_id, base_resp}` (file_id a string; older answers gave a number). */
const QUERIED = BASE_RESP.extend({ status: z.string().nullish(), file_id: z.union([z.string(), z.number()]).nullish() });
/** The file retrieval's answer: `{file: {file_id, filename, download_url, …}, base_resp}`. */
const FILE = z.object({ file: z.object({ download_url: z.string().nullish() }).nullish() });

/**
 * MiniMax's video API: `POST /v1/video_generation` (model, prompt, duration, resolution as "768P",
 * first_frame_image and last_frame_image as URLs), `GET /v1/query/video_generation?task_id=` (Preparing,
 * Queueing, Processing, Success, Fail; `file_id` on success), `GET /v1/files/retrieve?file_id=` for the
 * video's download link (valid 9 h: the relay stores the video at once); a Bearer API key; errors under
 * HTTP 200 as `base_resp.status_code`. The base URL is the one before /v1/ (https://api.minimax.io, or
 * https://api.minimaxi.com in mainland China). No callback is asked for: MiniMax's first call is a challenge
 * that must be echoed, which the gateway's callback route (it reads no bodies) does not answer; its tasks are
 * polled. A task cannot be asked for by the caller's own id, so a create whose answer was lost is not looked up.
 */
@Injectable()
export class MinimaxVideoVendor implements VideoVendor, RelayVendor<VendorStatus> {
  static readonly protocol = MINIMAX.protocol;
  static readonly models = MINIMAX_VIDEO_MODELS;
  readonly protocol = MinimaxVideoVendor.protocol;
  readonly models = MINIMAX_VIDEO_MODELS;
  /** Not documented; MiniMax's own CLI polls every 5 s. */
  readonly minPollS = MINIMAX.pollFloorS;

  constructor(private readonly client: UpstreamClient) {}

  async create(account: VendorAccount, { model, request }: VendorCreate): Promise<{ upstreamId: string; status: VendorStatus }> {
    const answer = await this.client.call('POST', `${account.baseUrl}/v1/video_generation`, { body: minimaxBody(model, request), auth: account.auth, failFast: true });
    return { upstreamId: minimaxCreated(answer.json), status: { state: 'working' } };
  }

  async query(account: VendorAccount, upstreamId: string, once: boolean): Promise<VendorStatus> {
    const url = `${account.baseUrl}/v1/query/video_generation?task_id=${encodeURIComponent(upstreamId)}`;
    const queried = minimaxQueried((await this.client.call('GET', url, { auth: account.auth, idempotent: true, once })).json);
    if (!('fileId' in queried)) return queried;
    const file = await this.client.call('GET', `${account.baseUrl}/v1/files/retrieve?file_id=${encodeURIComponent(queried.fileId)}`, { auth: account.auth, idempotent: true, once });
    return minimaxFileStatus(file.json);
  }
}

/** The create's body: model, prompt, duration, resolution in its capitals ("768P"), the frames by URL. */
export function minimaxBody(model: VideoModelSpec, request: VideoRequest): Record<string, unknown> {
  const image = (frame: VideoRequest['firstFrame']) => (frame?.type === 'image' ? frame.url : undefined);
  const duration = sentDurationS(model, request);
  const resolution = sentResolution(model, request);
  return {
    model: model.id,
    prompt: request.prompt,
    ...(duration !== undefined ? { duration } : {}),
    ...(resolution ? { resolution: resolution.toUpperCase() } : {}),
    ...(request.firstFrame ? { first_frame_image: image(request.firstFrame) } : {}),
    ...(request.lastFrame ? { last_frame_image: image(request.lastFrame) } : {}),
  };
}

/** A create's answer: its base_resp checked, then its task_id (UnusableAnswer naming `task_id` without one). */
export function minimaxCreated(json: Record<string, unknown>): string {
  return readAnswer(CREATED, minimaxChecked(json, true), 'the create request').task_id;
}

/**
 * A query's answer: failed with its words (its reason in base_resp, with its code: 1027, the output judged
 * sensitive, is MINIMAX.contentRefusal), working, or its success's `file_id`, whose link the file retrieval
 * gives. The status is read case-insensitively: the query answers Success/Fail, its callbacks and CLI spell
 * them otherwise.
 */
export function minimaxQueried(json: Record<string, unknown>): VendorStatus | { fileId: string } {
  const answer = readAnswer(QUERIED, json, 'the poll');
  const status = answer.status?.toLowerCase() ?? '';
  if (status.startsWith('fail')) {
    const message = answer.base_resp?.status_msg;
    const code = answer.base_resp?.status_code;
    const words = message && message !== 'success' ? message : 'no reason given';
    return { state: 'failed', reason: code ? `${words} (code ${code})` : words };
  }
  minimaxChecked(json, false);
  if (status !== 'success') return { state: 'working' };
  if (answer.file_id === undefined || answer.file_id === null || answer.file_id === '') return { state: 'failed', reason: 'the upstream succeeded without a file_id' };
  return { fileId: String(answer.file_id) };
}

/** The file retrieval's answer: its base_resp checked, then the video's download link. */
export function minimaxFileStatus(json: Record<string, unknown>): VendorStatus {
  const link = readAnswer(FILE, minimaxChecked(json, false), 'the file query').file?.download_url;
  return link ? { state: 'succeeded', videoUrl: link } : { state: 'failed', reason: 'the upstream succeeded without a download_url' };
}
