import { Inject, Injectable, Logger } from '@nestjs/common';
import type { ChannelPoll, StepOutcome, UpstreamWatcher, WatchedTask, WatchNews } from '../../../common/tasks/task-kind.js';
import { AppConfig } from '../../../infra/config/app-config.js';
import { AudioUnreadable, measureAudio, withPinnedAudio } from '../../../infra/ffmpeg/audio-decode.js';
import { pollDelaySeconds, submitOnce, UpstreamBusy, UpstreamClient, UpstreamRefused, UpstreamUnavailable } from '../../../infra/relay/upstream-client.js';
import { CpuSlots } from '../../../infra/process/cpu-slots.js';
import { MediaFile } from '../../../infra/storage/storage.js';
import { type ChannelHandle, ChannelRouter } from '../../channels/channel-router.js';
import { UpstreamCallbackUrls } from '../../channels/upstream-callback-urls.js';
import type { MusicClipStatus, MusicRequest, MusicStatus, MusicVendor } from '../../../vendors/contracts/music-vendor.js';
import { UnusableAnswer } from '../../../vendors/contracts/vendor.js';
import type { MusicTask } from '../music-task.js';
import type { MusicContext, MusicProvider, MusicTake } from './music-provider.js';

/** How many tasks one batch query asks about. */
const FETCH_BATCH = 50;

/** The music vendors' adapters by channel protocol (`src/vendors/music-vendors.ts`; a gateway speaks the aggregator's). */
export const MUSIC_VENDOR_ADAPTERS = Symbol('MUSIC_VENDOR_ADAPTERS');

/** Largest file copied from the upstream: an MP3 of a long song, or a cover. */
const MAX_AUDIO_BYTES = 200 * 1024 * 1024;
const MAX_COVER_BYTES = 10 * 1024 * 1024;
/** Longest upstream song taken (its file is decoded, its format pinned, to measure it): an hour. */
const MAX_SONG_S = 3600;

/**
 * Relays music to the vendors behind the music channels (a channel's adapter by its protocol, `src/vendors/`;
 * RELAY_MUSIC_URL is one channel speaking the door's own interface, a Suno-style aggregator's). A
 * continuation goes to the channel that holds the clip it continues (its account alone knows the clip's id)
 * and names the vendor's id of that clip; the vendor's ids are kept beside ours and never shown. When the
 * task ends, each take's audio and cover are copied into our store.
 */
@Injectable()
export class RelayMusicProvider implements MusicProvider, UpstreamWatcher {
  private readonly logger = new Logger(RelayMusicProvider.name);
  readonly watcher: UpstreamWatcher = this;
  /** Channels whose account has no batch query (the vendor refused it): their tasks are asked about one by one. */
  private readonly singleFetch = new Set<string>();

  constructor(
    private readonly client: UpstreamClient,
    private readonly config: AppConfig,
    private readonly router: ChannelRouter,
    private readonly callbacks: UpstreamCallbackUrls,
    private readonly cpu: CpuSlots,
    @Inject(MUSIC_VENDOR_ADAPTERS) private readonly vendors: Record<string, MusicVendor>,
  ) {}

  /**
   * The tasks a channel holds are asked about up to FETCH_BATCH at a time where its vendor has a batch
   * query (a task the answer leaves out is news: its step asks for it alone and decides); else one at a time.
   */
  async channelPoll(channelId: string | null): Promise<ChannelPoll | null> {
    const channel = await this.router.heldBy({ channelId }, 'music');
    const vendor = channel ? this.vendors[channel.protocol] : undefined;
    if (!channel || !vendor) return null;
    const single = !vendor.queryMany || this.singleFetch.has(channel.baseUrl);
    return {
      name: channel.name,
      batchSize: single ? 1 : FETCH_BATCH,
      poll: (tasks: WatchedTask[]) => this.router.onHeld(channel, tasks[0].id, 'music', () => (single ? this.queryOne(vendor, channel, tasks[0]) : this.queryMany(vendor, channel, tasks))),
    };
  }

  private async queryMany(vendor: MusicVendor, channel: ChannelHandle, tasks: WatchedTask[]): Promise<Map<string, WatchNews>> {
    const statuses = await vendor.queryMany!(channel, tasks.map((t) => t.upstreamId));
    if (!statuses) {
      this.singleFetch.add(channel.baseUrl);
      return new Map();
    }
    return new Map(tasks.map((t): [string, WatchNews] => [t.id, newsOf(statuses.get(t.upstreamId))]));
  }

  private async queryOne(vendor: MusicVendor, channel: ChannelHandle, task: WatchedTask): Promise<Map<string, WatchNews>> {
    return new Map([[task.id, newsOf(await vendor.query(channel, task.upstreamId, true))]]);
  }

  /** The take's cover, best effort: a cover that cannot be copied is left out (the audio is what the task is for). */
  private async cover(task: MusicTask, clip: MusicClipStatus): Promise<Buffer | null> {
    if (!clip.coverUrl) return null;
    try {
      return await this.client.download(clip.coverUrl, MAX_COVER_BYTES);
    } catch (err) {
      if (!(err instanceof UpstreamUnavailable) && !(err instanceof UpstreamRefused)) throw err;
      this.logger.warn({ msg: "could not copy an upstream clip's cover; the clip has none", task_id: task.id, reason: withoutUrls(err.message) });
      return null;
    }
  }

  private async submit(channel: ChannelHandle, task: MusicTask, ctx: MusicContext): Promise<StepOutcome<MusicTake[]>> {
    const vendor = this.vendors[channel.protocol];
    if (!vendor) throw new UpstreamRefused(`channel ${channel.name} speaks ${channel.protocol}, which makes no music`, 0, 'request', true);
    const callbackUrl = this.callbacks.urlFor(task.id);
    const upstreamId = await submitOnce(ctx, () => vendor.create(channel, musicRequest(task), callbackUrl));
    if (upstreamId.length > MAX_UPSTREAM_ID) return { kind: 'failed', reason: `the upstream answered a task id longer than ${MAX_UPSTREAM_ID} characters` };
    await ctx.saveUpstreamId(upstreamId, { callback: callbackUrl !== undefined });
    return { kind: 'watch', minPollS: vendor.minPollS };
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
      const vendor = this.vendors[channel.protocol];
      if (!vendor) return await this.router.gatewayFailure(task.id, 'music', `channel ${channel.name} speaks ${channel.protocol}, which makes no music`, channel);
      const upstreamId = task.upstreamId;
      const status = await this.router.onHeld(channel, task.id, 'music', () => vendor.query(channel, upstreamId, false));
      if (status.state === 'failed') return { kind: 'failed', reason: `the upstream failed the music task: ${scrub(status.reason, [task.upstreamId, ...status.secrets])}` };
      if (status.state === 'working') return { kind: 'watch', minPollS: vendor.minPollS };
      const clips = status.clips;
      const wanted = task.params.clip_ids.length;
      if (clips.length < wanted) return { kind: 'failed', reason: `the upstream ended the task with ${clips.length} clip(s), ${wanted} expected` };
      const takes: MusicTake[] = [];
      for (const [index, clip] of clips.slice(0, wanted).entries()) {
        if (!clip.audioUrl) return { kind: 'failed', reason: `the upstream's clip ${index + 1} has no audio_url` };
        const audio = new MediaFile(ctx.file(`take${index}`, 'mp3'));
        try {
          await this.client.downloadToFile(clip.audioUrl, MAX_AUDIO_BYTES, audio.path);
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
        const clipId = clip.upstreamId && clip.upstreamId.length <= MAX_UPSTREAM_ID ? clip.upstreamId : null;
        takes.push({ audio, durationS, cover: await this.cover(task, clip), upstreamId: clipId });
      }
      return { kind: 'done', result: takes };
    } catch (err) {
      if (err instanceof UnusableAnswer) return { kind: 'failed', reason: scrub(err.message, []) };
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

/** The task's request in the gateway's words (its parameters document keeps the door's names): what the vendor's adapter maps out. */
function musicRequest(task: MusicTask): MusicRequest {
  const p = task.params;
  return {
    lyrics: p.prompt,
    description: p.gpt_description_prompt,
    style: p.tags,
    avoidStyle: p.negative_tags,
    title: p.title,
    model: p.mv,
    instrumental: p.make_instrumental,
    continues: p.continue_clip_id ? { upstreamClipId: p.continue_upstream_id, atS: p.continue_at, upload: p.task === 'upload_extend' } : null,
  };
}

/** A task's news in a poll: an end (success or failure) is news; so is a task a batch answer does not list (the vendor may have lost it: its step asks for it alone and decides). */
function newsOf(status: MusicStatus | undefined): WatchNews {
  return !status || status.state !== 'working' ? 'changed' : 'working';
}
