import { Injectable, Logger } from '@nestjs/common';
import type { ChannelPoll, StepOutcome, UpstreamWatcher, WatchedTask, WatchNews } from '../../../common/tasks/task-kind.js';
import { AppConfig } from '../../../infra/config/app-config.js';
import { AudioUnreadable, measureAudio, withPinnedAudio } from '../../../infra/ffmpeg/audio-decode.js';
import { pollDelaySeconds, submitOnce, UpstreamBusy, UpstreamClient, UpstreamRefused, UpstreamUnavailable, upstreamMessage } from '../../../infra/relay/upstream-client.js';
import { CpuSlots } from '../../../infra/process/cpu-slots.js';
import { MediaFile } from '../../../infra/storage/storage.js';
import { type ChannelHandle, ChannelRouter } from '../../channels/channel-router.js';
import { UpstreamCallbackUrls } from '../../channels/upstream-callback-urls.js';
import { checkAggregatorAnswer } from '../../../vendors/suno-aggregator/suno-aggregator.vendor.js';
import type { MusicTask } from '../music-task.js';
import type { MusicContext, MusicProvider, MusicTake } from './music-provider.js';

interface UpstreamClip {
  id?: unknown;
  status?: unknown;
  audio_url?: unknown;
  image_url?: unknown;
  metadata?: { error_message?: unknown } | null;
}

interface UpstreamTask {
  task_id?: unknown;
  status?: unknown;
  fail_reason?: unknown;
  data?: unknown;
}

/** The aggregators' final states, and how many tasks one batch fetch asks about. */
const FINAL = new Set(['SUCCESS', 'FAILURE', 'UNKNOWN']);
const FETCH_BATCH = 50;
/** How often An aggregator may be asked about a task: it publishes no limit, so the schedule (RELAY_POLL_MS and the age back-off) alone decides. */
const MIN_POLL_S = 0;

/** Largest file copied from the upstream: an MP3 of a long song, or a cover. */
const MAX_AUDIO_BYTES = 200 * 1024 * 1024;
const MAX_COVER_BYTES = 10 * 1024 * 1024;
/** Longest upstream song taken (its file is decoded, its format pinned, to measure it): an hour. */
const MAX_SONG_S = 3600;

/**
 * Forwards music to a Suno-style aggregator through the task's channel (a channel's base is the
 * aggregator's prefix, such as https://host/suno; RELAY_MUSIC_URL is one channel); a continuation goes to
 * the channel that holds the clip it continues (its account alone knows the clip's id):
 * POST {base}/submit/music answers `{ code: "success", data: <task id> }`, GET {base}/fetch/{id} reports the
 * task and its clips. A continuation sends the upstream's id of the clip continued; the upstream's ids are
 * kept beside ours and never shown. When the task ends, each take's audio and cover are copied into our store.
 */
@Injectable()
export class RelayMusicProvider implements MusicProvider, UpstreamWatcher {
  private readonly logger = new Logger(RelayMusicProvider.name);
  readonly watcher: UpstreamWatcher = this;
  /** Channels whose aggregator has no batch fetch (it refused POST /fetch): their tasks are fetched one by one. */
  private readonly singleFetch = new Set<string>();

  constructor(
    private readonly client: UpstreamClient,
    private readonly config: AppConfig,
    private readonly router: ChannelRouter,
    private readonly callbacks: UpstreamCallbackUrls,
    private readonly cpu: CpuSlots,
  ) {}

  /**
   * The tasks a channel holds are asked about up to FETCH_BATCH at a time, with the aggregators' batch fetch
   * (`POST {base}/fetch {ids}`: the answer lists the tasks it knows); an aggregator without it is asked
   * one task at a time (`GET {base}/fetch/{id}`).
   */
  async channelPoll(channelId: string | null): Promise<ChannelPoll | null> {
    const channel = await this.router.heldBy({ channelId }, 'music');
    if (!channel) return null;
    const single = this.singleFetch.has(channel.baseUrl);
    return {
      name: channel.name,
      batchSize: single ? 1 : FETCH_BATCH,
      poll: (tasks: WatchedTask[]) => this.router.onHeld(channel, tasks[0].id, 'music', () => (single ? this.fetchOne(channel, tasks[0]) : this.fetchMany(channel, tasks))),
    };
  }

  private async fetchMany(channel: ChannelHandle, tasks: WatchedTask[]): Promise<Map<string, WatchNews>> {
    let answer;
    try {
      answer = await this.client.call('POST', `${channel.baseUrl}/fetch`, { body: { ids: tasks.map((t) => t.upstreamId) }, auth: channel.auth, idempotent: true, once: true });
    } catch (err) {
      if (!(err instanceof UpstreamRefused && (err.status === 404 || err.status === 405))) throw err;
      this.singleFetch.add(channel.baseUrl);
      return new Map();
    }
    checkAggregatorAnswer(answer.json);
    const listed = Array.isArray(answer.json.data) ? (answer.json.data as UpstreamTask[]) : [];
    const byUpstream = new Map(listed.filter((t) => typeof t?.task_id === 'string').map((t) => [t.task_id as string, t]));
    return new Map(tasks.map((t): [string, WatchNews] => [t.id, newsOf(byUpstream.get(t.upstreamId))]));
  }

  private async fetchOne(channel: ChannelHandle, task: WatchedTask): Promise<Map<string, WatchNews>> {
    const answer = await this.client.call('GET', `${channel.baseUrl}/fetch/${encodeURIComponent(task.upstreamId)}`, { auth: channel.auth, idempotent: true, once: true });
    return new Map([[task.id, newsOf((answer.json.data ?? undefined) as UpstreamTask | undefined)]]);
  }

  /** The take's cover, best effort: a cover that cannot be copied is left out (the audio is what the task is for). */
  private async cover(task: MusicTask, clip: UpstreamClip): Promise<Buffer | null> {
    if (typeof clip.image_url !== 'string' || !clip.image_url) return null;
    try {
      return await this.client.download(clip.image_url, MAX_COVER_BYTES);
    } catch (err) {
      if (!(err instanceof UpstreamUnavailable) && !(err instanceof UpstreamRefused)) throw err;
      this.logger.warn({ msg: "could not copy an upstream clip's cover; the clip has none", task_id: task.id, reason: withoutUrls(err.message) });
      return null;
    }
  }

  private async submit(channel: ChannelHandle, task: MusicTask, ctx: MusicContext): Promise<StepOutcome<MusicTake[]>> {
    const notifyHook = this.callbacks.urlFor(task.id);
    const created = await submitOnce(ctx, async () => {
      const body = { ...upstreamBody(task), ...(notifyHook ? { notify_hook: notifyHook } : {}) };
      const answer = await this.client.call('POST', `${channel.baseUrl}/submit/music`, { body, auth: channel.auth, failFast: true });
      checkAggregatorAnswer(answer.json);
      return answer;
    });
    if (created.json.code !== 'success' || typeof created.json.data !== 'string' || !created.json.data) {
      return { kind: 'failed', reason: `the upstream refused the music task: ${scrub(upstreamMessage(created.json) ?? String(created.json.code ?? 'no task id returned'), [])}` };
    }
    if (created.json.data.length > MAX_UPSTREAM_ID) return { kind: 'failed', reason: `the upstream answered a task id longer than ${MAX_UPSTREAM_ID} characters` };
    await ctx.saveUpstreamId(created.json.data, { callback: notifyHook !== undefined });
    return { kind: 'watch', minPollS: MIN_POLL_S };
  }

  async step(task: MusicTask, ctx: MusicContext): Promise<StepOutcome<MusicTake[]>> {
    const wait = (): StepOutcome<MusicTake[]> => ({ kind: 'wait', seconds: pollDelaySeconds(task.createdAt, this.config.relay.pollMs) });
    try {
      if (!task.upstreamId) {
        if (task.submitStartedAt) return await this.router.gatewayFailure(task.id, 'music', `the upstream never answered the music request (channel ${task.channelId ?? 'RELAY_MUSIC_URL'}); it was not sent again, to avoid a duplicate`);
        // A continuation names the upstream's clip: only the account (channel) that holds it knows it.
        return await this.router.submitNew({ operation: 'music', task, marks: ctx, pinnedTo: task.params.continue_channel_id ?? null, send: (channel) => this.submit(channel, task, ctx) });
      }
      const channel = await this.router.heldBy(task, 'music');
      if (!channel) return await this.router.gatewayFailure(task.id, 'music', `the channel that holds the music task (${task.channelId ?? 'RELAY_MUSIC_URL'}) no longer exists`);
      const upstreamId = task.upstreamId;
      const answer = await this.router.onHeld(channel, task.id, 'music', () =>
        this.client.call('GET', `${channel.baseUrl}/fetch/${encodeURIComponent(upstreamId)}`, { auth: channel.auth, idempotent: true }),
      );
      const upstream = (answer.json.data ?? {}) as UpstreamTask;
      const clips = Array.isArray(upstream.data) ? (upstream.data as unknown[]).filter((c): c is UpstreamClip => typeof c === 'object' && c !== null && !Array.isArray(c)) : [];
      const secrets = [task.upstreamId, ...clips.map((c) => (typeof c.id === 'string' ? c.id : ''))];
      const broken = clips.find((c) => c.status === 'error');
      if (upstream.status === 'FAILURE' || broken) {
        const reason = nonEmpty(upstream.fail_reason) ?? nonEmpty(broken?.metadata?.error_message) ?? 'no reason given';
        return { kind: 'failed', reason: `the upstream failed the music task: ${scrub(reason, secrets)}` };
      }
      if (upstream.status !== 'SUCCESS') return { kind: 'watch', minPollS: MIN_POLL_S };
      const wanted = task.params.clip_ids.length;
      if (clips.length < wanted) return { kind: 'failed', reason: `the upstream ended the task with ${clips.length} clip(s), ${wanted} expected` };
      const takes: MusicTake[] = [];
      for (const [index, clip] of clips.slice(0, wanted).entries()) {
        if (typeof clip.audio_url !== 'string' || !clip.audio_url) return { kind: 'failed', reason: `the upstream's clip ${index + 1} has no audio_url` };
        const audio = new MediaFile(ctx.file(`take${index}`, 'mp3'));
        try {
          await this.client.downloadToFile(clip.audio_url, MAX_AUDIO_BYTES, audio.path);
        } catch (err) {
          if (err instanceof UpstreamRefused) return await this.router.gatewayFailure(task.id, 'music', `could not download the upstream's clip ${index + 1}: ${err.message}`, channel);
          throw err;
        }
        let durationS: number;
        try {
          durationS = (await withPinnedAudio(audio.path, (pinned) => this.cpu.run(() => measureAudio(audio.path, pinned, { maxS: MAX_SONG_S })))).durationS;
        } catch (err) {
          if (!(err instanceof AudioUnreadable)) throw err;
          this.logger.warn({ msg: "an upstream's clip could not be decoded", task_id: task.id, reason: err.reason, ffmpeg: err.detail });
          return { kind: 'failed', reason: `the upstream's clip ${index + 1} ${err.reason}` };
        }
        if (durationS > MAX_SONG_S) return { kind: 'failed', reason: `the upstream's clip ${index + 1} lasts more than ${MAX_SONG_S} s` };
        const upstreamId = typeof clip.id === 'string' && clip.id.length <= MAX_UPSTREAM_ID ? clip.id : null;
        takes.push({ audio, durationS, cover: await this.cover(task, clip), upstreamId });
      }
      return { kind: 'done', result: takes };
    } catch (err) {
      if (err instanceof UpstreamRefused) return await this.router.refusal(task.id, 'music', err, 'the upstream refused the music task', (m) => scrub(m, [task.upstreamId]));
      if (err instanceof UpstreamBusy) return { kind: 'busy', seconds: pollDelaySeconds(task.createdAt, this.config.relay.pollMs) };
      if (err instanceof UpstreamUnavailable) return wait();
      throw err;
    }
  }
}

/** Longest upstream id kept (the column's size); a longer one is not stored. */
const MAX_UPSTREAM_ID = 256;

/** An upstream's words without its ids (task and clips) or any URL (its CDN links carry its clip ids): what a caller may read. */
function scrub(text: string, secrets: (string | null)[]): string {
  let out = withoutUrls(text);
  for (const secret of secrets) if (secret && secret.length >= 4) out = out.split(secret).join('<upstream id>');
  return out.slice(0, 500);
}

function withoutUrls(text: string): string {
  return text.replace(/\b[a-z][a-z0-9+.-]*:\/\/\S+/gi, '<url>');
}

/** The request as the aggregator takes it: ours, with the upstream's id of the clip continued. */
function upstreamBody(task: MusicTask): Record<string, unknown> {
  const p = task.params;
  const body: Record<string, unknown> = { mv: p.mv, make_instrumental: p.make_instrumental };
  for (const key of ['prompt', 'gpt_description_prompt', 'tags', 'negative_tags', 'title'] as const) if (p[key] !== null) body[key] = p[key];
  if (p.continue_clip_id) Object.assign(body, { continue_clip_id: p.continue_upstream_id, continue_at: p.continue_at, task: p.task });
  return body;
}

/**
 * A task's news in a fetch's answer: final, or a clip in error, is news; so is a task the answer does not
 * list (the aggregator may have lost it: its step asks for it alone and decides).
 */
function newsOf(task: UpstreamTask | undefined): WatchNews {
  if (!task) return 'changed';
  const clips = Array.isArray(task.data) ? (task.data as UpstreamClip[]) : [];
  return FINAL.has(String(task.status)) || clips.some((c) => c?.status === 'error') ? 'changed' : 'working';
}

function nonEmpty(value: unknown): string | null {
  return typeof value === 'string' && value.trim() ? value : null;
}
