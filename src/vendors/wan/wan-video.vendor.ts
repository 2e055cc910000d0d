import { Injectable } from '@nestjs/common';
import { z } from 'zod';
import { UpstreamClient, UpstreamRefused } from '../../infra/relay/upstream-client.js';
import type { RelayVendor } from '../contracts/relay.js';
import { sentDurationS, sentResolution, type VideoModelSpec, type VideoRequest } from '../contracts/video-request.js';
import { type VendorCreate, type VendorStatus, type VideoVendor } from '../contracts/video-vendor.js';
import { UnusableAnswer, type VendorAccount } from '../contracts/vendor.js';
import { readAnswer } from '../contracts/vendor-answer.js';
import { billedFigure, type VendorBilled } from '../contracts/vendor-billing.js';
import { dashscopeRefusal, WAN } from './wan.vendor.js';

/**
 * The text-to-video `size` (`W*H`) of each frame shape and tier, as the API reference's table gives them (its
 * 4:3 and 3:4 are 1088*832 and 1632*1248, not exactly 4:3); its 480P tier for a model a channel declares with
 * 480p (the catalog's models are listed at 720p and 1080p).
 */
const SIZES: Readonly<Record<string, string>> = {
  '16:9@480p': '832*480',
  '9:16@480p': '480*832',
  '1:1@480p': '624*624',
  '16:9@720p': '1280*720',
  '9:16@720p': '720*1280',
  '1:1@720p': '960*960',
  '4:3@720p': '1088*832',
  '3:4@720p': '832*1088',
  '16:9@1080p': '1920*1080',
  '9:16@1080p': '1080*1920',
  '1:1@1080p': '1440*1440',
  '4:3@1080p': '1632*1248',
  '3:4@1080p': '1248*1632',
};
const RATIOS = ['16:9', '9:16', '1:1', '4:3', '3:4'];
/** The image-to-video `resolution` tier of each of our classes (the frame's shape is the image's). */
const TIERS: Readonly<Record<string, string>> = { '480p': '480P', '720p': '720P', '1080p': '1080P' };
const range = (from: number, to: number) => Array.from({ length: to - from + 1 }, (_, i) => from + i);

function wan(id: string, kind: 't2v' | 'i2v', over: Partial<VideoModelSpec>): VideoModelSpec {
  return {
    id,
    durations: [5],
    aspectRatios: RATIOS,
    resolutions: ['720p', '1080p'],
    // DashScope's default (size 1920*1080, resolution 1080P): stated, so it is sent and priced (sentResolution)
    defaultResolution: '1080p',
    // text-to-video and image-to-video are different models: one takes a prompt alone, the other a first frame
    textToVideo: kind === 't2v',
    firstFrame: kind === 'i2v',
    lastFrame: false,
    continues: false,
    loop: false,
    seed: true,
    audio: false,
    negativePrompt: true,
    concepts: false,
    maxPromptChars: 800,
    // from a first frame the video takes the image's shape at the asked tier: no ratio is promised then
    ...(kind === 'i2v' ? { shapeFromImage: true } : {}),
    ...over,
  };
}

/**
 * Wan's video models on DashScope as Model Studio's text-to-video and image-to-video API references give them
 * (alibabacloud.com/help/en/model-studio, "Wan - text-to-video API reference", "… image-to-video (first
 * frame) …"): wan2.6 720P and 1080P with sound, 2.5 preview 480P to 1080P, 5 or 10 s, with sound (prompts up to
 * 1500 and 2000 characters), 2.2 plus 480P and 1080P, 5 s only, silent (800). Sources disagreed on wan2.6's
 * durations (the December 2025 reference and resellers' pages: 5, 10 or 15 s; the reference and user guide from
 * January 2026 on: any whole second from 2 to 15): the newest reference is followed. The 2.1 series and the
 * flash variants are left out (older, or documented only by resellers); 480P is left out (no normalized class).
 */
export const WAN_MODELS: readonly VideoModelSpec[] = [
  // 5 s when a request names none (DashScope's default)
  wan('wan2.6-t2v', 't2v', { durations: range(2, 15), defaultDurationS: 5, audio: true, maxPromptChars: 1500 }),
  wan('wan2.5-t2v-preview', 't2v', { durations: [5, 10], audio: true, maxPromptChars: 2000 }),
  wan('wan2.2-t2v-plus', 't2v', { resolutions: ['1080p'] }),
  wan('wan2.6-i2v', 'i2v', { durations: range(2, 15), defaultDurationS: 5, audio: true, maxPromptChars: 1500 }),
  wan('wan2.5-i2v-preview', 'i2v', { durations: [5, 10], audio: true, maxPromptChars: 2000 }),
  wan('wan2.2-i2v-plus', 'i2v', { resolutions: ['1080p'] }),
];

/**
 * A task as `GET /tasks/{task_id}` answers it, as far as it is read: `output.task_status`, `output.video_url`,
 * `output.code` and `message` of a failure, and `usage` of a success: `duration`, the seconds billed
 * (`video_duration` in the older references). A status it does not document cannot be used.
 */
const TASK = z.object({
  output: z.object({
    task_status: z.enum(['PENDING', 'RUNNING', 'SUCCEEDED', 'FAILED', 'CANCELED', 'UNKNOWN']),
    video_url: z.string().nullish(),
    code: z.string().nullish(),
    message: z.string().nullish(),
  }),
  usage: z.object({ duration: z.unknown().optional(), video_duration: z.unknown().optional() }).nullish(),
});
/** A create's answer: `{output: {task_id, task_status}, request_id}` (a refusal under 200 carries `code` and `message` instead). */
const CREATED = z.object({ output: z.object({ task_id: z.string().min(1) }) });

/**
 * What DashScope says it billed a task, in seconds of video: `usage.duration`, "the total billed duration of
 * the video (seconds)" in the current video synthesis references (beside `output_video_duration`, the
 * video's own length; they differ where input video is billed too), else `usage.video_duration`, the figure
 * of the older Wan references (wan2.1 to 2.5). A 0 is taken only from `duration` (the SDK's answers carry a
 * placeholder `video_duration: 0` beside the real `duration`).
 */
function billedOf(usage: z.output<typeof TASK>['usage']): VendorBilled | undefined {
  const total = billedFigure(usage?.duration, 'seconds');
  if (total) return total;
  const older = billedFigure(usage?.video_duration, 'seconds');
  return older && older.amount > 0 ? older : undefined;
}

/**
 * DashScope's video synthesis: `POST /services/aigc/video-generation/video-synthesis` with `X-DashScope-Async:
 * enable` (HTTP calls are asynchronous only) — `model`; `input`: `prompt`, `negative_prompt`, `img_url` (the
 * first frame, image-to-video models only); `parameters`: `size` (`W*H` from the model's table) for
 * text-to-video or `resolution` (`720P`, `1080P`: the image decides the shape) for image-to-video,
 * `duration`, `seed`, `audio` where the model makes sound, `watermark: false` — answering `{output: {task_id,
 * task_status: "PENDING"}, request_id}`; `GET /tasks/{task_id}` (PENDING, RUNNING, SUCCEEDED with
 * `output.video_url`, valid 24 h: the relay stores it at once; FAILED with `output.code` and `message`:
 * `DataInspectionFailed`, "… inappropriate content", is its moderation; CANCELED; UNKNOWN: expired or not
 * found); `POST /tasks/{task_id}/cancel` for a task still PENDING. A Bearer API key; errors as HTTP statuses
 * with `{code, message}` (400 InvalidParameter, 401 InvalidApiKey, 403 AccessDenied, 429 Throttling;
 * `Arrearage` an overdue account). Its tasks take no callback URL (task events go to an account's
 * EventBridge, not per request): they are polled. A task cannot be asked for by the caller's own id, so a
 * create whose answer was lost is not looked up. `prompt_extend` (its prompt rewriting, on by default) is
 * left to its default: the normalized request has no such field.
 */
@Injectable()
export class WanVideoVendor implements VideoVendor, RelayVendor<VendorStatus> {
  static readonly protocol = WAN.protocol;
  static readonly models = WAN_MODELS;
  readonly protocol = WanVideoVendor.protocol;
  readonly models = WAN_MODELS;
  readonly minPollS = WAN.pollFloorS;

  constructor(private readonly client: UpstreamClient) {}

  async create(account: VendorAccount, { model, request }: VendorCreate): Promise<{ upstreamId: string; status: VendorStatus }> {
    const body = wanBody(model, request);
    const answer = await this.client.call('POST', `${account.baseUrl}/services/aigc/video-generation/video-synthesis`, { body, auth: account.auth, headers: { 'x-dashscope-async': 'enable' }, refusal: dashscopeRefusal, failFast: true });
    return { upstreamId: wanCreated(answer.json), status: { state: 'working' } };
  }

  async query(account: VendorAccount, upstreamId: string, once: boolean): Promise<VendorStatus> {
    return wanStatus((await this.client.call('GET', this.taskUrl(account, upstreamId), { auth: account.auth, refusal: dashscopeRefusal, idempotent: true, once })).json);
  }

  /** DashScope cancels a task still PENDING (one running cannot be). */
  async cancel(account: VendorAccount, upstreamId: string): Promise<void> {
    await this.client.call('POST', `${this.taskUrl(account, upstreamId)}/cancel`, { auth: account.auth, refusal: dashscopeRefusal, idempotent: true });
  }

  private taskUrl(account: VendorAccount, upstreamId: string): string {
    return `${account.baseUrl}/tasks/${encodeURIComponent(upstreamId)}`;
  }
}

/**
 * The create's body: `input` (prompt, negative prompt, the first frame's URL as `img_url`) and `parameters`
 * (`resolution` tier from a first frame, else `size` from the table; duration, seed, `audio` on the models
 * that make sound, no watermark). A first frame that is not an image (an earlier generation) is refused.
 */
export function wanBody(model: VideoModelSpec, request: VideoRequest): Record<string, unknown> {
  const image = request.firstFrame?.type === 'image' ? request.firstFrame.url : undefined;
  if (request.firstFrame && !image) throw new UpstreamRefused('Wan takes a first frame as an image only', 0);
  const resolution = sentResolution(model, request);
  const duration = sentDurationS(model, request);
  return {
    model: model.id,
    input: {
      prompt: request.prompt,
      ...(request.negativePrompt !== undefined ? { negative_prompt: request.negativePrompt } : {}),
      ...(image ? { img_url: image } : {}),
    },
    parameters: {
      ...(image ? wanTier(resolution) : wanSize(model, request.aspectRatio, resolution)),
      ...(duration !== undefined ? { duration } : {}),
      ...(request.seed !== undefined ? { seed: request.seed } : {}),
      ...(model.audio ? { audio: request.audio ?? false } : {}),
      watermark: false,
    },
  };
}

/** A text-to-video `size` from the table: the asked shape (16:9 without one) at the asked tier, or the first the model makes of 720p and 1080p; none asked, Wan's default. */
export function wanSize(model: VideoModelSpec, aspectRatio: string | undefined, resolution: string | undefined): { size?: string } {
  if (aspectRatio === undefined && resolution === undefined) return {};
  const ratio = aspectRatio ?? '16:9';
  const tier = resolution ?? model.resolutions.find((r) => SIZES[`${ratio}@${r}`]);
  const size = SIZES[`${ratio}@${tier}`];
  if (!size) throw new UpstreamRefused(`Wan makes no ${ratio} video at ${tier ?? resolution ?? 'any resolution'}`, 0);
  return { size };
}

/** An image-to-video `resolution` tier (720P, 1080P); none asked, Wan's default. */
export function wanTier(resolution: string | undefined): { resolution?: string } {
  if (resolution === undefined) return {};
  const tier = TIERS[resolution];
  if (!tier) throw new UpstreamRefused(`Wan makes no video at ${resolution}`, 0);
  return { resolution: tier };
}

/** A create's answer: its `output.task_id`, or UnusableAnswer naming it (with DashScope's own words when it gave some). */
export function wanCreated(json: Record<string, unknown>): string {
  const words = typeof json.message === 'string' && json.message ? ` (${json.message.slice(0, 200)})` : '';
  try {
    return readAnswer(CREATED, json, 'the create request').output.task_id;
  } catch (err) {
    throw err instanceof UnusableAnswer && words ? new UnusableAnswer(`${err.message}${words}`) : err;
  }
}

/** A task's state, and at a success the seconds it billed. */
export function wanStatus(answer: unknown): VendorStatus {
  const task = readAnswer(TASK, answer, 'the poll');
  const output = task.output;
  switch (output.task_status) {
    case 'PENDING':
    case 'RUNNING':
      return { state: 'working' };
    case 'SUCCEEDED': {
      const billed = billedOf(task.usage);
      const withBilled = billed ? { billed } : {};
      return output.video_url ? { state: 'succeeded', videoUrl: output.video_url, ...withBilled } : { state: 'failed', reason: 'the upstream succeeded without a video_url', ...withBilled };
    }
    case 'FAILED': {
      const code = output.code ?? '';
      const words = output.message ?? '';
      // the code in brackets after the words: DataInspectionFailed is its moderation (WAN.contentRefusal)
      return { state: 'failed', reason: words && code ? `${words} (${code})` : words || code || 'no reason given' };
    }
    case 'CANCELED':
      return { state: 'failed', reason: 'the upstream task was canceled' };
    case 'UNKNOWN':
      return { state: 'failed', reason: 'the upstream no longer knows the task (expired or not found)' };
  }
}
