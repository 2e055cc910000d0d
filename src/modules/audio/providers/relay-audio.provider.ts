import { writeFile } from 'node:fs/promises';
import { Inject, Injectable, Logger } from '@nestjs/common';
import type { ChannelPoll, StepOutcome, UpstreamWatcher } from '../../../common/tasks/task-kind.js';
import { AppConfig } from '../../../infra/config/app-config.js';
import { OutboundError, SafeFetchService } from '../../../infra/outbound/safe-fetch.service.js';
import { MediaFile } from '../../../infra/storage/storage.js';
import { RelayFlow } from '../../channels/relay-flow.js';
import type { AudioUploadStatus, AudioVendor } from '../../../vendors/contracts/audio-vendor.js';
import { CallerUrls } from '../../samples/caller-urls.service.js';
import { SamplesService } from '../../samples/samples.service.js';
import type { AudioTask } from '../audio-task.js';
import { checkedFacts } from '../audio-check.js';
import { type AudioContext, type AudioFacts, type AudioProvider } from './audio-provider.js';
import { CpuSlots } from '../../../infra/process/cpu-slots.js';

/** The audio vendors' adapters by channel protocol (`src/vendors/audio-vendors.ts`; a gateway speaks the aggregator's). */
export const AUDIO_VENDOR_ADAPTERS = Symbol('AUDIO_VENDOR_ADAPTERS');

/**
 * Relays uploads to the vendor behind the upload's channel, on the one relay path (RelayFlow: channel,
 * create once, watch): the vendor is handed the URL and asked about the upload until it is ready. The clip
 * then lives on that channel's account: a music continuation of it goes to the same channel. The gateway
 * keeps a checked copy of its own. RELAY_AUDIO_URL is one channel speaking the door's own interface.
 */
@Injectable()
export class RelayAudioProvider implements AudioProvider, UpstreamWatcher {
  private readonly logger = new Logger(RelayAudioProvider.name);
  readonly watcher: UpstreamWatcher = this;

  constructor(
    private readonly config: AppConfig,
    private readonly fetcher: SafeFetchService,
    private readonly flow: RelayFlow,
    private readonly callerUrls: CallerUrls,
    private readonly cpu: CpuSlots,
    private readonly samples: SamplesService,
    @Inject(AUDIO_VENDOR_ADAPTERS) private readonly vendors: Record<string, AudioVendor>,
  ) {}

  /** The uploads a channel holds are asked about one by one. */
  channelPoll(channelId: string | null): Promise<ChannelPoll | null> {
    return this.flow.channelPoll(channelId, { operation: 'audio', vendors: this.vendors });
  }

  step(upload: AudioTask, ctx: AudioContext): Promise<StepOutcome<AudioFacts>> {
    return this.flow.step<AudioVendor, AudioUploadStatus, AudioFacts, undefined>(upload, ctx, {
      operation: 'audio',
      noun: 'upload',
      vendors: this.vendors,
      prepare: async () => {
        // the upstream fetches the URL from its network, which may be the gateway's own
        const handOff = await this.callerUrls.handOffRefusal('url', upload.params.url, upload.baseUrl);
        return handOff ? { kind: 'failed', reason: handOff } : { pinnedTo: null, data: undefined };
      },
      create: async (channel, vendor) => ({ upstreamId: await vendor.create(channel, upload.params.url) }),
      failure: (status) => `the upstream could not use the file: ${status.reason}`,
      finished: async (status) => {
        const { format, durationS, sizeBytes, sha256 } = (status as Extract<AudioUploadStatus, { state: 'ready' }>).facts;
        const kept = await this.keepClip(upload, ctx);
        if (kept && !kept.ok) {
          this.logger.warn({ msg: "the gateway's copy of a relayed upload was refused; the upload fails", upload_id: upload.id, reason: kept.reason, ...(kept.detail ? { ffmpeg: kept.detail } : {}) });
          return { kind: 'failed', reason: `the file at url ${kept.reason}` };
        }
        return { kind: 'done', result: kept ? kept.facts : { format, duration: durationS, sizeBytes, sha256 } };
      },
    });
  }

  /**
   * Our own copy of the clip, so clip_url works and concat can join it as with the sandbox (the upstream
   * keeps its own): fetched from the URL the upload named, into a work file, within AUDIO_MAX_BYTES, and
   * checked as the sandbox checks its clips (checkAudio). A copy that passes gives the upload its facts (the
   * file the gateway serves and joins is the one described); one that fails the check fails the upload,
   * whatever the upstream thought of the file (it may have been served other bytes). Fetching is best
   * effort: the URL may have expired, or be one only the upstream may reach; then no copy is kept
   * (undefined), clip_url stays null and the upstream's facts stand.
   */
  private async keepClip(upload: AudioTask, ctx: AudioContext): Promise<Awaited<ReturnType<typeof checkedFacts>> | undefined> {
    const clip = new MediaFile(ctx.file('clip', 'audio'));
    let size: number;
    try {
      // the service's own sample is read from here, as the sandbox reads it (its URL is the gateway's own address)
      const sample = this.samples.resolve(upload.params.url, upload.baseUrl);
      if (sample) await writeFile(clip.path, sample);
      size = sample?.length ?? (await this.fetcher.fetchToFile('caller', upload.params.url, this.config.audioMaxBytes, clip.path));
    } catch (err) {
      if (!(err instanceof OutboundError)) throw err;
      this.logger.warn({ msg: 'could not keep a copy of the relayed clip; clip_url stays null', upload_id: upload.id, reason: err.message });
      return undefined;
    }
    // decoding is a core's work: relayed steps run RELAY_CONCURRENCY at once, their CPU-heavy parts WORKER_CONCURRENCY
    return this.cpu.run(() => checkedFacts(clip, size, this.config.kinds.audio.options.maxDurationS));
  }
}
