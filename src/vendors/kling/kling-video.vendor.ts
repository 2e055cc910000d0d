import { Injectable } from '@nestjs/common';
import { z } from 'zod';
import { UpstreamClient, UpstreamRefused } from '../../infra/relay/upstream-client.js';
import type { RelayVendor } from '../contracts/relay.js';
import { sentDurationS, sentResolution, type VideoModelSpec, type VideoRequest } from '../contracts/video-request.js';
import { urlOrInline, type VendorCreate, type VendorStatus, type VideoVendor } from '../contracts/video-vendor.js';
import type { VendorAccount } from '../contracts/vendor.js';
import { readAnswer } from '../contracts/vendor-answer.js';
import { billedFigure } from '../contracts/vendor-billing.js';
import { KlingTasks } from './kling-tasks.js';
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
/** Kling's modes by the resolution they make: the only resolutions its API has words for. */
const MODES: Readonly<Record<string, string>> = { '720p': 'std', '1080p': 'pro' };

/** The endpoints of its video tasks, under /v1/videos/. */
const ENDPOINTS = ['text2video', 'image2video', 'multi-image2video'] as const;
export type KlingVideoEndpoint = (typeof ENDPOINTS)[number];

/**
 * A video task as its create, query and callback carry it, as far as it is read: its status and words, its
 * videos, and `final_unit_deduction`, the units of the account's resource pack it finally took (a number as a
 * string; read by `billedFigure`, which leaves out what is not an amount).
 */
const VIDEO_TASK = z.object({
  task_status: z.string().optional(),
  task_status_msg: z.string().nullish(),
  task_result: z.object({ videos: z.array(z.object({ url: z.string().nullish() })).nullish() }).nullish(),
  final_unit_deduction: z.unknown().optional(),
});

/** The images of a create as they go out: each a URL or raw Base64 (the frames' and the references', in order). */
export interface KlingVideoImages {
  first?: string;
  last?: string;
  references: string[];
}

/**
 * Kling's video API (the `model_name` design): `POST /v1/videos/text2video`, `/image2video` (with
 * `image_tail`) or `/multi-image2video` (kling-v1-6: `image_list` of up to 4 `{image}` reference images and an
 * `aspect_ratio`; Kling's API reference, as new-api and the aggregators' pages quote it), `GET …/{task_id}`, its envelope `{code, message, request_id, data}` and states submitted |
 * processing | succeed | failed; the JWT from the channel's access and secret keys. The upstream id kept
 * for a task is `<endpoint>/<task_id>`, as its query needs the endpoint that made it. Our task id goes as
 * `external_task_id` (unique per account: a create sent twice is refused the second time, never made twice;
 * a refusal may be Kling recognising our id from a create that did go through, its answer lost: it is looked
 * up, `KlingTasks`).
 */
@Injectable()
export class KlingVideoVendor implements VideoVendor, RelayVendor<VendorStatus> {
  static readonly protocol = KLING.protocol;
  static readonly models = KLING_VIDEO_MODELS;
  readonly protocol = KlingVideoVendor.protocol;
  readonly models = KLING_VIDEO_MODELS;
  readonly minPollS = KLING.pollFloorS;
  /** It calls back to `callback_url` (polled as the safety net). */
  readonly callsBack = true;

  private readonly tasks: Record<KlingVideoEndpoint, KlingTasks<object, VendorStatus>>;

  constructor(client: UpstreamClient) {
    this.tasks = Object.fromEntries(ENDPOINTS.map((e) => [e, new KlingTasks(client, `/v1/videos/${e}`, klingVideoStatus)])) as KlingVideoVendor['tasks'];
  }

  async create(account: VendorAccount, { model, request, callbackUrl, taskId, frameImage, referenceImage }: VendorCreate): Promise<{ upstreamId: string; status: VendorStatus }> {
    // a URL, or Base64 without a data: prefix (the gateway's own copies: an upstream may not reach them)
    const base64 = (bytes: Buffer) => bytes.toString('base64');
    const image = async (frame: VideoRequest['firstFrame'], position: 'first' | 'last') => (frame?.type === 'image' ? urlOrInline(frame, () => frameImage(position), base64) : undefined);
    const images = {
      first: await image(request.firstFrame, 'first'),
      last: await image(request.lastFrame, 'last'),
      references: await Promise.all((request.referenceImages ?? []).map((r, i) => urlOrInline(r, () => referenceImage(i), base64))),
    };
    const endpoint = klingVideoEndpoint(request);
    const created = await this.tasks[endpoint].create(account, klingVideoBody(model, request, images, callbackUrl), taskId);
    return { upstreamId: `${endpoint}/${created.upstreamId}`, status: created.status };
  }

  query(account: VendorAccount, upstreamId: string, once: boolean): Promise<VendorStatus> {
    const [endpoint, id] = splitKlingVideoId(upstreamId);
    return this.tasks[endpoint].query(account, id, once);
  }

  /** Kling's query takes our external_task_id in place of its task_id (on the endpoint the create went to). */
  async findByOwnId(account: VendorAccount, taskId: string, request: VideoRequest): Promise<{ upstreamId: string; status: VendorStatus } | null> {
    const endpoint = klingVideoEndpoint(request);
    const found = await this.tasks[endpoint].findByOwnId(account, taskId);
    return found ? { upstreamId: `${endpoint}/${found.upstreamId}`, status: found.status } : null;
  }
}

/** The endpoint a request goes to: reference images to multi-image2video (`image_list`), a first frame to image2video, else text2video. */
export function klingVideoEndpoint(request: VideoRequest): KlingVideoEndpoint {
  return request.referenceImages?.length ? 'multi-image2video' : request.firstFrame ? 'image2video' : 'text2video';
}

/**
 * The create's body (without `external_task_id`, which KlingTasks adds): `mode` std for 720p and pro for 1080p
 * (a last frame without a resolution asks the model's `lastFrameResolution`; the one-mode models take none),
 * `duration` as a string, `aspect_ratio` except on image2video (the frame's shape is the video's), `sound` on
 * the models that make it.
 */
export function klingVideoBody(model: VideoModelSpec, request: VideoRequest, images: KlingVideoImages, callbackUrl?: string): Record<string, unknown> {
  const endpoint = klingVideoEndpoint(request);
  const resolution = sentResolution(model, request);
  const duration = sentDurationS(model, request);
  // a resolution without a mode (a declared model's 4k) is refused, never sent as another
  if (resolution && !ONE_MODE.has(model.id) && !MODES[resolution]) throw new UpstreamRefused(`Kling makes no video at ${resolution} (its modes make 720p and 1080p)`, 0);
  return {
    model_name: model.id,
    prompt: request.prompt,
    ...(request.negativePrompt ? { negative_prompt: request.negativePrompt } : {}),
    ...(!ONE_MODE.has(model.id) && resolution ? { mode: MODES[resolution] } : {}),
    ...(duration !== undefined ? { duration: String(duration) } : {}),
    ...(endpoint !== 'image2video' && request.aspectRatio ? { aspect_ratio: request.aspectRatio } : {}),
    ...(request.firstFrame ? { image: images.first } : {}),
    ...(images.references.length ? { image_list: images.references.map((image) => ({ image })) } : {}),
    ...(request.lastFrame ? { image_tail: images.last } : {}),
    ...(request.audio !== undefined && model.audio ? { sound: request.audio ? 'on' : 'off' } : {}),
    ...(request.cfgScale !== undefined ? { cfg_scale: request.cfgScale } : {}),
    ...(request.cameraControl ? { camera_control: request.cameraControl } : {}),
    ...(callbackUrl ? { callback_url: callbackUrl } : {}),
  };
}

/** An upstream id kept as `<endpoint>/<task_id>` split; a bare id (kept before the endpoints were) is text2video's. */
export function splitKlingVideoId(upstreamId: string): [KlingVideoEndpoint, string] {
  const at = upstreamId.indexOf('/');
  const endpoint = upstreamId.slice(0, at) as KlingVideoEndpoint;
  return at < 0 || !ENDPOINTS.includes(endpoint) ? ['text2video', upstreamId] : [endpoint, upstreamId.slice(at + 1)];
}

/**
 * A task's state (its `data`, out of the envelope), and at its end what Kling says it deducted:
 * `data.final_unit_deduction`, "the final number of units deducted for the task", a string, in the query's and
 * the callback's `data` beside `task_info` (Kling's API reference for the video tasks' query and its callback
 * protocol; new-api's Kling adaptor reads the same field). It is in the units of the account's resource pack.
 */
export function klingVideoStatus(answer: unknown): VendorStatus {
  const task = readAnswer(VIDEO_TASK, answer, 'the poll');
  const billed = billedFigure(task.final_unit_deduction, 'units');
  const withBilled = billed ? { billed } : {};
  switch (task.task_status) {
    case 'succeed': {
      const url = task.task_result?.videos?.[0]?.url;
      return url ? { state: 'succeeded', videoUrl: url, ...withBilled } : { state: 'failed', reason: 'the upstream succeeded without a video', ...withBilled };
    }
    case 'failed':
      return { state: 'failed', reason: task.task_status_msg || 'no reason given', ...withBilled };
    default: // submitted, processing
      return { state: 'working' };
  }
}
