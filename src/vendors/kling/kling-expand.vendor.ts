import { Injectable } from '@nestjs/common';
import { UpstreamClient } from '../../infra/relay/upstream-client.js';
import type { ExpandAnswer, ExpandCreate, ExpandRequest, ExpandStatus, ExpandVendor } from '../contracts/expand-vendor.js';
import type { VendorAccount } from '../contracts/vendor.js';
import { type KlingImageTask, klingImagesStatus, KlingTasks } from './kling-tasks.js';
import { KLING } from './kling.vendor.js';

export type KlingExpandTask = KlingImageTask<{ index?: number; url?: unknown; watermark_url?: unknown }>;

/**
 * Kling's image expand (`POST /v1/images/editing/expand`, `GET …/{task_id}`), whose interface the expand
 * door is: the ratios go out as Kling names them, the image as its URL or Base64, our task id as
 * `external_task_id` (unique per account: a create sent twice is refused the second time, and a task is
 * found by it when a create's answer was lost). It makes every expand the door accepts. Kling publishes no
 * limit on queries: the schedule (RELAY_POLL_MS and the age back-off) alone decides.
 */
@Injectable()
export class KlingExpandVendor implements ExpandVendor {
  static readonly protocol = KLING.protocol;
  /** Its one expand model, as a channel names it to price it. */
  static readonly model = 'kling-expand';
  readonly protocol = KlingExpandVendor.protocol;
  readonly minPollS = KLING.pollFloorS;

  private readonly tasks: KlingTasks<KlingExpandTask, ExpandStatus>;

  constructor(client: UpstreamClient) {
    this.tasks = new KlingTasks(client, '/v1/images/editing/expand', klingExpandStatus);
  }

  async create(account: VendorAccount, { request, image, taskId, callbackUrl }: ExpandCreate): Promise<ExpandAnswer> {
    const input = image.url ?? (await image.bytes()).bytes.toString('base64');
    return this.tasks.create(account, klingExpandBody(request, input, callbackUrl), taskId);
  }

  query(account: VendorAccount, upstreamId: string, once: boolean): Promise<ExpandStatus> {
    return this.tasks.query(account, upstreamId, once);
  }

  findByOwnId(account: VendorAccount, taskId: string): Promise<{ upstreamId: string; status: ExpandStatus } | null> {
    return this.tasks.findByOwnId(account, taskId);
  }
}

/**
 * An expand as Kling's `POST /v1/images/editing/expand` takes it (our task id is added as `external_task_id` by
 * KlingTasks): `image` (the caller's URL, or raw Base64), the four `*_expansion_ratio`s (the bottom one also as
 * `down_expansion_ratio`, the name of Kling's older pages), `n`, `callback_url`, `watermark_info`, `prompt`.
 */
export function klingExpandBody(request: ExpandRequest, image: string, callbackUrl: string | undefined): Record<string, unknown> {
  return {
    image,
    up_expansion_ratio: request.up_ratio,
    bottom_expansion_ratio: request.bottom_ratio,
    down_expansion_ratio: request.bottom_ratio,
    left_expansion_ratio: request.left_ratio,
    right_expansion_ratio: request.right_ratio,
    n: request.n,
    ...(callbackUrl ? { callback_url: callbackUrl } : {}),
    ...(request.watermark ? { watermark_info: { enabled: true } } : {}),
    ...(request.prompt ? { prompt: request.prompt } : {}),
  };
}

/** A task of Kling's expand (its create's, query's or callback's `data`) as an expand status: each image's URL and its watermarked copy's. */
export function klingExpandStatus(task: KlingExpandTask): ExpandStatus {
  return klingImagesStatus(task, (i) => ({ url: i.url, ...(typeof i.watermark_url === 'string' ? { watermarkUrl: i.watermark_url } : {}) }));
}
