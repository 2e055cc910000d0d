import { Injectable } from '@nestjs/common';
import { UpstreamClient, UpstreamRefused, UpstreamUnavailable } from '../../infra/relay/upstream-client.js';
import { isContentRefusal } from '../contracts/content-refusal.js';
import type { ExpandAnswer, ExpandCreate, ExpandStatus, ExpandVendor } from '../contracts/expand-vendor.js';
import { UnusableAnswer, type VendorAccount } from '../contracts/vendor.js';
import { isKlingNotFound, klingEnvelopeData, klingRefusal } from './kling-envelope.js';
import { KLING } from './kling.vendor.js';

interface KlingExpandTask {
  task_id?: unknown;
  task_status?: unknown;
  task_status_msg?: unknown;
  task_result?: { images?: { index?: number; url?: unknown; watermark_url?: unknown }[] } | null;
}

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

  constructor(private readonly client: UpstreamClient) {}

  async create(account: VendorAccount, { request, image, taskId, callbackUrl }: ExpandCreate): Promise<ExpandAnswer> {
    const body = {
      image: image.url ?? (await image.bytes()).bytes.toString('base64'),
      up_expansion_ratio: request.up_ratio,
      bottom_expansion_ratio: request.bottom_ratio,
      down_expansion_ratio: request.bottom_ratio,
      left_expansion_ratio: request.left_ratio,
      right_expansion_ratio: request.right_ratio,
      n: request.n,
      external_task_id: taskId,
      ...(callbackUrl ? { callback_url: callbackUrl } : {}),
      ...(request.watermark ? { watermark_info: { enabled: true } } : {}),
      ...(request.prompt ? { prompt: request.prompt } : {}),
    };
    let data: KlingExpandTask | null;
    try {
      data = klingEnvelopeData<KlingExpandTask>((await this.client.call('POST', endpoint(account), { body, auth: account.auth, refusal: klingRefusal, failFast: true })).json);
    } catch (err) {
      // a refusal may be Kling recognising our external_task_id from a create that did go through (its answer lost)
      const earlier = err instanceof UpstreamRefused && err.aboutRequest ? await this.findByOwnId(account, taskId) : null;
      if (earlier) return earlier;
      throw err;
    }
    if (typeof data?.task_id !== 'string' || !data.task_id) throw new UnusableAnswer('the upstream answered the create request without a task_id');
    return { upstreamId: data.task_id, status: statusOf(data) };
  }

  async query(account: VendorAccount, upstreamId: string, once: boolean): Promise<ExpandStatus> {
    const answer = await this.client.call('GET', `${endpoint(account)}/${encodeURIComponent(upstreamId)}`, { auth: account.auth, refusal: klingRefusal, idempotent: true, once });
    const data = klingEnvelopeData<KlingExpandTask>(answer.json);
    if (!data) throw new UpstreamUnavailable('the upstream answered the query without data', false);
    return statusOf(data);
  }

  /** Kling's query takes our external_task_id in place of its task_id. */
  async findByOwnId(account: VendorAccount, taskId: string): Promise<{ upstreamId: string; status: ExpandStatus } | null> {
    try {
      const answer = await this.client.call('GET', `${endpoint(account)}/${encodeURIComponent(taskId)}`, { auth: account.auth, refusal: klingRefusal, idempotent: true });
      const data = klingEnvelopeData<KlingExpandTask>(answer.json);
      return typeof data?.task_id === 'string' && data.task_id ? { upstreamId: data.task_id, status: statusOf(data) } : null;
    } catch (err) {
      if (isKlingNotFound(err)) return null;
      throw err;
    }
  }
}

function endpoint(account: VendorAccount): string {
  return `${account.baseUrl}/v1/images/editing/expand`;
}

function statusOf(task: KlingExpandTask): ExpandStatus {
  switch (task.task_status) {
    case 'succeed': {
      const images = [...(task.task_result?.images ?? [])].sort((a, b) => (a.index ?? 0) - (b.index ?? 0));
      if (images.length === 0 || images.some((i) => typeof i.url !== 'string')) return { state: 'failed', reason: 'it reported success without result images' };
      return { state: 'succeeded', images: images.map((i) => ({ url: i.url as string, ...(typeof i.watermark_url === 'string' ? { watermarkUrl: i.watermark_url } : {}) })) };
    }
    case 'failed': {
      const reason = typeof task.task_status_msg === 'string' && task.task_status_msg ? task.task_status_msg : 'no reason given';
      return { state: 'failed', reason, content: isContentRefusal(reason) };
    }
    default: // submitted, processing: the poller watches it
      return { state: 'working' };
  }
}
