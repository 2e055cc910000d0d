import { readFile } from 'node:fs/promises';
import { Inject, Injectable } from '@nestjs/common';
import type { ChannelPoll, StepOutcome, UpstreamWatcher } from '../../../common/tasks/task-kind.js';
import { AppConfig } from '../../../infra/config/app-config.js';
import { boundedMetadata, ImageRejected } from '../../../infra/images/image-bounds.js';
import { UpstreamClient } from '../../../infra/relay/upstream-client.js';
import type { ExpandImageSize, ExpandInput, ExpandStatus, ExpandVendor } from '../../../vendors/contracts/expand-vendor.js';
import { servedExpandModel } from '../../channels/channel-models.js';
import { type CandidateChannel, type ChannelHandle, ChannelRouter } from '../../channels/channel-router.js';
import { RelayFlow, type RelayCreated, type RelayOperation } from '../../channels/relay-flow.js';
import { UpstreamCallbackUrls } from '../../channels/upstream-callback-urls.js';
import { CallerUrls } from '../../samples/caller-urls.service.js';
import type { ExpandTask } from '../expand-task.js';
import { sniffFormat } from '../image-rules.js';
import type { ExpandContext, ExpandProvider, ExpandResultImage } from './expand-provider.js';

const RESULT_MAX_BYTES = 64 * 1024 * 1024;

/** The expand vendors' adapters by channel protocol (`src/vendors/expand-vendors.ts`; a gateway speaks Kling's). */
export const EXPAND_VENDOR_ADAPTERS = Symbol('EXPAND_VENDOR_ADAPTERS');

/**
 * Relays expand tasks to the vendors behind the expand channels, on the one relay path (RelayFlow: channel,
 * create once, watch, fail over): what is expand's own is here. A channel takes the task only when its
 * vendor can make it exactly as asked (the adapter's `unmet`); a URL input is read first when a configured
 * channel's vendor needs its size. A vendor that answers later is watched (polled, or called back); one that
 * answers with the images (Stability's outpaint) is done in the step that sends it. Among channels of one
 * priority, EXPAND_ROUTING=cost takes the cheapest (the channel's price per image, times n). RELAY_EXPAND_URL
 * is one channel speaking the door's own interface.
 */
@Injectable()
export class RelayExpandProvider implements ExpandProvider, UpstreamWatcher {
  readonly watcher: UpstreamWatcher = this;

  constructor(
    private readonly client: UpstreamClient,
    private readonly config: AppConfig,
    private readonly flow: RelayFlow,
    private readonly router: ChannelRouter,
    private readonly callbacks: UpstreamCallbackUrls,
    private readonly callerUrls: CallerUrls,
    @Inject(EXPAND_VENDOR_ADAPTERS) private readonly vendors: Record<string, ExpandVendor>,
  ) {}

  /** The tasks a channel holds are asked about one by one. */
  channelPoll(channelId: string | null): Promise<ChannelPoll | null> {
    return this.flow.channelPoll(channelId, { operation: 'expand', vendors: this.vendors, failsOver: true });
  }

  async step(task: ExpandTask, ctx: ExpandContext): Promise<StepOutcome<ExpandResultImage[]>> {
    const op: RelayOperation<ExpandVendor, ExpandStatus, ExpandResultImage[], ExpandImageSize | null> = {
      operation: 'expand',
      noun: 'task',
      vendors: this.vendors,
      failsOver: true,
      // the input's size: known from acceptance for Base64; a URL is read only when a channel is to be chosen
      // and a configured channel's vendor needs it to decide (RelayFlow prepares only then)
      prepare: async () => {
        // the upstream fetches the image URL from its network, which may be the gateway's own
        const handOff = await this.callerUrls.handOffRefusal('image', task.params.image_url, task.baseUrl);
        if (handOff) return { kind: 'failed', reason: handOff };
        return { pinnedTo: null, data: await this.inputSize(task, ctx) };
      },
      fits: (channel, size) => this.fits(channel, task, size),
      costOf: (channel) => costOf(channel, task),
      taken: (channel) => ({ model: servedExpandModel(channel).name, cost: costOf(channel, task) }),
      create: (channel, vendor) => this.create(channel, vendor, task, ctx),
      findByOwnId: (channel, vendor) => vendor.findByOwnId?.(channel, task.id) ?? null,
      finished: (status) => this.stored(status as Extract<ExpandStatus, { state: 'succeeded' }>, task),
    };
    return this.flow.step(task, ctx, op);
  }

  /** Whether a channel's vendor makes the expand exactly as asked. */
  private fits(channel: CandidateChannel, task: ExpandTask, size: ExpandImageSize | null): boolean {
    const vendor = this.vendors[channel.protocol];
    return !!vendor && (!vendor.unmet || vendor.unmet(task.params, size) === null);
  }

  /** The input's size: known from acceptance for Base64; a URL is read only when a configured channel's vendor needs it to decide. */
  private async inputSize(task: ExpandTask, ctx: ExpandContext): Promise<ExpandImageSize | null> {
    if (task.params.image_width && task.params.image_height) return { width: task.params.image_width, height: task.params.image_height };
    const configured = await this.router.configuredFor('expand');
    if (!configured.some((c) => this.vendors[c.protocol]?.unmet)) return null;
    return (await ctx.source()).facts;
  }

  private async create(channel: ChannelHandle, vendor: ExpandVendor, task: ExpandTask, ctx: ExpandContext): Promise<RelayCreated<ExpandStatus, ExpandResultImage[]>> {
    const callbackUrl = vendor.query ? this.callbacks.urlFor(task.id) : undefined;
    const image: ExpandInput = {
      url: task.params.image_url,
      bytes: async () => {
        if (!task.params.image_url) {
          const bytes = await ctx.input();
          const { width, height } = { width: task.params.image_width!, height: task.params.image_height! };
          return { bytes, format: sniffFormat(bytes) === 'png' ? 'png' : 'jpeg', width, height };
        }
        const source = await ctx.source();
        const bytes = Buffer.isBuffer(source.image) ? source.image : await readFile(source.image.path);
        return { bytes, format: source.facts.format === 'png' ? 'png' : 'jpeg', width: source.facts.width, height: source.facts.height };
      },
    };
    const answer = await vendor.create(channel, { request: task.params, image, taskId: task.id, callbackUrl });
    return 'made' in answer ? answer : { ...answer, callback: callbackUrl !== undefined };
  }

  /** The vendor's images copied into our store (checked: PNG or JPEG, its header under the pixel limit). */
  private async stored(status: Extract<ExpandStatus, { state: 'succeeded' }>, task: ExpandTask): Promise<StepOutcome<ExpandResultImage[]>> {
    const results: ExpandResultImage[] = [];
    for (const [index, image] of status.images.entries()) {
      const bytes = await this.client.download(image.url, RESULT_MAX_BYTES);
      const format = sniffFormat(bytes);
      if (format !== 'png' && format !== 'jpeg') return { kind: 'failed', reason: `the upstream's result image ${index} is not a PNG or JPEG` };
      // an upstream's bytes: the header only, under the pixel limit
      let meta: { width: number; height: number };
      try {
        meta = await boundedMetadata(bytes, this.config.images);
      } catch (err) {
        if (err instanceof ImageRejected) return { kind: 'failed', reason: `the upstream's result image ${index} ${err.message}` };
        throw err;
      }
      const watermark = task.params.watermark && image.watermarkUrl ? await this.client.download(image.watermarkUrl, RESULT_MAX_BYTES) : undefined;
      results.push({ body: bytes, contentType: format === 'png' ? 'image/png' : 'image/jpeg', width: meta.width, height: meta.height, ...(watermark ? { watermark } : {}) });
    }
    return { kind: 'done', result: results };
  }
}

/** What an expand costs the company on a channel: its model's price per image times n; null when unpriced. */
function costOf(channel: CandidateChannel, task: ExpandTask): number | null {
  const perImage = servedExpandModel(channel).price?.per_image;
  return perImage === undefined ? null : Math.round(perImage * task.params.n * 1e6) / 1e6;
}

