import { Injectable } from '@nestjs/common';
import { UpstreamClient, UpstreamRefused, upstreamMessage } from '../../infra/relay/upstream-client.js';
import type { MusicRequest, MusicStatus, MusicVendor } from '../contracts/music-vendor.js';
import { UnusableAnswer, type VendorAccount } from '../contracts/vendor.js';
import { checkAggregatorAnswer, SUNO_AGGREGATOR } from './suno-aggregator.vendor.js';

interface AggregatorClip {
  id?: unknown;
  status?: unknown;
  audio_url?: unknown;
  image_url?: unknown;
  metadata?: { error_message?: unknown } | null;
}

interface AggregatorTask {
  task_id?: unknown;
  status?: unknown;
  fail_reason?: unknown;
  data?: unknown;
}

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
  readonly minPollS = SUNO_AGGREGATOR.pollFloorS;

  constructor(private readonly client: UpstreamClient) {}

  async create(account: VendorAccount, request: MusicRequest, callbackUrl: string | undefined): Promise<string> {
    const body: Record<string, unknown> = { mv: request.model, make_instrumental: request.instrumental };
    const words = { prompt: request.lyrics, gpt_description_prompt: request.description, tags: request.style, negative_tags: request.avoidStyle, title: request.title };
    for (const [field, value] of Object.entries(words)) if (value !== null) body[field] = value;
    if (request.continues) Object.assign(body, { continue_clip_id: request.continues.upstreamClipId, continue_at: request.continues.atS, task: request.continues.upload ? 'upload_extend' : 'extend' });
    if (callbackUrl) body.notify_hook = callbackUrl;
    const answer = await this.client.call('POST', `${account.baseUrl}/submit/music`, { body, auth: account.auth, failFast: true });
    checkAggregatorAnswer(answer.json);
    if (answer.json.code !== 'success' || typeof answer.json.data !== 'string' || !answer.json.data) {
      throw new UnusableAnswer(`the upstream refused the music task: ${upstreamMessage(answer.json) ?? String(answer.json.code ?? 'no task id returned')}`);
    }
    return answer.json.data;
  }

  async query(account: VendorAccount, upstreamId: string, once: boolean): Promise<MusicStatus> {
    const answer = await this.client.call('GET', `${account.baseUrl}/fetch/${encodeURIComponent(upstreamId)}`, { auth: account.auth, idempotent: true, once });
    return statusOf((answer.json.data ?? {}) as AggregatorTask);
  }

  async queryMany(account: VendorAccount, upstreamIds: string[]): Promise<Map<string, MusicStatus> | null> {
    let answer;
    try {
      answer = await this.client.call('POST', `${account.baseUrl}/fetch`, { body: { ids: upstreamIds }, auth: account.auth, idempotent: true, once: true });
    } catch (err) {
      if (err instanceof UpstreamRefused && (err.status === 404 || err.status === 405)) return null;
      throw err;
    }
    checkAggregatorAnswer(answer.json);
    const listed = Array.isArray(answer.json.data) ? (answer.json.data as AggregatorTask[]) : [];
    return new Map(listed.filter((t) => typeof t?.task_id === 'string').map((t) => [t.task_id as string, statusOf(t)]));
  }
}

/** SUCCESS with its clips; FAILURE, or any clip in error, failed with the upstream's words; anything else (SUBMITTED, QUEUED, IN_PROGRESS, UNKNOWN) still working. */
function statusOf(task: AggregatorTask): MusicStatus {
  const clips = Array.isArray(task.data) ? (task.data as unknown[]).filter((c): c is AggregatorClip => typeof c === 'object' && c !== null && !Array.isArray(c)) : [];
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
      ...(typeof c.id === 'string' ? { upstreamId: c.id } : {}),
      ...(typeof c.audio_url === 'string' && c.audio_url ? { audioUrl: c.audio_url } : {}),
      ...(typeof c.image_url === 'string' && c.image_url ? { coverUrl: c.image_url } : {}),
    })),
  };
}

function nonEmpty(value: unknown): string | null {
  return typeof value === 'string' && value.trim() ? value : null;
}
