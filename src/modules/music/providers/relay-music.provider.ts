import { readFile, rename, writeFile } from 'node:fs/promises';
import { Inject, Injectable, Logger } from '@nestjs/common';
import type { ChannelPoll, StepOutcome, UpstreamWatcher } from '../../../common/tasks/task-kind.js';
import { AudioUnreadable, measureAudio, withPinnedAudio } from '../../../infra/ffmpeg/audio-decode.js';
import { runFfmpeg } from '../../../infra/ffmpeg/ffmpeg.js';
import { sniffAudioFile } from '../../../infra/ffmpeg/media-format.js';
import { UpstreamClient, UpstreamRefused, UpstreamUnavailable } from '../../../infra/relay/upstream-client.js';
import { CpuSlots } from '../../../infra/process/cpu-slots.js';
import { MediaFile } from '../../../infra/storage/storage.js';
import { type CandidateChannel, type ChannelHandle, ChannelRouter } from '../../channels/channel-router.js';
import { servedModels, type ServedOf } from '../../channels/channel-models.js';
import { CLIP_LYRICS_MAX, CLIP_TITLE_MAX, keptText, keptTimedWords } from '../../clips/clip-lyrics.js';
import { CLIP_AUDIO_ROLE } from '../../clips/clip-media.js';
import { ClipsRepository } from '../../clips/clips.repository.js';
import { MediaService } from '../../media/media.service.js';
import { MusicModels } from '../music-offer.js';
import { MUSIC_DEFINITION } from '../music.definition.js';
import { MAX_UPSTREAM_ID, RelayFlow } from '../../channels/relay-flow.js';
import { UpstreamCallbackUrls } from '../../channels/upstream-callback-urls.js';
import { UnusableAnswer } from '../../../vendors/contracts/vendor.js';
import { type MusicAsk, type MusicClipStatus, type MusicFormat, type MusicModelSpec, type MusicRequest, type MusicSource, type MusicStatus, type MusicVendor, unmetMusicFields } from '../../../vendors/contracts/music-vendor.js';
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
    private readonly models: MusicModels,
    private readonly clips: ClipsRepository,
    private readonly media: MediaService,
    @Inject(MUSIC_VENDOR_ADAPTERS) private readonly vendors: Record<string, MusicVendor>,
  ) {}

  /** The tasks a channel holds are asked about up to 50 at a time where its vendor has a batch query, else one at a time. */
  channelPoll(channelId: string | null): Promise<ChannelPoll | null> {
    return this.flow.channelPoll(channelId, { operation: 'music', vendors: this.vendors });
  }

  async step(task: MusicTask, ctx: MusicContext): Promise<StepOutcome<MusicTake[]>> {
    const held = task.params.continues?.channel_id ?? null;
    // a continuation of a clip a vendor holds goes to the channel that holds it (its account alone knows the
    // clip's id), unless some configured model continues a clip from its bytes: then any channel that makes it
    const pinnedTo = held !== null && !(await this.models.offered()).some((m) => m.spec.continueUpload) ? held : null;
    const modelFor = (channel: CandidateChannel & { id?: string }) => musicModelOn(channel, task, held);
    return this.flow.step<MusicVendor, MusicStatus, MusicTake[], undefined>(task, ctx, {
      operation: 'music',
      noun: MUSIC_DEFINITION.noun,
      vendors: this.vendors,
      pinned: pinnedTo !== null,
      failsOver: true,
      fits: (channel) => modelFor(channel) !== undefined,
      costOf: (channel) => modelFor(channel)?.price?.per_song ?? null,
      taken: (channel) => {
        const model = modelFor(channel);
        return { model: model?.name ?? task.params.model ?? '', cost: model?.price?.per_song ?? null };
      },
      prepare: async () => ({ pinnedTo, data: undefined }),
      create: async (channel, vendor) => {
        const model = modelFor(channel);
        if (!model) throw new UpstreamRefused(`channel ${channel.name} has no music model that makes what the task asks`, 0, 'request', true);
        const byId = task.params.continues !== null && task.params.continues.channel_id === channel.id && task.params.continues.upstream_clip_id !== null && model.spec.continueOwn;
        const request = musicRequest(task, model.spec, byId);
        const callbackUrl = vendor.query && vendor.callsBack !== false ? this.callbacks.urlFor(task.id) : undefined;
        const source = task.params.continues && !byId ? this.sourceOf(task, ctx) : undefined;
        const answer = await vendor.create(channel, { request, model: model.spec, taskId: task.id, callbackUrl, source });
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
      finished: async (status, channel) => this.takes(task, ctx, channel, await this.timed(task, channel, (status as Extract<MusicStatus, { state: 'succeeded' }>).clips)),
    });
  }

  /** The clip a continuation continues, as a vendor that takes it from us gets it: a signed link to our copy, or its bytes. */
  private sourceOf(task: MusicTask, ctx: MusicContext): MusicSource {
    const clipId = task.params.continues!.clip_id;
    const row = async () => {
      const clip = await this.clips.findById(clipId);
      const media = clip && (await this.media.findForTask(clip.taskId, CLIP_AUDIO_ROLE, clip.idx));
      if (!media) throw new UnusableAnswer(`the audio of clip ${clipId} is no longer stored`);
      return media;
    };
    return {
      url: async () => this.media.signedUrl(await row(), this.media.linkBase(task.baseUrl)),
      bytes: async () => {
        const file = ctx.file('source', 'audio');
        if ((await this.media.copyToFile(await row(), file)) === null) throw new UnusableAnswer(`the audio of clip ${clipId} is no longer stored`);
        const sniff = await sniffAudioFile(file);
        const format: MusicFormat = sniff.ok && isMusicFormat(sniff.format) ? sniff.format : 'mp3';
        const durationS = (await withPinnedAudio(file, (pinned) => this.cpu.run(() => measureAudio(file, pinned, { maxS: MAX_SONG_S })))).durationS;
        return { bytes: await readFile(file), format, durationS };
      },
    };
  }

  /**
   * The takes with their words timed where the vendor times them on a call of its own (`timedLyrics`): asked for
   * each take its status gave none, best effort: a take whose timing cannot be had is kept without (the song is
   * what the task is for), an instrumental's never asked.
   */
  private async timed(task: MusicTask, channel: ChannelHandle, clips: MusicClipStatus[]): Promise<MusicClipStatus[]> {
    const vendor = this.vendors[channel.protocol];
    if (!vendor?.timedLyrics || !task.upstreamId || task.params.instrumental) return clips;
    const out: MusicClipStatus[] = [];
    for (const clip of clips) {
      if (clip.timedLyrics?.length || !clip.upstreamId) {
        out.push(clip);
        continue;
      }
      try {
        const words = await vendor.timedLyrics(channel, task.upstreamId, clip);
        out.push(words?.length ? { ...clip, timedLyrics: words } : clip);
      } catch (err) {
        this.logger.warn({ msg: "could not get an upstream take's timed lyrics; the take is kept without", task_id: task.id, reason: scrub(err instanceof Error ? err.message : String(err), [task.upstreamId, clip.upstreamId ?? null]) });
        out.push(clip);
      }
    }
    return out;
  }

  /** Each take's audio copied into our store and measured, with its cover where it can be copied. */
  private async takes(task: MusicTask, ctx: MusicContext, channel: ChannelHandle, clips: MusicClipStatus[]): Promise<StepOutcome<MusicTake[]>> {
    const wanted = Math.min(task.params.clip_ids.length, musicModelOn(channel, task, task.params.continues?.channel_id ?? null)?.spec.takes ?? task.params.clip_ids.length);
    if (clips.length < wanted) return { kind: 'failed', reason: `the upstream ended the task with ${clips.length} clip(s), ${wanted} expected` };
    const takes: MusicTake[] = [];
    for (const [index, clip] of clips.slice(0, wanted).entries()) {
      if (!clip.audioUrl && !clip.audio) return { kind: 'failed', reason: `the upstream's clip ${index + 1} has no audio_url` };
      let audio = new MediaFile(ctx.file(`take${index}`, clip.audio?.format ?? 'audio'));
      if (clip.audio) await writeFile(audio.path, clip.audio.bytes);
      else
        try {
          await this.client.downloadToFile(clip.audioUrl!, MAX_AUDIO_BYTES, audio.path);
        } catch (err) {
          if (err instanceof UpstreamRefused) return await this.router.gatewayFailure(task.id, 'music', `could not download the upstream's clip ${index + 1}: ${err.message}`, channel);
          throw err;
        }
      const sniff = await sniffAudioFile(audio.path);
      const format = sniff.ok ? sniff.format : 'mp3';
      const cut = clip.fromStart ? task.params.continues?.at_s : undefined;
      if (cut) audio = await this.afterCut(audio, cut, ctx, index);
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
      const lyrics = keptText(clip.lyrics, CLIP_LYRICS_MAX);
      const title = keptText(clip.title, CLIP_TITLE_MAX);
      const timedLyrics = keptTimedWords(clip.timedLyrics, { fromS: cut ?? 0, durationS });
      takes.push({
        audio,
        durationS,
        format: cut ? 'mp3' : format,
        cover: await this.cover(task, clip),
        upstreamId: clipId,
        ...(lyrics ? { lyrics } : {}),
        ...(title ? { title } : {}),
        ...(timedLyrics ? { timedLyrics } : {}),
      });
    }
    return { kind: 'done', result: takes };
  }

  /**
   * What follows the cut of a take that holds the continued clip too (`fromStart`): the task keeps only its new
   * part, as Suno's continuations are, so a joined song is the continued clip's own samples up to the cut.
   */
  private async afterCut(audio: MediaFile, cutS: number, ctx: MusicContext, index: number): Promise<MediaFile> {
    const out = ctx.file(`take${index}-new`, 'mp3');
    await this.cpu.run(() => runFfmpeg(['-loglevel', 'error', '-i', audio.path, '-ss', String(cutS), '-map', '0:a:0', '-c:a', 'libmp3lame', '-b:a', '192k', '-write_xing', '1', '-f', 'mp3', '-y', out], { limitMs: 120_000 }));
    await rename(out, audio.path);
    return audio;
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

/** The formats a vendor's song is kept in as it came. */
function isMusicFormat(format: string): format is MusicFormat {
  return ['mp3', 'wav', 'flac', 'ogg', 'aac', 'opus'].includes(format);
}

/**
 * What the task asks of a model on a channel: a continuation of a clip a vendor holds is its own only on the
 * channel that holds it (elsewhere, a clip stored here, taken from its bytes).
 */
export function musicAskOn(task: MusicTask, channelId: string | undefined, held: string | null): MusicAsk {
  const p = task.params;
  const own = p.continues !== null && p.continues.upstream_clip_id !== null && held !== null && channelId === held;
  return {
    ...(p.model !== null ? { model: p.model } : {}),
    lyrics: p.lyrics,
    description: p.description,
    style: p.style,
    avoidStyle: p.avoid_style,
    instrumental: p.instrumental,
    durationS: p.duration_s ?? null,
    continues: p.continues === null ? null : own ? 'own' : 'stored',
  };
}

/** The model a channel makes the task with (the one named, or its first that makes it); undefined: none. */
function musicModelOn(channel: CandidateChannel & { id?: string }, task: MusicTask, held: string | null): ServedOf<MusicModelSpec> | undefined {
  const ask = musicAskOn(task, channel.id, held);
  return servedModels<MusicModelSpec>(channel, 'music').find((m) => (ask.model === undefined || m.name === ask.model) && unmetMusicFields(m.spec, ask).length === 0);
}

/** The task's request as the vendors' adapters take it (`byId`: the continued clip is named by the vendor's own id). */
function musicRequest(task: MusicTask, spec: MusicModelSpec, byId: boolean): MusicRequest {
  const p = task.params;
  return {
    lyrics: p.lyrics,
    description: p.description,
    style: p.style,
    avoidStyle: p.avoid_style,
    title: p.title,
    model: spec.id,
    instrumental: p.instrumental,
    durationS: spec.durationS ? (p.duration_s ?? null) : null,
    continues: p.continues ? { upstreamClipId: byId ? p.continues.upstream_clip_id : null, atS: p.continues.at_s, upload: byId ? p.continues.from_upload : true } : null,
  };
}

