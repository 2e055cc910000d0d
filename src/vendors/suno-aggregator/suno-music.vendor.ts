import { Injectable } from '@nestjs/common';
import { z } from 'zod';
import { UpstreamClient, UpstreamRefused, upstreamMessage } from '../../infra/relay/upstream-client.js';
import type { MusicAnswer, MusicCreate, MusicRequest, MusicStatus, MusicVendor } from '../contracts/music-vendor.js';
import { UnusableAnswer, type VendorAccount } from '../contracts/vendor.js';
import { readAnswer } from '../contracts/vendor-answer.js';
import { checkAggregatorAnswer, SUNO_AGGREGATOR } from './suno-aggregator.vendor.js';
import { SUNO_MODELS } from './suno-models.js';

/**
 * A clip of a task (new-api's `SunoDataResponse.data` items, its `SunoSong`): its id, status, links, title, and in
 * `metadata` the lyrics it sang (`prompt`: in description mode those Suno wrote) and its error; a field of another
 * type is read as absent.
 */
const CLIP = z.object({
  id: z.string().optional().catch(undefined),
  status: z.string().optional().catch(undefined),
  audio_url: z.string().optional().catch(undefined),
  image_url: z.string().optional().catch(undefined),
  title: z.string().nullish().catch(undefined),
  metadata: z.object({ prompt: z.string().nullish().catch(undefined), error_message: z.string().nullish().catch(undefined) }).nullish().catch(undefined),
});

/**
 * A task as `GET /fetch/{id}` answers it in its `data` (new-api's `SunoDataResponse`: task_id, status, fail_reason,
 * and its clips in `data`). Its `status` is what the state is read from: a task without one is not usable.
 */
const TASK = z.object({
  task_id: z.string().optional().catch(undefined),
  status: z.string(),
  fail_reason: z.string().nullish().catch(undefined),
  // its clips; anything but a clip object in the list is left out
  data: z
    .array(z.unknown())
    .nullish()
    .catch(undefined)
    .transform((items) => (items ?? []).flatMap((item) => (typeof item === 'object' && item !== null && !Array.isArray(item) ? [CLIP.parse(item)] : []))),
});

type AggregatorTask = z.infer<typeof TASK>;

/** new-api's answer of a submit or a fetch: `{code: "success", message, data}`. */
const ENVELOPE = z.looseObject({ code: z.unknown(), message: z.unknown().optional(), data: z.unknown().optional() });

/**
 * A Suno-style aggregator's music API (the music door is its interface): `POST {base}/submit/music` answers
 * `{ code: "success", data: <task id> }`; `GET {base}/fetch/{id}` reports the task (SUBMITTED … SUCCESS,
 * FAILURE) and its clips, `POST {base}/fetch {ids}` several at once where the aggregator has it. Our fields go
 * out in Suno's words (prompt, gpt_description_prompt, tags, negative_tags, mv, make_instrumental; a
 * continuation's continue_clip_id, continue_at and task), `notify_hook` when it is to call back.
 */
@Injectable()
export class SunoMusicVendor implements MusicVendor {
  static readonly protocol = SUNO_AGGREGATOR.protocol;
  readonly protocol = SunoMusicVendor.protocol;
  static readonly models = SUNO_MODELS;
  readonly minPollS = SUNO_AGGREGATOR.pollFloorS;
  readonly models = SUNO_MODELS;

  constructor(private readonly client: UpstreamClient) {}

  async create(account: VendorAccount, create: MusicCreate): Promise<MusicAnswer> {
    const answer = await this.client.call('POST', `${account.baseUrl}/submit/music`, { body: sunoMusicBody(create.request, create.callbackUrl), auth: account.auth, failFast: true });
    return { upstreamId: sunoSubmitted(answer.json) };
  }

  async query(account: VendorAccount, upstreamId: string, once: boolean): Promise<MusicStatus> {
    const answer = await this.client.call('GET', `${account.baseUrl}/fetch/${encodeURIComponent(upstreamId)}`, { auth: account.auth, idempotent: true, once });
    return sunoFetched(answer.json);
  }

  async queryMany(account: VendorAccount, upstreamIds: string[]): Promise<Map<string, MusicStatus> | null> {
    let answer;
    try {
      answer = await this.client.call('POST', `${account.baseUrl}/fetch`, { body: { ids: upstreamIds }, auth: account.auth, idempotent: true, once: true });
    } catch (err) {
      if (err instanceof UpstreamRefused && (err.status === 404 || err.status === 405)) return null;
      throw err;
    }
    return sunoFetchedMany(answer.json);
  }
}

/**
 * A song as the aggregator's `POST /submit/music` takes it (Suno's words): `mv` (the model), `make_instrumental`,
 * `prompt` (the lyrics), `gpt_description_prompt`, `tags`, `negative_tags`, `title` (each only when asked), a
 * continuation's `continue_clip_id`, `continue_at` and `task` (`extend`, or `upload_extend` of an upload), and
 * `notify_hook`.
 */
export function sunoMusicBody(request: MusicRequest, callbackUrl: string | undefined): Record<string, unknown> {
  const body: Record<string, unknown> = { mv: request.model, make_instrumental: request.instrumental };
  const words = { prompt: request.lyrics, gpt_description_prompt: request.description, tags: request.style, negative_tags: request.avoidStyle, title: request.title };
  for (const [field, value] of Object.entries(words)) if (value !== null) body[field] = value;
  if (request.continues) Object.assign(body, { continue_clip_id: request.continues.upstreamClipId, continue_at: request.continues.atS, task: request.continues.upload ? 'upload_extend' : 'extend' });
  if (callbackUrl) body.notify_hook = callbackUrl;
  return body;
}

/** The task id a submit answered (`{code: "success", data: <id>}`); a refusal under HTTP 200 thrown as the client would; else unusable, in the aggregator's words. */
export function sunoSubmitted(json: Record<string, unknown>): string {
  checkAggregatorAnswer(json);
  const answer = readAnswer(ENVELOPE, json, 'the music task');
  // a success without its id is an answer that cannot be used, not the aggregator refusing the request
  if (answer.code === 'success' && (typeof answer.data !== 'string' || !answer.data)) throw new UnusableAnswer('the upstream answered success without a task id');
  if (answer.code !== 'success' || typeof answer.data !== 'string' || !answer.data) {
    throw new UnusableAnswer(`the upstream refused the music task: ${upstreamMessage(json) ?? String(answer.code ?? 'no task id returned')}`);
  }
  return answer.data;
}

/** A fetch of one task (`GET /fetch/{id}`: the task in `data`) as a music status; a refusal under HTTP 200 thrown as the client would. */
export function sunoFetched(json: Record<string, unknown>): MusicStatus {
  checkAggregatorAnswer(json);
  return sunoMusicStatus(readAnswer(z.object({ data: TASK }), json, 'the fetch').data);
}

/** A fetch of several (`POST /fetch {ids}`: the tasks in `data`), by task id; a task without its id or status is left out (its step asks for it alone). */
export function sunoFetchedMany(json: Record<string, unknown>): Map<string, MusicStatus> {
  checkAggregatorAnswer(json);
  const listed = readAnswer(z.object({ data: z.array(z.unknown()).nullish() }), json, 'the fetch').data ?? [];
  const tasks = listed.flatMap((item) => {
    const task = TASK.safeParse(item);
    return task.success && task.data.task_id ? [[task.data.task_id, sunoMusicStatus(task.data)] as const] : [];
  });
  return new Map(tasks);
}

/**
 * SUCCESS with its clips (each with the lyrics it sang and its title where the aggregator gives them); FAILURE, or
 * any clip in error, failed with the upstream's words; anything else (SUBMITTED, QUEUED, IN_PROGRESS, UNKNOWN)
 * still working.
 */
export function sunoMusicStatus(task: AggregatorTask): MusicStatus {
  const clips = task.data;
  const broken = clips.find((c) => c.status === 'error');
  if (task.status === 'FAILURE' || broken) {
    const reason = nonEmpty(task.fail_reason) ?? nonEmpty(broken?.metadata?.error_message) ?? 'no reason given';
    const secrets = [task.task_id, ...clips.map((c) => c.id)].filter((id): id is string => typeof id === 'string');
    return { state: 'failed', reason, secrets };
  }
  if (task.status !== 'SUCCESS') return { state: 'working' };
  return {
    state: 'succeeded',
    clips: clips.map((c) => ({
      ...(c.id !== undefined ? { upstreamId: c.id } : {}),
      ...(c.audio_url ? { audioUrl: c.audio_url } : {}),
      ...(c.image_url ? { coverUrl: c.image_url } : {}),
      ...(nonEmpty(c.metadata?.prompt) ? { lyrics: c.metadata!.prompt! } : {}),
      ...(nonEmpty(c.title) ? { title: c.title! } : {}),
    })),
  };
}

function nonEmpty(value: string | null | undefined): string | null {
  return typeof value === 'string' && value.trim() ? value : null;
}
