import { writeFile } from 'node:fs/promises';
import { Inject, Injectable, Logger } from '@nestjs/common';
import type { ChannelPoll, StepOutcome, UpstreamWatcher } from '../../../common/tasks/task-kind.js';
import { AudioUnreadable, measureAudio, withPinnedAudio } from '../../../infra/ffmpeg/audio-decode.js';
import { sniffAudioFile } from '../../../infra/ffmpeg/media-format.js';
import { CpuSlots } from '../../../infra/process/cpu-slots.js';
import { UpstreamClient, UpstreamRefused } from '../../../infra/relay/upstream-client.js';
import { MediaFile } from '../../../infra/storage/storage.js';
import type { StemAudio, StemsAsk, StemsModelSpec, StemsStatus, StemsVendor } from '../../../vendors/contracts/stems-vendor.js';
import { unmetStemsFields } from '../../../vendors/contracts/stems-vendor.js';
import { UnusableAnswer } from '../../../vendors/contracts/vendor.js';
import { servedModels, type ServedOf } from '../../channels/channel-models.js';
import { type CandidateChannel, type ChannelHandle, ChannelRouter } from '../../channels/channel-router.js';
import { RelayFlow } from '../../channels/relay-flow.js';
import { UpstreamCallbackUrls } from '../../channels/upstream-callback-urls.js';
import { ClipsRepository } from '../../clips/clips.repository.js';
import { MediaService } from '../../media/media.service.js';
import { StemsModels } from '../stems-offer.js';
import { clipSource, MAX_CLIP_S } from '../stems-source.js';
import type { StemsTask } from '../stems-task.js';
import type { StemsContext, StemsProvider, StemTake } from './stems-provider.js';

/** The stems vendors' adapters by channel protocol (`src/vendors/stems-vendors.ts`). */
export const STEMS_VENDOR_ADAPTERS = Symbol('STEMS_VENDOR_ADAPTERS');

/** Largest stem file copied from an upstream's link. */
const MAX_STEM_BYTES = 200 * 1024 * 1024;

/**
 * Relays stems tasks to the vendors behind the stems channels, on the one relay path (RelayFlow): a task goes to
 * a channel with a model that makes the split asked and takes the clip (any stored clip: its bytes or a link to
 * our copy; a vendor's own clip: only on the channel that holds it, named by its ids), priced per task
 * (`per_song`); a vendor's own failure goes on to the next capable channel. Every stem is copied into our store
 * and measured before the task succeeds.
 */
@Injectable()
export class RelayStemsProvider implements StemsProvider, UpstreamWatcher {
  private readonly logger = new Logger(RelayStemsProvider.name);
  readonly watcher: UpstreamWatcher = this;

  constructor(
    private readonly flow: RelayFlow,
    private readonly client: UpstreamClient,
    private readonly router: ChannelRouter,
    private readonly callbacks: UpstreamCallbackUrls,
    private readonly cpu: CpuSlots,
    private readonly clips: ClipsRepository,
    private readonly media: MediaService,
    private readonly models: StemsModels,
    @Inject(STEMS_VENDOR_ADAPTERS) private readonly vendors: Record<string, StemsVendor>,
  ) {}

  channelPoll(channelId: string | null): Promise<ChannelPoll | null> {
    return this.flow.channelPoll(channelId, { operation: 'stems', vendors: this.vendors, failsOver: true });
  }

  async step(task: StemsTask, ctx: StemsContext): Promise<StepOutcome<StemTake[]>> {
    const p = task.params;
    const modelFor = (channel: CandidateChannel & { id?: string }) => stemsModelOn(channel, task);
    // a vendor's own clip goes to the channel that holds it, unless some configured model takes any stored clip
    const pinnedTo = p.channel_id !== null && p.upstream_clip_id !== null && !(await this.models.offered()).some((m) => m.spec.source === 'any') ? p.channel_id : null;
    return this.flow.step<StemsVendor, StemsStatus, StemTake[], undefined>(task, ctx, {
      operation: 'stems',
      noun: 'stems task',
      vendors: this.vendors,
      pinned: pinnedTo !== null,
      failsOver: true,
      fits: (channel) => modelFor(channel) !== undefined,
      costOf: (channel) => modelFor(channel)?.price?.per_song ?? null,
      taken: (channel) => {
        const model = modelFor(channel);
        return { model: model?.name ?? p.model ?? '', cost: model?.price?.per_song ?? null };
      },
      prepare: async () => ({ pinnedTo, data: undefined }),
      create: async (channel, vendor) => {
        const model = modelFor(channel);
        if (!model) throw new UpstreamRefused(`channel ${channel.name} has no stems model that makes what the task asks`, 0, 'request', true);
        const own = model.spec.source === 'own' && p.upstream_clip_id !== null ? { upstreamClipId: p.upstream_clip_id, upstreamTaskId: p.upstream_task_id } : undefined;
        const callbackUrl = vendor.query && vendor.callsBack !== false ? this.callbacks.urlFor(task.id) : undefined;
        const source = clipSource({ clips: this.clips, media: this.media, cpu: this.cpu, clipId: p.clip_id, baseUrl: task.baseUrl, file: (prefix, ext) => ctx.file(prefix, ext) });
        const answer = await vendor.create(channel, { request: { model: model.spec.id, split: p.split }, model: model.spec, taskId: task.id, callbackUrl, source, ...(own ? { own } : {}) });
        if ('made' in answer) {
          const stored = await this.stems(task, ctx, channel, answer.made);
          if (stored.kind !== 'done') throw new UnusableAnswer(stored.kind === 'failed' ? stored.reason : 'the upstream answered no stems');
          return { made: stored.result };
        }
        return { upstreamId: answer.upstreamId, callback: callbackUrl !== undefined };
      },
      finished: (status, channel) => this.stems(task, ctx, channel, (status as Extract<StemsStatus, { state: 'succeeded' }>).stems),
    });
  }

  /** Each stem's audio copied into our store and measured. */
  private async stems(task: StemsTask, ctx: StemsContext, channel: ChannelHandle, stems: StemAudio[]): Promise<StepOutcome<StemTake[]>> {
    if (stems.length === 0) return { kind: 'failed', reason: 'the upstream ended the task without stems' };
    const takes: StemTake[] = [];
    for (const [index, stem] of stems.entries()) {
      if (!stem.audioUrl && !stem.audio) return { kind: 'failed', reason: `the upstream's stem ${stem.name} has no audio` };
      const audio = new MediaFile(ctx.file(`stem${index}`, stem.audio?.format ?? 'audio'));
      if (stem.audio) await writeFile(audio.path, stem.audio.bytes);
      else
        try {
          await this.client.downloadToFile(stem.audioUrl!, MAX_STEM_BYTES, audio.path);
        } catch (err) {
          if (err instanceof UpstreamRefused) return await this.router.gatewayFailure(task.id, 'stems', `could not download the upstream's stem ${stem.name}: ${err.message}`, channel);
          throw err;
        }
      const sniff = await sniffAudioFile(audio.path);
      if (!sniff.ok) return { kind: 'failed', reason: `the upstream's stem ${stem.name} ${sniff.reason}` };
      let durationS: number;
      try {
        durationS = (await withPinnedAudio(audio.path, (pinned) => this.cpu.run(() => measureAudio(audio.path, pinned, { maxS: MAX_CLIP_S })))).durationS;
      } catch (err) {
        if (!(err instanceof AudioUnreadable)) throw err;
        this.logger.warn({ msg: "an upstream's stem could not be decoded", task_id: task.id, reason: err.reason, ffmpeg: err.detail });
        return { kind: 'failed', reason: `the upstream's stem ${stem.name} ${err.reason}` };
      }
      takes.push({ name: stem.name, audio, format: sniff.format, durationS });
    }
    return { kind: 'done', result: takes };
  }
}

/** What the task asks of a model on a channel: its clip is the vendor's own only on the channel that holds it. */
export function stemsAskOn(task: StemsTask, channelId: string | undefined): StemsAsk {
  const p = task.params;
  return { ...(p.model !== null ? { model: p.model } : {}), split: p.split, clip: p.upstream_clip_id !== null && p.channel_id !== null && channelId === p.channel_id ? 'own' : 'stored' };
}

/** The model a channel splits the clip with (the one named, or its first that makes the split and takes the clip); undefined: none. */
function stemsModelOn(channel: CandidateChannel & { id?: string }, task: StemsTask): ServedOf<StemsModelSpec> | undefined {
  const ask = stemsAskOn(task, channel.id);
  return servedModels<StemsModelSpec>(channel, 'stems').find((m) => (ask.model === undefined || m.name === ask.model) && unmetStemsFields(m.spec, ask).length === 0);
}
