import { writeFile } from 'node:fs/promises';
import { Injectable, Logger } from '@nestjs/common';
import type { ChannelPoll, StepOutcome, UpstreamWatcher, WatchedTask, WatchNews } from '../../../common/tasks/task-kind.js';
import { AppConfig } from '../../../infra/config/app-config.js';
import { OutboundError, SafeFetchService } from '../../../infra/outbound/safe-fetch.service.js';
import { pollDelaySeconds, submitOnce, UpstreamBusy, UpstreamClient, UpstreamRefused, UpstreamUnavailable } from '../../../infra/relay/upstream-client.js';
import { MediaFile } from '../../../infra/storage/storage.js';
import { type ChannelHandle, ChannelRouter } from '../../channels/channel-router.js';
import { checkAggregatorAnswer } from '../../../vendors/suno-aggregator/suno-aggregator.vendor.js';
import { CallerUrls } from '../../samples/caller-urls.service.js';
import { SamplesService } from '../../samples/samples.service.js';
import type { AudioTask } from '../audio-task.js';
import { checkedFacts } from '../audio-check.js';
import { type AudioContext, type AudioFacts, type AudioProvider } from './audio-provider.js';
import { CpuSlots } from '../../../infra/process/cpu-slots.js';

interface UpstreamUpload {
  status?: unknown;
  format?: unknown;
  duration?: unknown;
  size_bytes?: unknown;
  sha256?: unknown;
  error?: unknown;
}

/**
 * Forwards uploads to a Suno-style aggregator speaking this same interface, through the upload's channel
 * (RELAY_AUDIO_URL is one): POST {base}/uploads/audio-url answers `{ code: "success", data: <id> }`, and
 * GET {base}/uploads/{id} reports its status. The clip then lives on that channel's account: a music
 * continuation of it goes to the same channel.
 */
/** How often The aggregator may be asked about an upload: it publishes no limit, so the schedule (RELAY_POLL_MS and the age back-off) alone decides. */
const MIN_POLL_S = 0;

@Injectable()
export class RelayAudioProvider implements AudioProvider, UpstreamWatcher {
  private readonly logger = new Logger(RelayAudioProvider.name);
  readonly watcher: UpstreamWatcher = this;

  constructor(
    private readonly client: UpstreamClient,
    private readonly config: AppConfig,
    private readonly fetcher: SafeFetchService,
    private readonly router: ChannelRouter,
    private readonly callerUrls: CallerUrls,
    private readonly cpu: CpuSlots,
    private readonly samples: SamplesService,
  ) {}

  /** The uploads a channel holds are asked about one by one. */
  async channelPoll(channelId: string | null): Promise<ChannelPoll | null> {
    const channel = await this.router.heldBy({ channelId }, 'audio');
    if (!channel) return null;
    return {
      name: channel.name,
      batchSize: 1,
      poll: async ([task]: WatchedTask[]) => {
        const answer = await this.router.onHeld(channel, task.id, 'audio', () =>
          this.client.call('GET', `${channel.baseUrl}/uploads/${encodeURIComponent(task.upstreamId)}`, { auth: channel.auth, idempotent: true, once: true }),
        );
        const status = ((answer.json.data ?? {}) as UpstreamUpload).status;
        return new Map<string, WatchNews>([[task.id, status === 'ready' || status === 'failed' ? 'changed' : 'working']]);
      },
    };
  }

  async step(upload: AudioTask, ctx: AudioContext): Promise<StepOutcome<AudioFacts>> {
    try {
      if (!upload.upstreamId) {
        if (upload.submitStartedAt) {
          return await this.router.gatewayFailure(upload.id, 'audio', `the upstream never answered the upload request (channel ${upload.channelId ?? 'RELAY_AUDIO_URL'}); it was not sent again, to avoid a duplicate`);
        }
        // the upstream fetches the URL from its network, which may be the gateway's own
        const handOff = await this.callerUrls.handOffRefusal('url', upload.params.url);
        if (handOff) return { kind: 'failed', reason: handOff };
        return await this.router.submitNew({ operation: 'audio', task: upload, marks: ctx, send: (channel) => this.submit(channel, upload, ctx) });
      }
      const channel = await this.router.heldBy(upload, 'audio');
      if (!channel) return await this.router.gatewayFailure(upload.id, 'audio', `the channel that holds the upload (${upload.channelId ?? 'RELAY_AUDIO_URL'}) no longer exists`);
      const upstreamId = upload.upstreamId;
      const answer = await this.router.onHeld(channel, upload.id, 'audio', () =>
        this.client.call('GET', `${channel.baseUrl}/uploads/${encodeURIComponent(upstreamId)}`, { auth: channel.auth, idempotent: true }),
      );
      const data = (answer.json.data ?? {}) as UpstreamUpload;
      switch (data.status) {
        case 'ready': {
          const upstream: AudioFacts = { format: String(data.format ?? 'audio'), duration: Number(data.duration ?? 0), sizeBytes: Number(data.size_bytes ?? 0), sha256: String(data.sha256 ?? '') };
          const kept = await this.keepClip(upload, ctx);
          if (kept && !kept.ok) {
            this.logger.warn({ msg: "the gateway's copy of a relayed upload was refused; the upload fails", upload_id: upload.id, reason: kept.reason, ...(kept.detail ? { ffmpeg: kept.detail } : {}) });
            return { kind: 'failed', reason: `the file at url ${kept.reason}` };
          }
          return { kind: 'done', result: kept ? kept.facts : upstream };
        }
        case 'failed':
          return { kind: 'failed', reason: `the upstream could not use the file: ${typeof data.error === 'string' && data.error ? data.error : 'no reason given'}` };
        default: // the poller watches it
          return { kind: 'watch', minPollS: MIN_POLL_S };
      }
    } catch (err) {
      if (err instanceof UpstreamRefused) return await this.router.refusal(upload.id, 'audio', err, 'the upstream refused the upload');
      if (err instanceof UpstreamBusy) return { kind: 'busy', seconds: pollDelaySeconds(upload.createdAt, this.config.relay.pollMs) };
      if (err instanceof UpstreamUnavailable) return { kind: 'wait', seconds: pollDelaySeconds(upload.createdAt, this.config.relay.pollMs) };
      throw err;
    }
  }

  private async submit(channel: ChannelHandle, upload: AudioTask, ctx: AudioContext): Promise<StepOutcome<AudioFacts>> {
    const created = await submitOnce(ctx, async () => {
      const answer = await this.client.call('POST', `${channel.baseUrl}/uploads/audio-url`, { body: { url: upload.params.url }, auth: channel.auth, failFast: true });
      checkAggregatorAnswer(answer.json);
      return answer;
    });
    if (created.json.code !== 'success' || typeof created.json.data !== 'string') {
      return { kind: 'failed', reason: `the upstream refused the upload: ${String(created.json.message || created.json.code || 'no task id returned')}` };
    }
    await ctx.saveUpstreamId(created.json.data);
    return { kind: 'watch', minPollS: MIN_POLL_S };
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
