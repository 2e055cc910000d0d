import { Inject, Injectable } from '@nestjs/common';
import type { ChannelPoll, StepOutcome, UpstreamWatcher, WatchedTask, WatchNews } from '../../../common/tasks/task-kind.js';
import { AppConfig } from '../../../infra/config/app-config.js';
import { boundedMetadata } from '../../../infra/images/image-bounds.js';
import { pollDelaySeconds, submitOnce, UpstreamBusy, UpstreamClient, UpstreamRefused, UpstreamUnavailable } from '../../../infra/relay/upstream-client.js';
import { MediaFile } from '../../../infra/storage/storage.js';
import { type ServedModel, servedVideoModels } from '../../channels/channel-models.js';
import { type CandidateChannel, type ChannelHandle, ChannelRouter, type Created, stalledOn, stallReason } from '../../channels/channel-router.js';
import { UpstreamCallbackUrls } from '../../channels/upstream-callback-urls.js';
import { CallerUrls } from '../../samples/caller-urls.service.js';
import { unmetFields, type VideoRequest } from '../../../vendors/contracts/video-request.js';
import { UnusableAnswer } from '../../../vendors/contracts/vendor.js';
import type { VendorStatus, VideoVendor } from '../../../vendors/contracts/video-vendor.js';
import { toVideoRequest, type VideoTask } from '../video-task.js';
import { firstFrame } from './clip-renderer.js';
import type { VideoContext, VideoProvider, VideoResult } from './video-provider.js';

const VIDEO_MAX_BYTES = 512 * 1024 * 1024;
const IMAGE_MAX_BYTES = 32 * 1024 * 1024;

/** The video vendors' adapters by channel protocol (`src/vendors/video-vendors.ts`; a gateway speaks Luma's). */
export const VIDEO_VENDOR_ADAPTERS = Symbol('VIDEO_VENDOR_ADAPTERS');

/**
 * Relays generations to the vendors behind the video channels: a new generation goes to a channel with a
 * model that makes exactly what it asks (`unmetFields` empty: no field dropped), whose vendor adapter maps
 * the normalized request into its own; its later steps ask the channel that holds it. A create goes on to
 * the next channel only when one provably did not take it (busy, refused connection, refused credentials or
 * credit); a create whose answer never arrived fails the generation rather than risk a second (billed) one.
 * A generation naming an earlier one as a keyframe goes to that one's channel. The result is downloaded
 * into our storage at once (Runway's links expire within a day or two).
 *
 * Failover after acceptance: an upstream task that fails for a reason of the vendor's own (not a content
 * refusal, unless RELAY_FAILOVER_ON_CONTENT), or is still working past its channel's `stall_after_s`, is
 * given up (cancelled where the vendor can) and the generation is sent to a capable channel it has not had,
 * up to RELAY_UPSTREAM_ATTEMPTS upstream tasks; the caller sees one generation, charged once.
 */
@Injectable()
export class RelayVideoProvider implements VideoProvider, UpstreamWatcher {
  readonly watcher: UpstreamWatcher = this;

  constructor(
    private readonly client: UpstreamClient,
    private readonly config: AppConfig,
    private readonly router: ChannelRouter,
    private readonly callbacks: UpstreamCallbackUrls,
    @Inject(VIDEO_VENDOR_ADAPTERS) private readonly vendors: Record<string, VideoVendor>,
    private readonly callerUrls: CallerUrls,
  ) {}

  /** The generations a channel holds are asked about one by one (no video vendor has a query for several). */
  async channelPoll(channelId: string | null): Promise<ChannelPoll | null> {
    const channel = await this.router.heldBy({ channelId }, 'video');
    if (!channel) return null;
    const vendor = this.vendorOf(channel);
    return {
      name: channel.name,
      batchSize: 1,
      poll: async ([task]: WatchedTask[]) => {
        // stalled past the channel's limit: its step gives it up
        if (stalledOn(channel, task.upstreamSince)) return new Map<string, WatchNews>([[task.id, 'changed']]);
        const status = await this.router.onHeld(channel, task.id, 'video', () => vendor.query(channel, task.upstreamId, true));
        return new Map<string, WatchNews>([[task.id, status.state === 'working' ? 'working' : 'changed']]);
      },
    };
  }

  async step(generation: VideoTask, ctx: VideoContext): Promise<StepOutcome<VideoResult>> {
    try {
      const uploads = generation.params.keyframes.filter((k) => k.upload);
      const uploadUrls = Object.fromEntries(await Promise.all(uploads.map(async (k) => [k.position, await ctx.uploadUrl(k.position)] as const)));
      const request = toVideoRequest(generation.params, uploadUrls);
      if (generation.upstreamId) {
        const channel = await this.router.heldBy(generation, 'video');
        if (!channel) return await this.router.gatewayFailure(generation.id, 'video', `the channel that holds the generation (${generation.channelId ?? 'RELAY_VIDEO_URL'}) no longer exists`);
        const upstreamId = generation.upstreamId;
        const vendor = this.vendorOf(channel);
        const status = await this.router.onHeld(channel, generation.id, 'video', () => vendor.query(channel, upstreamId, false));
        const stalled = status.state === 'working' && stalledOn(channel, generation.upstreamSince);
        // a follow-up of a generation (a keyframe naming one) can be made only where that one is: no failover
        const pinned = request.firstFrame?.type === 'generation' || request.lastFrame?.type === 'generation';
        const failsOver = status.state === 'failed' && !pinned && (!status.content || this.config.relay.failoverOnContent);
        if (!((stalled && !pinned) || failsOver) || !(await this.router.mayFailOver('video', generation.id, (c) => this.modelFor(c, request) !== undefined))) {
          return await this.interpret(vendor, status, ctx);
        }
        const reason = stalled ? stallReason(channel) : `the upstream failed the generation: ${status.state === 'failed' ? status.reason : ''}`;
        const cancel = stalled && vendor.cancel ? () => vendor.cancel!(channel, upstreamId) : undefined;
        await this.router.abandon({ operation: 'video', taskId: generation.id, channel, upstreamId, marks: ctx, reason, cancel });
        // on to a channel it has not had (ChannelRouter excludes those), in this same step
      } else if (generation.submitStartedAt) {
        const settled = await this.unansweredCreate(generation, request, ctx);
        if (settled) return settled;
        // not made there, or given up there: on to a channel (one that has not had it), in this same step
      }
      // a keyframe's URL is fetched by the upstream, from its network (which may be the gateway's own)
      for (const frame of generation.params.keyframes) {
        const handOff = frame.type === 'image' ? await this.callerUrls.handOffRefusal(`keyframes.${frame.position}.url`, frame.url) : null;
        if (handOff) return { kind: 'failed', reason: handOff };
      }
      // A keyframe naming an earlier generation names it by the upstream's id: only the account that made it knows it.
      const generationIds: { first?: string; last?: string } = {};
      let pinnedTo: string | null = null;
      for (const [position, frame] of [['first', request.firstFrame], ['last', request.lastFrame]] as const) {
        if (frame?.type !== 'generation') continue;
        const named = await ctx.upstreamOf(frame.generationId);
        const field = `keyframes.${position === 'first' ? 'frame0' : 'frame1'}`;
        if (!named) return { kind: 'failed', reason: `${field} names generation ${frame.generationId}, which the upstream does not know` };
        if (pinnedTo && named.channelId && named.channelId !== pinnedTo) return { kind: 'failed', reason: 'the keyframes name generations made on different upstream channels' };
        pinnedTo = named.channelId ?? pinnedTo;
        generationIds[position] = named.upstreamId;
      }
      return await this.router.submitNew({
        operation: 'video',
        task: generation,
        marks: ctx,
        pinnedTo,
        fits: (channel) => this.modelFor(channel, request) !== undefined,
        costOf: (channel) => {
          const model = this.modelFor(channel, request);
          return model ? costOf(model, request) : null;
        },
        send: (channel) => this.submit(channel, generation, request, generationIds, ctx),
      });
    } catch (err) {
      if (err instanceof UnusableAnswer) return { kind: 'failed', reason: err.message };
      if (err instanceof UpstreamRefused) return await this.router.refusal(generation.id, 'video', err, 'the upstream refused the generation');
      if (err instanceof UpstreamBusy) return { kind: 'busy', seconds: pollDelaySeconds(generation.createdAt, this.config.relay.pollMs) };
      if (err instanceof UpstreamUnavailable) return { kind: 'wait', seconds: pollDelaySeconds(generation.createdAt, this.config.relay.pollMs) };
      throw err;
    }
  }

  /**
   * A create went out and its answer never came back (a timeout, a reset, a worker killed while it was in
   * flight). A vendor that keeps our id (Kling) is asked for the task by it: found, it is adopted (its
   * accepted attempt recorded now); provably not made, the create may be sent again (Kling refuses a second
   * with the same id, so it can never be made twice). A vendor that cannot be asked is never sent it again:
   * the task goes on to another channel that has not had it when it may fail over (a possibly billed orphan
   * upstream, the tenant charged once), and fails otherwise. Answers the step's outcome, or null to go on
   * to a create.
   */
  private async unansweredCreate(generation: VideoTask, request: VideoRequest, ctx: VideoContext): Promise<StepOutcome<VideoResult> | null> {
    const channel = await this.router.heldBy(generation, 'video');
    const vendor = channel ? this.vendors[channel.protocol] : undefined;
    if (channel && vendor?.findByOwnId) {
      const found = await this.router.onHeld(channel, generation.id, 'video', () => vendor.findByOwnId!(channel, generation.id, request));
      if (!found) {
        await ctx.clearSubmitting();
        return null;
      }
      await ctx.saveUpstreamId(found.upstreamId, { callback: false });
      const model = this.modelFor(channel, request);
      await this.router.adopted(generation.id, 'video', channel, { model: model?.name ?? request.model ?? '', upstreamId: found.upstreamId, cost: model ? costOf(model, request) : null });
      return this.interpret(vendor, found.status, ctx);
    }
    const reason = `the upstream never answered the create request (channel ${generation.channelId ?? 'RELAY_VIDEO_URL'}); it was not sent again, to avoid a second (billed) generation`;
    if (!channel || !(await this.router.mayFailOver('video', generation.id, (c) => this.modelFor(c, request) !== undefined, channel))) {
      return this.router.gatewayFailure(generation.id, 'video', reason);
    }
    await this.router.abandon({ operation: 'video', taskId: generation.id, channel, upstreamId: null, marks: ctx, reason });
    return null;
  }

  /** The channel's first model (in its list's order) that makes exactly what the request asks. */
  private modelFor(channel: CandidateChannel, request: VideoRequest): ServedModel | undefined {
    return servedVideoModels(channel).find((m) => (request.model === undefined || m.name === request.model) && unmetFields(m.spec, request).length === 0);
  }

  private vendorOf(channel: ChannelHandle): VideoVendor {
    const vendor = this.vendors[channel.protocol];
    if (!vendor) throw new UpstreamRefused(`channel ${channel.name} speaks ${channel.protocol}, which makes no video`, 0, 'request', true);
    return vendor;
  }

  private async submit(channel: ChannelHandle, generation: VideoTask, request: VideoRequest, generationIds: { first?: string; last?: string }, ctx: VideoContext): Promise<Created<VideoResult>> {
    const vendor = this.vendorOf(channel);
    const model = this.modelFor(channel, request);
    if (!model) throw new UpstreamRefused(`channel ${channel.name} has no model that makes what the generation asks`, 0, 'request', true);
    const callbackUrl = this.callbacks.urlFor(generation.id);
    const created = await submitOnce(ctx, () =>
      vendor.create(channel, {
        model: model.spec,
        request,
        generationIds,
        callbackUrl,
        taskId: generation.id,
        frameImage: (position) => ctx.keyframeImage(position === 'first' ? 'frame0' : 'frame1'),
      }),
    );
    await ctx.saveUpstreamId(created.upstreamId, { callback: callbackUrl !== undefined });
    const taken = { model: model.name, upstreamId: created.upstreamId, cost: costOf(model, request) };
    return { ...(await this.interpret(vendor, created.status, ctx)), taken };
  }

  private async interpret(vendor: VideoVendor, status: VendorStatus, ctx: VideoContext): Promise<StepOutcome<VideoResult>> {
    if (status.state === 'working') return { kind: 'watch', minPollS: vendor.minPollS };
    if (status.state === 'failed') return { kind: 'failed', reason: `the upstream failed the generation: ${status.reason}` };
    const video = new MediaFile(ctx.file('video', 'mp4'));
    await this.client.downloadToFile(status.videoUrl, VIDEO_MAX_BYTES, video.path);
    // a vendor without a still (Kling, Runway): the video's first frame
    const thumbnail = status.thumbnailUrl ? await this.client.download(status.thumbnailUrl, IMAGE_MAX_BYTES) : await firstFrame(video.path).catch(() => undefined);
    // an upstream's still, kept and served as it is: its header read under the pixel limit (unread: stored without a size)
    const meta = thumbnail ? await boundedMetadata(thumbnail, this.config.images).catch(() => null) : null;
    return {
      kind: 'done',
      result: {
        video,
        thumbnail: thumbnail ?? Buffer.alloc(0),
        thumbnailType: meta?.format === 'png' ? 'image/png' : 'image/jpeg',
        width: meta?.width ?? 0,
        height: meta?.height ?? 0,
      },
    };
  }
}

/**
 * What a generation costs the company on a model a channel serves: its price per second at the asked
 * resolution (or `*`), times the asked duration (the model's first resolution and duration when not asked);
 * null when the channel set no price for it.
 */
export function costOf(model: ServedModel, request: VideoRequest): number | null {
  const perSecond = model.price?.per_second;
  if (!perSecond) return null;
  const price = perSecond[request.resolution ?? model.spec.resolutions[0]] ?? perSecond['*'];
  if (price === undefined) return null;
  return Math.round(price * (request.durationS ?? model.spec.durations[0]) * 1e6) / 1e6;
}
