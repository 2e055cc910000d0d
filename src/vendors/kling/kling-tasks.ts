import { z } from 'zod';
import { UpstreamClient, UpstreamRefused, UpstreamUnavailable } from '../../infra/relay/upstream-client.js';
import type { VendorAccount } from '../contracts/vendor.js';
import { readAnswer } from '../contracts/vendor-answer.js';
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

/** What every Kling task answer must carry to be followed: its id. */
const CREATED = z.object({ task_id: z.string().min(1) });

/** The task a create answered (its envelope read first): its id, or UnusableAnswer naming `task_id`. */
export function klingCreatedTask<T extends object>(json: Record<string, unknown>): T & { task_id: string } {
  const data = klingEnvelopeData<T>(json);
  return { ...(data as T), ...readAnswer(CREATED, data ?? {}, 'the create request') };
}

/** The task a query answered (its envelope read first); an envelope without data is the upstream's failure to answer. */
export function klingQueriedTask<T extends object>(json: Record<string, unknown>): T {
  const data = klingEnvelopeData<T>(json);
  if (!data) throw new UpstreamUnavailable('the upstream answered the query without data', false);
  return data;
}

/**
 * One of Kling's task endpoints (`POST {path}`, `GET {path}/{task_id or external_task_id}`): the create sent
 * with our task id as `external_task_id` (unique per account: a create sent twice is refused the second time,
 * and the task is then found by it, its first answer having been lost), the query, and the lookup by our id.
 */
export class KlingTasks<T extends object, S> {
  constructor(
    private readonly client: UpstreamClient,
    private readonly path: string,
    private readonly statusOf: (task: T) => S,
  ) {}

  async create(account: VendorAccount, body: Record<string, unknown>, taskId: string): Promise<{ upstreamId: string; status: S }> {
    let answer: Record<string, unknown>;
    try {
      answer = (await this.client.call('POST', this.endpoint(account), { body: { ...body, external_task_id: taskId }, auth: account.auth, refusal: klingRefusal, failFast: true })).json;
      klingEnvelopeData(answer);
    } catch (err) {
      // a refusal may be Kling recognising our external_task_id from a create that did go through (its answer lost)
      const earlier = err instanceof UpstreamRefused && err.aboutRequest ? await this.findByOwnId(account, taskId) : null;
      if (earlier) return earlier;
      throw err;
    }
    const data = klingCreatedTask<T>(answer);
    return { upstreamId: data.task_id, status: this.statusOf(data) };
  }

  async query(account: VendorAccount, upstreamId: string, once: boolean): Promise<S> {
    const answer = await this.client.call('GET', `${this.endpoint(account)}/${encodeURIComponent(upstreamId)}`, { auth: account.auth, refusal: klingRefusal, idempotent: true, once });
    return this.statusOf(klingQueriedTask<T>(answer.json));
  }

  /** Kling's query takes our external_task_id in place of its task_id. */
  async findByOwnId(account: VendorAccount, taskId: string): Promise<{ upstreamId: string; status: S } | null> {
    try {
      const answer = await this.client.call('GET', `${this.endpoint(account)}/${encodeURIComponent(taskId)}`, { auth: account.auth, refusal: klingRefusal, idempotent: true });
      const data = klingEnvelopeData<T>(answer.json);
      const found = CREATED.safeParse(data);
      return data && found.success ? { upstreamId: found.data.task_id, status: this.statusOf(data) } : null;
    } catch (err) {
      if (isKlingNotFound(err)) return null;
      throw err;
    }
  }

  private endpoint(account: VendorAccount): string {
    return `${account.baseUrl}${this.path}`;
  }
}

/** A Kling image task as its state is read: its status and words, its images each with its place (their other fields pass through). */
const IMAGE_TASK = z.object({
  task_status: z.string().optional(),
  task_status_msg: z.string().nullish(),
  task_result: z.object({ images: z.array(z.looseObject({ index: z.number().optional(), url: z.unknown().optional() })).nullish() }).nullish(),
});

/** A Kling image task's state: its result images in order (each mapped by `image`; every one needs a URL), its failure with its words, or still working. */
export function klingImagesStatus<I extends { index?: number; url?: unknown }, R>(answer: KlingImageTask<I>, image: (item: I & { url: string }) => R): KlingTaskStatus<R> {
  const task = readAnswer(IMAGE_TASK, answer, 'the poll');
  switch (task.task_status) {
    case 'succeed': {
      const images = [...((task.task_result?.images ?? []) as I[])].sort((a, b) => (a.index ?? 0) - (b.index ?? 0));
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
