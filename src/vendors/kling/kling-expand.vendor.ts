import { Injectable } from '@nestjs/common';
import { UpstreamClient } from '../../infra/relay/upstream-client.js';
import type { ExpandAnswer, ExpandCreate, ExpandStatus, ExpandVendor } from '../contracts/expand-vendor.js';
import type { VendorAccount } from '../contracts/vendor.js';
import { type KlingImageTask, klingImagesStatus, KlingTasks } from './kling-tasks.js';
import { KLING } from './kling.vendor.js';

type KlingExpandTask = KlingImageTask<{ index?: number; url?: unknown; watermark_url?: unknown }>;

/**
 * Kling's image expand (`POST /v1/images/editing/expand`, `GET …/{task_id}`), whose interface the expand
 * door is: the ratios go out as Kling names them, the image as its URL or Base64, our task id as
 * `external_task_id` (unique per account: a create sent twice is refused the second time, and a task is
 * found by it when a create's answer was lost). It makes every expand the door accepts. Kling publishes no
 * limit on queries: the schedule (RELAY_POLL_MS and the age back-off) alone decides.
 */
@Injectable()
export class KlingExpandVendor implements ExpandVendor {
  static readonly protocol = 'kling';
  /** Its one expand model, as a channel names it to price it. */
  static readonly model = 'kling-expand';
  readonly protocol = KlingExpandVendor.protocol;
  readonly minPollS = KLING.pollFloorS;

  private readonly tasks: KlingTasks<KlingExpandTask, ExpandStatus>;

  constructor(client: UpstreamClient) {
    this.tasks = new KlingTasks(client, '/v1/images/editing/expand', statusOf);
  }

  async create(account: VendorAccount, { request, image, taskId, callbackUrl }: ExpandCreate): Promise<ExpandAnswer> {
    const body = {
      image: image.url ?? (await image.bytes()).bytes.toString('base64'),
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
    return this.tasks.create(account, body, taskId);
  }

  query(account: VendorAccount, upstreamId: string, once: boolean): Promise<ExpandStatus> {
    return this.tasks.query(account, upstreamId, once);
  }

  findByOwnId(account: VendorAccount, taskId: string): Promise<{ upstreamId: string; status: ExpandStatus } | null> {
    return this.tasks.findByOwnId(account, taskId);
  }
}

function statusOf(task: KlingExpandTask): ExpandStatus {
  return klingImagesStatus(task, (i) => ({ url: i.url, ...(typeof i.watermark_url === 'string' ? { watermarkUrl: i.watermark_url } : {}) }));
}
