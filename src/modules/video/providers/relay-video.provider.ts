import { Inject, Injectable } from '@nestjs/common';
import type { ChannelPoll, StepOutcome, UpstreamWatcher } from '../../../common/tasks/task-kind.js';
import { AppConfig } from '../../../infra/config/app-config.js';
import { boundedMetadata } from '../../../infra/images/image-bounds.js';
import { UpstreamClient, UpstreamRefused } from '../../../infra/relay/upstream-client.js';
import { MediaFile } from '../../../infra/storage/storage.js';
import { type ServedModel, servedVideoModels } from '../../channels/channel-models.js';
import type { CandidateChannel } from '../../channels/channel-router.js';
import { RelayFlow, type RelayOperation, type RelayOrder } from '../../channels/relay-flow.js';
import { UpstreamCallbackUrls } from '../../channels/upstream-callback-urls.js';
import { CallerUrls } from '../../samples/caller-urls.service.js';
import { frameFitFor, madeDurationS, madeResolution, unmetFields, type VideoRequest } from '../../../vendors/contracts/video-request.js';
import type { VendorStatus, VideoVendor } from '../../../vendors/contracts/video-vendor.js';
import type { VendorBilled } from '../../../vendors/contracts/vendor-billing.js';
import { fieldOf, inputImages, type VideoTask, videoRequestOf } from '../video-task.js';
import { firstFrame } from './clip-renderer.js';
import type { VideoContext, VideoProvider, VideoResult } from './video-provider.js';

const VIDEO_MAX_BYTES = 512 * 1024 * 1024;
const IMAGE_MAX_BYTES = 32 * 1024 * 1024;

/** The video vendors' adapters by channel protocol (`src/vendors/video-vendors.ts`; a gateway speaks Luma's). */
export const VIDEO_VENDOR_ADAPTERS = Symbol('VIDEO_VENDOR_ADAPTERS');

/**
 * Relays generations to the vendors behind the video channels, on the one relay path (RelayFlow: channel,
 * create once, watch, fail over): what is video's own is here. A generation goes to a channel with a model
 * that makes exactly what it asks (`unmetFields` empty: no field dropped), priced per second; its vendor's
 * adapter maps the normalized request into its own. A generation naming an earlier one as a keyframe goes
 * to that one's channel and never fails over. An upstream generation that failed for a reason of the
 * vendor's own or stalled is given up (cancelled where the vendor can) for a capable channel it has not had.
 * The result is downloaded into our storage at once (Runway's links expire within a day or two).
 */
@Injectable()
export class RelayVideoProvider implements VideoProvider, UpstreamWatcher {
  readonly watcher: UpstreamWatcher = this;

  constructor(
    private readonly client: UpstreamClient,
    private readonly config: AppConfig,
    private readonly flow: RelayFlow,
    private readonly callbacks: UpstreamCallbackUrls,
    @Inject(VIDEO_VENDOR_ADAPTERS) private readonly vendors: Record<string, VideoVendor>,
    private readonly callerUrls: CallerUrls,
  ) {}

  /** The generations a channel holds are asked about one by one (no video vendor has a query for several). */
  channelPoll(channelId: string | null): Promise<ChannelPoll | null> {
    return this.flow.channelPoll(channelId, { operation: 'video', vendors: this.vendors, failsOver: true });
  }

  async step(generation: VideoTask, ctx: VideoContext): Promise<StepOutcome<VideoResult>> {
    const inputs = inputImages(generation.params);
    const uploaded = inputs.filter(({ image }) => image.type === 'image' && image.upload).map(({ role }) => role);
    const uploadUrls = Object.fromEntries(await Promise.all(uploaded.map(async (role) => [role, await ctx.uploadUrl(role)] as const)));
    // a sample of the service's that no upstream could be sent as a link is its own file too: inline where the vendor takes images so
    const samples = await Promise.all(inputs.map(async ({ role, image }) => (image.type === 'image' && image.url && (await this.callerUrls.unreachableSample(image.url, generation.baseUrl)) ? [[role, image.url] as const] : [])));
    const request = videoRequestOf(generation.params, { ...uploadUrls, ...Object.fromEntries(samples.flat()) });
    const modelFor = (channel: CandidateChannel) => this.modelFor(channel, request);
    // The first frame is fitted for the channel a create goes to, once per fit in this step (a busy channel's
    // fit serves the next with the same): it is stored as the task's one fitted frame (fit0), so frames for
    // every fit the candidates might need cannot be prepared before the channel is chosen.
    const fitted = new Map<string, ReturnType<VideoContext['fittedFrame']>>();
    const fittedOnce = (fit: 'crop' | 'pad', minSide?: number) => {
      const key = fitKey(fit, minSide);
      if (!fitted.has(key)) fitted.set(key, ctx.fittedFrame(fit, request.aspectRatio!, minSide));
      return fitted.get(key)!;
    };
    const op: RelayOperation<VideoVendor, VendorStatus, VideoResult, VideoOrder> = {
      operation: 'video',
      noun: 'generation',
      vendors: this.vendors,
      failsOver: true,
      // a follow-up of a generation (a keyframe naming one) can be made only where that one is
      pinned: request.firstFrame?.type === 'generation' || request.lastFrame?.type === 'generation',
      fits: (channel) => modelFor(channel) !== undefined,
      costOf: (channel) => {
        const model = modelFor(channel);
        return model ? costOf(model, request) : null;
      },
      taken: (channel) => {
        const model = modelFor(channel);
        return { model: model?.name ?? request.model ?? '', cost: model ? costOf(model, request) : null };
      },
      billedCost: (channel, billed) => {
        const model = modelFor(channel);
        return model ? billedCostOf(model, request, billed) : null;
      },
      prepare: () => this.prepare(generation, request, ctx),
      create: async (channel, vendor, order) => {
        const model = modelFor(channel);
        if (!model) throw new UpstreamRefused(`channel ${channel.name} has no model that makes what the generation asks`, 0, 'request', true);
        // only a vendor that calls back is asked to: the others' tasks are polled on the usual schedule
        const callbackUrl = vendor.callsBack ? this.callbacks.urlFor(generation.id) : undefined;
        // a vendor whose video takes its frame's shape is sent the first frame fitted to the asked ratio
        const fit = frameFitFor(model.spec, request);
        const fitted = fit ? await fittedOnce(fit, model.spec.frameMinSide) : undefined;
        const sent: VideoRequest = fitted ? { ...request, firstFrame: { type: 'image', url: fitted.url, hosted: true } } : request;
        const frameImage = async (position: 'first' | 'last') => (position === 'first' && fitted ? fitted.bytes : ctx.keyframeImage(position === 'first' ? 'frame0' : 'frame1'));
        const referenceImage = (index: number) => ctx.referenceImage(index);
        const created = await vendor.create(channel, { model: model.spec, request: sent, generationIds: order.generationIds, callbackUrl, taskId: generation.id, frameImage, referenceImage });
        return { ...created, callback: callbackUrl !== undefined };
      },
      findByOwnId: (channel, vendor) => vendor.findByOwnId?.(channel, generation.id, request) ?? null,
      finished: (status, channel) => this.stored(status as Extract<VendorStatus, { state: 'succeeded' }>, ctx, modelFor(channel)?.name),
    };
    return this.flow.step(generation, ctx, op);
  }

  /**
   * What a create of this generation needs, decided before a channel is chosen (RelayFlow reads it once, only
   * in a step that chooses one): the caller's URLs the upstream would fetch checked, the generations its
   * keyframes name found (their upstream ids, and the channel that holds them: the generation is pinned
   * there).
   */
  private async prepare(generation: VideoTask, request: VideoRequest, ctx: VideoContext): Promise<RelayOrder<VideoOrder> | StepOutcome<VideoResult>> {
    // a keyframe's URL is fetched by the upstream, from its network (which may be the gateway's own)
    for (const { role, image } of inputImages(generation.params)) {
      const handOff = image.type === 'image' ? await this.callerUrls.handOffRefusal(ctx.fieldName(fieldOf(role)), image.url, generation.baseUrl) : null;
      if (handOff) return { kind: 'failed', reason: handOff };
    }
    // A keyframe naming an earlier generation names it by the upstream's id: only the account that made it knows it.
    const generationIds: VideoOrder['generationIds'] = {};
    let pinnedTo: string | null = null;
    for (const [position, frame] of [['first', request.firstFrame], ['last', request.lastFrame]] as const) {
      if (frame?.type !== 'generation') continue;
      const named = await ctx.upstreamOf(frame.generationId);
      const field = ctx.fieldName(position === 'first' ? 'firstFrame' : 'lastFrame');
      if (!named) return { kind: 'failed', reason: `${field} names generation ${frame.generationId}, which the upstream does not know` };
      if (pinnedTo && named.channelId && named.channelId !== pinnedTo) return { kind: 'failed', reason: 'the keyframes name generations made on different upstream channels' };
      pinnedTo = named.channelId ?? pinnedTo;
      generationIds[position] = named.upstreamId;
    }
    return { pinnedTo, data: { generationIds } };
  }

  /** The channel's first model (in its list's order) that makes exactly what the request asks. */
  private modelFor(channel: CandidateChannel, request: VideoRequest): ServedModel | undefined {
    return servedVideoModels(channel).find((m) => (request.model === undefined || m.name === request.model) && unmetFields(m.spec, request).length === 0);
  }

  /** The vendor's video (and still) copied into our store: its links expire. */
  private async stored(status: Extract<VendorStatus, { state: 'succeeded' }>, ctx: VideoContext, model: string | undefined): Promise<StepOutcome<VideoResult>> {
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
        ...(model ? { model } : {}),
      },
    };
  }
}

/** What a generation's creates need, prepared before a channel is chosen (RelayOperation.prepare). */
interface VideoOrder {
  /** The upstream ids of generations its keyframes name. */
  generationIds: { first?: string; last?: string };
}

function fitKey(fit: 'crop' | 'pad', minSide: number | undefined): string {
  return `${fit}/${minSide ?? 0}`;
}

/**
 * What a generation costs the company on a model a channel serves: its price per second at the resolution it
 * makes (or `*`), times the duration it makes (the asked ones, else the model's defaults: madeDurationS,
 * madeResolution); null when the channel set no price for it.
 */
export function costOf(model: ServedModel, request: VideoRequest): number | null {
  const price = perSecondPrice(model, request);
  return price === undefined ? null : Math.round(price * madeDurationS(model.spec, request) * 1e6) / 1e6;
}

/** The model's price of one second at the resolution it makes, or `*`; undefined: unpriced. */
function perSecondPrice(model: ServedModel, request: VideoRequest): number | undefined {
  const perSecond = model.price?.per_second;
  return perSecond ? (perSecond[madeResolution(model.spec, request)] ?? perSecond['*']) : undefined;
}

/**
 * What the vendor's billed figure for a generation costs the company on a model a channel serves: the amount
 * times the model's price of one such unit (`per_billed_unit`); billed seconds without one, at the model's
 * price per second at the asked resolution (the price `costOf` applied to the asked duration: a vendor that
 * billed 10 s where we priced 4 s shows at once); null when the channel set no price for that unit.
 */
export function billedCostOf(model: ServedModel, request: VideoRequest, billed: VendorBilled): number | null {
  const price = model.price?.per_billed_unit?.[billed.unit] ?? (billed.unit === 'seconds' ? perSecondPrice(model, request) : undefined);
  return price === undefined ? null : Math.round(price * billed.amount * 1e6) / 1e6;
}
