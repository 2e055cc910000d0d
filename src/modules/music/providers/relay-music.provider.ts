import { writeFile } from 'node:fs/promises';
import { Inject, Injectable, Logger } from '@nestjs/common';
import type { ChannelPoll, StepOutcome, UpstreamWatcher } from '../../../common/tasks/task-kind.js';
import { AudioUnreadable, measureAudio, withPinnedAudio } from '../../../infra/ffmpeg/audio-decode.js';
import { UpstreamClient, UpstreamRefused, UpstreamUnavailable } from '../../../infra/relay/upstream-client.js';
import { CpuSlots } from '../../../infra/process/cpu-slots.js';
import { MediaFile } from '../../../infra/storage/storage.js';
import { type ChannelHandle, ChannelRouter } from '../../channels/channel-router.js';
import { MAX_UPSTREAM_ID, RelayFlow } from '../../channels/relay-flow.js';
import { UpstreamCallbackUrls } from '../../channels/upstream-callback-urls.js';
import { UnusableAnswer } from '../../../vendors/contracts/vendor.js';
import type { MusicClipStatus, MusicModelSpec, MusicRequest, MusicStatus, MusicVendor } from '../../../vendors/contracts/music-vendor.js';
import type { MusicTask } from '../music-task.js';
import type { MusicContext, MusicProvider, MusicTake } from './music-provider.js';

/** The music vendors' adapters by channel protocol (`src/vendors/music-vendors.ts`; a gateway speaks the aggregator's). */
export const MUSIC_VENDOR_ADAPTERS = Symbol('MUSIC_VENDOR_ADAPTERS');

/** Largest file copied from the upstream: an MP3 of a long song, or a cover. */
const MAX_AUDIO_BYTES = 200 * 1024 * 1024;
const MAX_COVER_BYTES = 10 * 1024 * 1024;
/** Longest upstream song taken (its file is decoded, its format pinned, to measure it): an hour. */
const MAX_SONG_S = 3600;

/**
 * Relays music to the vendors behind the music channels, on the one relay path (RelayFlow: channel, create
 * once, watch): what is music's own is here. A continuation goes to the channel that holds the clip it
 * continues (its account alone knows the clip's id) and names the vendor's id of that clip; the vendor's ids
 * are kept beside ours and never shown (its words are scrubbed of them). When the task ends, each take's
 * audio is copied into our store and measured, its cover too where it can be. An upstream failure ends the
 * task with the vendor's words (no failover after acceptance: a song is the vendor's own take on the words).
 */
@Injectable()
export class RelayMusicProvider implements MusicProvider, UpstreamWatcher {
  private readonly logger = new Logger(RelayMusicProvider.name);
  readonly watcher: UpstreamWatcher = this;

  constructor(
    private readonly client: UpstreamClient,
    private readonly flow: RelayFlow,
    private readonly router: ChannelRouter,
    private readonly callbacks: UpstreamCallbackUrls,
    private readonly cpu: CpuSlots,
    @Inject(MUSIC_VENDOR_ADAPTERS) private readonly vendors: Record<string, MusicVendor>,
  ) {}

  /** The tasks a channel holds are asked about up to 50 at a time where its vendor has a batch query, else one at a time. */
  channelPoll(channelId: string | null): Promise<ChannelPoll | null> {
    return this.flow.channelPoll(channelId, { operation: 'music', vendors: this.vendors });
  }

  step(task: MusicTask, ctx: MusicContext): Promise<StepOutcome<MusicTake[]>> {
    const pinnedTo = task.params.continues?.channel_id ?? null;
    return this.flow.step<MusicVendor, MusicStatus, MusicTake[], undefined>(task, ctx, {
      operation: 'music',
      noun: 'music task',
      vendors: this.vendors,
      // a continuation names the upstream's clip: only the account (channel) that holds it knows it
      pinned: pinnedTo !== null,
      prepare: async () => ({ pinnedTo, data: undefined }),
      create: async (channel, vendor) => {
        const request = musicRequest(task);
        const model = vendor.models.find((m) => m.id === request.model) ?? vendor.models[0];
        if (!model) throw new UpstreamRefused(`channel ${channel.name} has no music model`, 0, 'request', true);
        const callbackUrl = vendor.query ? this.callbacks.urlFor(task.id) : undefined;
        const answer = await vendor.create(channel, { request, model: model satisfies MusicModelSpec, taskId: task.id, callbackUrl });
        if ('made' in answer) {
          // a synchronous vendor's song, stored now (its bytes in hand, or its links fetched at once)
          const stored = await this.takes(task, ctx, channel, answer.made);
          if (stored.kind !== 'done') throw new UnusableAnswer(stored.kind === 'failed' ? stored.reason : 'the upstream answered no song');
          return { made: stored.result };
        }
        return { upstreamId: answer.upstreamId, callback: callbackUrl !== undefined };
      },
      failure: (status) => `the upstream failed the music task: ${scrub(status.reason, [task.upstreamId, ...status.secrets])}`,
      tenantWords: (message) => scrub(message, [task.upstreamId]),
      finished: (status, channel) => this.takes(task, ctx, channel, (status as Extract<MusicStatus, { state: 'succeeded' }>).clips),
    });
  }

  /** Each take's audio copied into our store and measured, with its cover where it can be copied. */
  private async takes(task: MusicTask, ctx: MusicContext, channel: ChannelHandle, clips: MusicClipStatus[]): Promise<StepOutcome<MusicTake[]>> {
    const wanted = task.params.clip_ids.length;
    if (clips.length < wanted) return { kind: 'failed', reason: `the upstream ended the task with ${clips.length} clip(s), ${wanted} expected` };
    const takes: MusicTake[] = [];
    for (const [index, clip] of clips.slice(0, wanted).entries()) {
      if (!clip.audioUrl && !clip.audio) return { kind: 'failed', reason: `the upstream's clip ${index + 1} has no audio_url` };
      const audio = new MediaFile(ctx.file(`take${index}`, clip.audio?.format ?? 'mp3'));
      if (clip.audio) await writeFile(audio.path, clip.audio.bytes);
      else
        try {
          await this.client.downloadToFile(clip.audioUrl!, MAX_AUDIO_BYTES, audio.path);
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
}

/** An upstream's words without its ids (task and clips) or any URL (its CDN links carry its clip ids): what a caller may read. */
function scrub(text: string, secrets: (string | null)[]): string {
  let out = withoutUrls(text);
  for (const secret of secrets) if (secret && secret.length >= 4) out = out.split(secret).join('<upstream id>');
  return out.slice(0, 500);
}

function withoutUrls(text: string): string {
  return text.replace(/\b[a-z][a-z0-9+.-]*:\/\/\S+/gi, '<url>');
}

/** The task's request as the vendors' adapters take it. */
function musicRequest(task: MusicTask): MusicRequest {
  const p = task.params;
  return {
    lyrics: p.lyrics,
    description: p.description,
    style: p.style,
    avoidStyle: p.avoid_style,
    title: p.title,
    model: p.model,
    instrumental: p.instrumental,
    durationS: null,
    continues: p.continues ? { upstreamClipId: p.continues.upstream_clip_id, atS: p.continues.at_s, upload: p.continues.from_upload } : null,
  };
}

