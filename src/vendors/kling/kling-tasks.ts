import { UpstreamClient, UpstreamRefused, UpstreamUnavailable } from '../../infra/relay/upstream-client.js';
import { UnusableAnswer, type VendorAccount } from '../contracts/vendor.js';
import { isKlingNotFound, klingEnvelopeData, klingRefusal } from './kling-envelope.js';

/** A task of Kling's image endpoints (expand, generations) as its create, query and callbacks carry it. */
export interface KlingImageTask<I = { index?: number; url?: unknown }> {
  task_id?: unknown;
  task_status?: unknown;
  task_status_msg?: unknown;
  task_result?: { images?: I[] } | null;
}

/** What a task of Kling's says, in the words every image operation's contract uses. */
export type KlingTaskStatus<R> = { state: 'working' } | { state: 'succeeded'; images: R[] } | { state: 'failed'; reason: string };

/**
 * One of Kling's task endpoints (`POST {path}`, `GET {path}/{task_id or external_task_id}`): the create sent
 * with our task id as `external_task_id` (unique per account: a create sent twice is refused the second time,
 * and the task is then found by it, its first answer having been lost), the query, and the lookup by our id.
 */
export class KlingTasks<T extends KlingImageTask<unknown>, S> {
  constructor(
    private readonly client: UpstreamClient,
    private readonly path: string,
    private readonly statusOf: (task: T) => S,
  ) {}

  async create(account: VendorAccount, body: Record<string, unknown>, taskId: string): Promise<{ upstreamId: string; status: S }> {
    let data: T | null;
    try {
      data = klingEnvelopeData<T>((await this.client.call('POST', this.endpoint(account), { body: { ...body, external_task_id: taskId }, auth: account.auth, refusal: klingRefusal, failFast: true })).json);
    } catch (err) {
      // a refusal may be Kling recognising our external_task_id from a create that did go through (its answer lost)
      const earlier = err instanceof UpstreamRefused && err.aboutRequest ? await this.findByOwnId(account, taskId) : null;
      if (earlier) return earlier;
      throw err;
    }
    if (typeof data?.task_id !== 'string' || !data.task_id) throw new UnusableAnswer('the upstream answered the create request without a task_id');
    return { upstreamId: data.task_id, status: this.statusOf(data) };
  }

  async query(account: VendorAccount, upstreamId: string, once: boolean): Promise<S> {
    const answer = await this.client.call('GET', `${this.endpoint(account)}/${encodeURIComponent(upstreamId)}`, { auth: account.auth, refusal: klingRefusal, idempotent: true, once });
    const data = klingEnvelopeData<T>(answer.json);
    if (!data) throw new UpstreamUnavailable('the upstream answered the query without data', false);
    return this.statusOf(data);
  }

  /** Kling's query takes our external_task_id in place of its task_id. */
  async findByOwnId(account: VendorAccount, taskId: string): Promise<{ upstreamId: string; status: S } | null> {
    try {
      const answer = await this.client.call('GET', `${this.endpoint(account)}/${encodeURIComponent(taskId)}`, { auth: account.auth, refusal: klingRefusal, idempotent: true });
      const data = klingEnvelopeData<T>(answer.json);
      return typeof data?.task_id === 'string' && data.task_id ? { upstreamId: data.task_id, status: this.statusOf(data) } : null;
    } catch (err) {
      if (isKlingNotFound(err)) return null;
      throw err;
    }
  }

  private endpoint(account: VendorAccount): string {
    return `${account.baseUrl}${this.path}`;
  }
}

/** A Kling image task's state: its result images in order (each mapped by `image`; every one needs a URL), its failure with its words, or still working. */
export function klingImagesStatus<I extends { index?: number; url?: unknown }, R>(task: KlingImageTask<I>, image: (item: I & { url: string }) => R): KlingTaskStatus<R> {
  switch (task.task_status) {
    case 'succeed': {
      const images = [...(task.task_result?.images ?? [])].sort((a, b) => (a.index ?? 0) - (b.index ?? 0));
      if (images.length === 0 || images.some((i) => typeof i.url !== 'string' || !i.url)) return { state: 'failed', reason: 'it reported success without result images' };
      return { state: 'succeeded', images: images.map((i) => image(i as I & { url: string })) };
    }
    case 'failed': {
      const reason = typeof task.task_status_msg === 'string' && task.task_status_msg ? task.task_status_msg : 'no reason given';
      return { state: 'failed', reason };
    }
    default: // submitted, processing: the poller watches it
      return { state: 'working' };
  }
}
