import { Injectable } from '@nestjs/common';
import { UpstreamClient, UpstreamRefused, UpstreamUnavailable } from '../../infra/relay/upstream-client.js';
import { isKlingNotFound, klingEnvelopeData, klingRefusal } from './kling-envelope.js';
import type { VideoModelSpec } from '../contracts/video-request.js';
import { urlOrInline, type VendorCreate, type VendorStatus, type VideoVendor } from '../contracts/video-vendor.js';
import { UnusableAnswer, type VendorAccount } from '../contracts/vendor.js';
import { billedFigure } from '../contracts/vendor-billing.js';
import { KLING } from './kling.vendor.js';

/**
 * Kling's models as its capability map gives them: `std` mode makes 720p and `pro` 1080p, a last frame
 * (`image_tail`) needs `pro`; its image-to-video takes the first frame's shape (no aspect_ratio field).
 */
function kling(id: string, over: Partial<VideoModelSpec> = {}): VideoModelSpec {
  return {
    id,
    durations: [5, 10],
    aspectRatios: ['16:9', '9:16', '1:1'],
    resolutions: ['720p', '1080p'],
    textToVideo: true,
    firstFrame: true,
    lastFrame: true,
    lastFrameResolution: '1080p',
    continues: false,
    loop: false,
    seed: false,
    audio: false,
    negativePrompt: true,
    concepts: false,
    // Kling: "the kling-v2.x models do not support cfg_scale"; camera_control on kling-v1 and kling-v1-5 only
    cfgScale: false,
    cameraControl: false,
    maxPromptChars: 2500,
    shapeFromImage: true,
    // its image rules: at least 300 px a side (a first frame fitted to a ratio is scaled up to it)
    frameMinSide: 300,
    ...over,
  };
}

export const KLING_VIDEO_MODELS: readonly VideoModelSpec[] = [
  // its image_tail is for 5 s only, which a spec cannot say: declared without a last frame rather than risk one dropped
  kling('kling-v1', { cfgScale: true, cameraControl: true, lastFrame: false }),
  kling('kling-v1-5', { textToVideo: false, cfgScale: true, cameraControl: true }),
  // its multi-image2video: up to 4 reference images (`image_list`), without a frame, at an asked ratio
  kling('kling-v1-6', { cfgScale: true, referenceImages: 4, referencesWithFrames: false }),
  kling('kling-v2-master', { resolutions: ['720p'], lastFrame: false }),
  kling('kling-v2-1', { textToVideo: false }),
  kling('kling-v2-1-master', { resolutions: ['1080p'], lastFrame: false }),
  kling('kling-v2-5-turbo'),
  kling('kling-v2-6', { audio: true, lastFrame: false }),
];

/** Models that have one mode (their resolution is fixed): no `mode` is sent. */
const ONE_MODE = new Set(['kling-v2-master', 'kling-v2-1-master']);

interface KlingTask {
  task_id?: unknown;
  task_status?: unknown;
  task_status_msg?: unknown;
  task_result?: { videos?: { url?: unknown }[] } | null;
  /** The units of the account's resource pack the task finally took (a number as a string), on its query and its callback. */
  final_unit_deduction?: unknown;
}

/**
 * Kling's video API (the `model_name` design): `POST /v1/videos/text2video`, `/image2video` (with
 * `image_tail`) or `/multi-image2video` (kling-v1-6: `image_list` of up to 4 `{image}` reference images and an
 * `aspect_ratio`; Kling's API reference, as new-api and the aggregators' pages quote it), `GET …/{task_id}`, its envelope `{code, message, request_id, data}` and states submitted |
 * processing | succeed | failed; the JWT from the channel's access and secret keys. The upstream id kept
 * for a task is `<endpoint>/<task_id>`, as its query needs the endpoint that made it.
 */
@Injectable()
export class KlingVideoVendor implements VideoVendor {
  static readonly protocol = 'kling';
  static readonly models = KLING_VIDEO_MODELS;
  readonly protocol = KlingVideoVendor.protocol;
  readonly models = KLING_VIDEO_MODELS;
  readonly minPollS = KLING.pollFloorS;
  /** It calls back to `callback_url` (polled as the safety net). */
  readonly callsBack = true;

  constructor(private readonly client: UpstreamClient) {}

  async create(account: VendorAccount, { model, request, callbackUrl, taskId, frameImage, referenceImage }: VendorCreate): Promise<{ upstreamId: string; status: VendorStatus }> {
    const endpoint = endpointOf(request);
    // a URL, or Base64 without a data: prefix (the gateway's own copies: an upstream may not reach them)
    const base64 = (bytes: Buffer) => bytes.toString('base64');
    const image = async (frame: typeof request.firstFrame, position: 'first' | 'last') => (frame?.type === 'image' ? urlOrInline(frame, () => frameImage(position), base64) : undefined);
    const [first, last] = [await image(request.firstFrame, 'first'), await image(request.lastFrame, 'last')];
    const list = await Promise.all((request.referenceImages ?? []).map(async (r, i) => ({ image: await urlOrInline(r, () => referenceImage(i), base64) })));
    const resolution = request.resolution ?? (request.lastFrame ? model.lastFrameResolution : undefined);
    const body = {
      model_name: model.id,
      prompt: request.prompt,
      ...(request.negativePrompt ? { negative_prompt: request.negativePrompt } : {}),
      ...(!ONE_MODE.has(model.id) && resolution ? { mode: resolution === '1080p' ? 'pro' : 'std' } : {}),
      ...(request.durationS !== undefined ? { duration: String(request.durationS) } : {}),
      ...(endpoint !== 'image2video' && request.aspectRatio ? { aspect_ratio: request.aspectRatio } : {}),
      ...(request.firstFrame ? { image: first } : {}),
      ...(list.length ? { image_list: list } : {}),
      ...(request.lastFrame ? { image_tail: last } : {}),
      ...(request.audio !== undefined && model.audio ? { sound: request.audio ? 'on' : 'off' } : {}),
      ...(request.cfgScale !== undefined ? { cfg_scale: request.cfgScale } : {}),
      ...(request.cameraControl ? { camera_control: request.cameraControl } : {}),
      ...(callbackUrl ? { callback_url: callbackUrl } : {}),
      external_task_id: taskId,
    };
    // external_task_id is unique per account: a create sent twice is refused the second time, never made twice;
    // a refusal may be Kling recognising our id from a create that did go through (its answer lost): look it up
    let data: KlingTask | null;
    try {
      data = klingEnvelopeData<KlingTask>((await this.client.call('POST', `${account.baseUrl}/v1/videos/${endpoint}`, { body, auth: account.auth, refusal: klingRefusal, failFast: true })).json);
    } catch (err) {
      const earlier = err instanceof UpstreamRefused && err.aboutRequest ? await this.findByOwnId(account, taskId, request) : null;
      if (earlier) return earlier;
      throw err;
    }
    if (typeof data?.task_id !== 'string' || !data.task_id) throw new UnusableAnswer('the upstream answered the create request without a task_id');
    return { upstreamId: `${endpoint}/${data.task_id}`, status: statusOf(data) };
  }

  async query(account: VendorAccount, upstreamId: string, once: boolean): Promise<VendorStatus> {
    const [endpoint, id] = splitId(upstreamId);
    const answer = await this.client.call('GET', `${account.baseUrl}/v1/videos/${endpoint}/${encodeURIComponent(id)}`, { auth: account.auth, refusal: klingRefusal, idempotent: true, once });
    const data = klingEnvelopeData<KlingTask>(answer.json);
    if (!data) throw new UpstreamUnavailable('the upstream answered the query without data', false);
    return statusOf(data);
  }

  /** Kling's query takes our external_task_id in place of its task_id (on the endpoint the create went to). */
  async findByOwnId(account: VendorAccount, taskId: string, request: VendorCreate['request']): Promise<{ upstreamId: string; status: VendorStatus } | null> {
    const endpoint = endpointOf(request);
    try {
      const answer = await this.client.call('GET', `${account.baseUrl}/v1/videos/${endpoint}/${encodeURIComponent(taskId)}`, { auth: account.auth, refusal: klingRefusal, idempotent: true });
      const data = klingEnvelopeData<KlingTask>(answer.json);
      return typeof data?.task_id === 'string' && data.task_id ? { upstreamId: `${endpoint}/${data.task_id}`, status: statusOf(data) } : null;
    } catch (err) {
      if (isKlingNotFound(err)) return null;
      throw err;
    }
  }
}

/** The endpoint a request goes to: reference images to multi-image2video (`image_list`), a first frame to image2video, else text2video. */
function endpointOf(request: VendorCreate['request']): 'multi-image2video' | 'image2video' | 'text2video' {
  return request.referenceImages?.length ? 'multi-image2video' : request.firstFrame ? 'image2video' : 'text2video';
}

function splitId(upstreamId: string): [string, string] {
  const at = upstreamId.indexOf('/');
  return at < 0 ? ['text2video', upstreamId] : [upstreamId.slice(0, at), upstreamId.slice(at + 1)];
}

/**
 * A task's state, and at its end what Kling says it deducted: `data.final_unit_deduction`, "the final number
 * of units deducted for the task", a string, in the query's and the callback's `data` beside `task_info`
 * (Kling's API reference for the video tasks' query and its callback protocol; new-api's Kling adaptor reads
 * the same field). It is in the units of the account's resource pack.
 */
function statusOf(task: KlingTask): VendorStatus {
  const billed = billedFigure(task.final_unit_deduction, 'units');
  switch (task.task_status) {
    case 'succeed': {
      const url = task.task_result?.videos?.[0]?.url;
      return typeof url === 'string' ? { state: 'succeeded', videoUrl: url, ...(billed ? { billed } : {}) } : { state: 'failed', reason: 'the upstream succeeded without a video', ...(billed ? { billed } : {}) };
    }
    case 'failed':
    {
      const reason = typeof task.task_status_msg === 'string' && task.task_status_msg ? task.task_status_msg : 'no reason given';
      return { state: 'failed', reason, ...(billed ? { billed } : {}) };
    }
    default: // submitted, processing
      return { state: 'working' };
  }
}
