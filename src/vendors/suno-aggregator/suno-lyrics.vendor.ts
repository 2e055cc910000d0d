import { Injectable } from '@nestjs/common';
import { z } from 'zod';
import { UpstreamClient, UpstreamRefused, upstreamMessage } from '../../infra/relay/upstream-client.js';
import { LYRICS_MAX_PROMPT, type LyricsAnswer, type LyricsCreate, type LyricsModelSpec, type LyricsStatus, type LyricsText, type LyricsVendor } from '../contracts/lyrics-vendor.js';
import { UnusableAnswer, type VendorAccount } from '../contracts/vendor.js';
import { readAnswer } from '../contracts/vendor-answer.js';
import { checkAggregatorAnswer, SUNO_AGGREGATOR } from './suno-aggregator.vendor.js';

/**
 * The aggregators' one lyrics model: new-api prices it as `suno_lyrics` (its Suno API docs' model list); the
 * submit names none. A prompt of up to 3,000 characters, one version a task.
 */
export const SUNO_LYRICS_MODELS: readonly LyricsModelSpec[] = [{ id: 'suno_lyrics', promptMax: LYRICS_MAX_PROMPT, takes: 1 }];

/** The lyrics of a task (new-api's `SunoLyrics`: id, status, title, text); a field of another type is read as absent. */
const LYRICS = z.object({
  id: z.string().optional().catch(undefined),
  status: z.string().optional().catch(undefined),
  title: z.string().nullish().catch(undefined),
  text: z.string().nullish().catch(undefined),
});

/**
 * A lyrics task as `GET /fetch/{id}` answers it in its `data` (new-api's `SunoDataResponse`: task_id, action
 * LYRICS, status, fail_reason, and the lyrics in `data`: one object, or a list of them where an aggregator gives
 * several). Its `status` is what the state is read from.
 */
const TASK = z.object({
  task_id: z.string().optional().catch(undefined),
  status: z.string(),
  fail_reason: z.string().nullish().catch(undefined),
  data: z
    .unknown()
    .transform((data) => (Array.isArray(data) ? data : data === null || data === undefined ? [] : [data]))
    .transform((items) => items.flatMap((item) => (typeof item === 'object' && item !== null && !Array.isArray(item) ? [LYRICS.parse(item)] : []))),
});

type AggregatorLyricsTask = z.infer<typeof TASK>;

/** new-api's answer of a submit: `{code: "success", message, data: <task id>}`. */
const ENVELOPE = z.looseObject({ code: z.unknown(), message: z.unknown().optional(), data: z.unknown().optional() });

/**
 * A Suno-style aggregator's lyrics, in new-api's words (the Suno-style door's `/submit/lyrics` is this interface):
 * `POST {base}/submit/lyrics {prompt, notify_hook?}` answers `{code: "success", data: <task id>}`; `GET
 * {base}/fetch/{id}` reports the task (action LYRICS; SUBMITTED, IN_PROGRESS, SUCCESS, FAILURE with its
 * fail_reason) and its lyrics `{id, text, title, status}`, `POST {base}/fetch {ids}` several at once where the
 * aggregator has it.
 */
@Injectable()
export class SunoLyricsVendor implements LyricsVendor {
  static readonly protocol = SUNO_AGGREGATOR.protocol;
  static readonly models = SUNO_LYRICS_MODELS;
  readonly protocol = SunoLyricsVendor.protocol;
  readonly models = SUNO_LYRICS_MODELS;
  readonly minPollS = SUNO_AGGREGATOR.pollFloorS;

  constructor(private readonly client: UpstreamClient) {}

  async create(account: VendorAccount, create: LyricsCreate): Promise<LyricsAnswer> {
    const answer = await this.client.call('POST', `${account.baseUrl}/submit/lyrics`, { body: sunoLyricsBody(create.request.prompt, create.callbackUrl), auth: account.auth, failFast: true });
    return { upstreamId: sunoLyricsSubmitted(answer.json) };
  }

  async query(account: VendorAccount, upstreamId: string, once: boolean): Promise<LyricsStatus> {
    const answer = await this.client.call('GET', `${account.baseUrl}/fetch/${encodeURIComponent(upstreamId)}`, { auth: account.auth, idempotent: true, once });
    return sunoLyricsFetched(answer.json);
  }

  async queryMany(account: VendorAccount, upstreamIds: string[]): Promise<Map<string, LyricsStatus> | null> {
    let answer;
    try {
      answer = await this.client.call('POST', `${account.baseUrl}/fetch`, { body: { ids: upstreamIds }, auth: account.auth, idempotent: true, once: true });
    } catch (err) {
      if (err instanceof UpstreamRefused && (err.status === 404 || err.status === 405)) return null;
      throw err;
    }
    return sunoLyricsFetchedMany(answer.json);
  }
}

/** Lyrics as the aggregator's `POST /submit/lyrics` takes them: the `prompt`, and `notify_hook` when it is to call back. */
export function sunoLyricsBody(prompt: string, callbackUrl: string | undefined): Record<string, unknown> {
  return callbackUrl ? { prompt, notify_hook: callbackUrl } : { prompt };
}

/** The task id a submit answered (`{code: "success", data: <id>}`); a refusal under HTTP 200 thrown as the client would; else unusable, in the aggregator's words. */
export function sunoLyricsSubmitted(json: Record<string, unknown>): string {
  checkAggregatorAnswer(json);
  const answer = readAnswer(ENVELOPE, json, 'the lyrics task');
  if (answer.code !== 'success' || typeof answer.data !== 'string' || !answer.data) {
    throw new UnusableAnswer(`the upstream refused the lyrics task: ${upstreamMessage(json) ?? String(answer.code ?? 'no task id returned')}`);
  }
  return answer.data;
}

/** A fetch of one task (`GET /fetch/{id}`: the task in `data`) as a lyrics status; a refusal under HTTP 200 thrown as the client would. */
export function sunoLyricsFetched(json: Record<string, unknown>): LyricsStatus {
  checkAggregatorAnswer(json);
  return sunoLyricsStatus(readAnswer(z.object({ data: TASK }), json, 'the fetch').data);
}

/** A fetch of several (`POST /fetch {ids}`: the tasks in `data`), by task id; a task without its id or status is left out (its step asks for it alone). */
export function sunoLyricsFetchedMany(json: Record<string, unknown>): Map<string, LyricsStatus> {
  checkAggregatorAnswer(json);
  const listed = readAnswer(z.object({ data: z.array(z.unknown()).nullish() }), json, 'the fetch').data ?? [];
  const tasks = listed.flatMap((item) => {
    const task = TASK.safeParse(item);
    if (!task.success || !task.data.task_id) return [];
    try {
      return [[task.data.task_id, sunoLyricsStatus(task.data)] as const];
    } catch (err) {
      // a task whose end cannot be read is left for its own step, which asks for it alone (and fails it with the words)
      if (err instanceof UnusableAnswer) return [];
      throw err;
    }
  });
  return new Map(tasks);
}

/**
 * SUCCESS with its lyrics (each with words; none: unusable); FAILURE, or lyrics in error, failed with the
 * upstream's words; anything else (SUBMITTED, QUEUED, IN_PROGRESS, UNKNOWN) still working.
 */
export function sunoLyricsStatus(task: AggregatorLyricsTask): LyricsStatus {
  const broken = task.data.find((l) => l.status === 'error' || l.status === 'failed');
  if (task.status === 'FAILURE' || broken) {
    const reason = nonEmpty(task.fail_reason) ?? 'no reason given';
    const secrets = [task.task_id, ...task.data.map((l) => l.id)].filter((id): id is string => typeof id === 'string');
    return { state: 'failed', reason, secrets };
  }
  if (task.status !== 'SUCCESS') return { state: 'working' };
  const lyrics: LyricsText[] = task.data.flatMap((l) => (nonEmpty(l.text) ? [{ title: nonEmpty(l.title), text: l.text! }] : []));
  if (lyrics.length === 0) throw new UnusableAnswer('the upstream ended the lyrics task without any lyrics (data.text)');
  return { state: 'succeeded', lyrics };
}

function nonEmpty(value: string | null | undefined): string | null {
  return typeof value === 'string' && value.trim() ? value : null;
}
