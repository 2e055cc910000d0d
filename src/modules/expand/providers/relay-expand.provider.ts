import { readFile } from 'node:fs/promises';
import { Inject, Injectable } from '@nestjs/common';
import type { ChannelPoll, StepOutcome, UpstreamWatcher, WatchedTask, WatchNews } from '../../../common/tasks/task-kind.js';
import { AppConfig } from '../../../infra/config/app-config.js';
import { boundedMetadata, ImageRejected } from '../../../infra/images/image-bounds.js';
import { pollDelaySeconds, submitOnce, UpstreamBusy, UpstreamClient, UpstreamRefused, UpstreamUnavailable } from '../../../infra/relay/upstream-client.js';
import type { ExpandImageSize, ExpandInput, ExpandStatus, ExpandVendor } from '../../../vendors/contracts/expand-vendor.js';
import { UnusableAnswer } from '../../../vendors/contracts/vendor.js';
import { servedExpandModel } from '../../channels/channel-models.js';
import { type CandidateChannel, type ChannelHandle, ChannelRouter, type Created, stalledOn, stallReason } from '../../channels/channel-router.js';
import { UpstreamCallbackUrls } from '../../channels/upstream-callback-urls.js';
import { CallerUrls } from '../../samples/caller-urls.service.js';
import type { ExpandTask } from '../expand-task.js';
import { sniffFormat } from '../image-rules.js';
import type { ExpandContext, ExpandProvider, ExpandResultImage } from './expand-provider.js';

const RESULT_MAX_BYTES = 64 * 1024 * 1024;

/** The expand vendors' adapters by channel protocol (`src/vendors/expand-vendors.ts`; a gateway speaks Kling's). */
export const EXPAND_VENDOR_ADAPTERS = Symbol('EXPAND_VENDOR_ADAPTERS');

/**
 * Relays expand tasks to the vendors behind the expand channels (a channel's adapter by its protocol,
 * `src/vendors/`; RELAY_EXPAND_URL is one channel speaking the door's own interface). A new task takes a
 * channel from the router and keeps it: its create, polls and lookups use that channel's address and
 * credentials. A vendor that answers later is watched (polled, or called back); one that answers with the
 * images (Stability's outpaint) is done in the step that sends it. A channel takes the task only when its
 * vendor can make it exactly as asked (the router's `fits` asks the adapter's `unmet`); a URL input is read
 * first when a configured channel's vendor needs its size. Among channels of one priority,
 * EXPAND_ROUTING=cost takes the cheapest (the channel's price per image, times n).
 */
@Injectable()
export class RelayExpandProvider implements ExpandProvider, UpstreamWatcher {
  readonly watcher: UpstreamWatcher = this;

  constructor(
    private readonly client: UpstreamClient,
    private readonly config: AppConfig,
    private readonly router: ChannelRouter,
    private readonly callbacks: UpstreamCallbackUrls,
    private readonly callerUrls: CallerUrls,
    @Inject(EXPAND_VENDOR_ADAPTERS) private readonly vendors: Record<string, ExpandVendor>,
  ) {}

  /** The tasks a channel holds are asked about one by one. */
  async channelPoll(channelId: string | null): Promise<ChannelPoll | null> {
    const channel = await this.router.heldBy({ channelId }, 'expand');
    const query = channel ? this.vendors[channel.protocol]?.query?.bind(this.vendors[channel.protocol]) : undefined;
    if (!channel || !query) return null;
    return {
      name: channel.name,
      batchSize: 1,
      poll: async ([task]: WatchedTask[]) => {
        // stalled past the channel's limit: its step gives it up
        if (stalledOn(channel, task.upstreamSince)) return new Map<string, WatchNews>([[task.id, 'changed']]);
        const status = await this.router.onHeld(channel, task.id, 'expand', () => query(channel, task.upstreamId, true));
        return new Map<string, WatchNews>([[task.id, status.state === 'working' ? 'working' : 'changed']]);
      },
    };
  }

  async step(task: ExpandTask, ctx: ExpandContext): Promise<StepOutcome<ExpandResultImage[]>> {
    try {
      if (task.upstreamId || task.submitStartedAt) {
        const channel = await this.router.heldBy(task, 'expand');
        if (!channel) return await this.router.gatewayFailure(task.id, 'expand', `the channel that holds the task (${task.channelId ?? 'RELAY_EXPAND_URL'}) no longer exists`);
        const vendor = this.vendorOf(channel);
        const upstreamId = task.upstreamId;
        if (upstreamId && vendor.query) {
          const status = await this.router.onHeld(channel, task.id, 'expand', () => vendor.query!(channel, upstreamId, false));
          if (!(await this.gaveUp(channel, task, upstreamId, status, ctx))) return await this.interpret(vendor, status, task);
          // given up there: on to a channel it has not had, in this same step
        } else {
          const outcome = await this.unansweredCreate(channel, vendor, task, ctx);
          if (outcome) return outcome;
        }
      }
      // the upstream fetches the image URL from its network, which may be the gateway's own
      const handOff = await this.callerUrls.handOffRefusal('image', task.params.image_url);
      if (handOff) return { kind: 'failed', reason: handOff };
      const size = await this.inputSize(task, ctx);
      return await this.router.submitNew({
        operation: 'expand',
        task,
        marks: ctx,
        fits: (channel) => this.fits(channel, task, size),
        costOf: (channel) => costOf(channel, task),
        send: (channel) => this.submit(channel, task, ctx),
      });
    } catch (err) {
      if (err instanceof UnusableAnswer) return { kind: 'failed', reason: err.message };
      if (err instanceof UpstreamRefused) return await this.router.refusal(task.id, 'expand', err, 'the upstream refused the task');
      if (err instanceof UpstreamBusy) return { kind: 'busy', seconds: pollDelaySeconds(task.createdAt, this.config.relay.pollMs) };
      if (err instanceof UpstreamUnavailable) return { kind: 'wait', seconds: pollDelaySeconds(task.createdAt, this.config.relay.pollMs) };
      throw err;
    }
  }

  /**
   * A create went out and its answer never came back (a timeout, a reset, a worker killed while it was in
   * flight). A vendor that keeps our id (Kling) is asked for the task by it: found, it is adopted; provably
   * not made, the create may be sent again (Kling refuses a second with the same id). A vendor that cannot be
   * asked (Stability) is never sent it again: the task goes on to another channel that has not had it when it
   * may fail over, and fails otherwise. Answers the step's outcome, or null to go on to a create.
   */
  private async unansweredCreate(channel: ChannelHandle, vendor: ExpandVendor, task: ExpandTask, ctx: ExpandContext): Promise<StepOutcome<ExpandResultImage[]> | null> {
    if (vendor.findByOwnId) {
      const found = await this.router.onHeld(channel, task.id, 'expand', () => vendor.findByOwnId!(channel, task.id));
      if (!found) {
        await ctx.clearSubmitting();
        return null;
      }
      await ctx.saveUpstreamId(found.upstreamId, { callback: false });
      await this.router.adopted(task.id, 'expand', channel, { model: servedExpandModel(channel).name, upstreamId: found.upstreamId, cost: costOf(channel, task) });
      return this.interpret(vendor, found.status, task);
    }
    const reason = `the upstream never answered the request (channel ${task.channelId ?? 'RELAY_EXPAND_URL'}); it was not sent again, to avoid a second (billed) image`;
    const size = await this.inputSize(task, ctx);
    if (!(await this.router.mayFailOver('expand', task.id, (c) => this.fits(c, task, size), channel))) return this.router.gatewayFailure(task.id, 'expand', reason, channel);
    await this.router.abandon({ operation: 'expand', taskId: task.id, channel, upstreamId: null, marks: ctx, reason });
    return null;
  }

  /**
   * Failover after acceptance: an upstream task failed for a reason of the vendor's own (not a content
   * refusal, unless RELAY_FAILOVER_ON_CONTENT) or still working past the channel's stall_after_s is given up
   * when a capable channel the task has not had can take it (RELAY_UPSTREAM_ATTEMPTS). Answers whether it was.
   */
  private async gaveUp(channel: ChannelHandle, task: ExpandTask, upstreamId: string, status: ExpandStatus, ctx: ExpandContext): Promise<boolean> {
    const failed = status.state === 'failed' && (!status.content || this.config.relay.failoverOnContent);
    const stalled = status.state === 'working' && stalledOn(channel, task.upstreamSince);
    if (!failed && !stalled) return false;
    const size = await this.inputSize(task, ctx);
    if (!(await this.router.mayFailOver('expand', task.id, (c) => this.fits(c, task, size)))) return false;
    const reason = status.state === 'failed' ? `the upstream failed the task: ${status.reason}` : stallReason(channel);
    await this.router.abandon({ operation: 'expand', taskId: task.id, channel, upstreamId, marks: ctx, reason });
    return true;
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

  private vendorOf(channel: ChannelHandle): ExpandVendor {
    const vendor = this.vendors[channel.protocol];
    if (!vendor) throw new UpstreamRefused(`channel ${channel.name} speaks ${channel.protocol}, which makes no expand`, 0, 'request', true);
    return vendor;
  }

  private async submit(channel: ChannelHandle, task: ExpandTask, ctx: ExpandContext): Promise<Created<ExpandResultImage[]>> {
    const vendor = this.vendorOf(channel);
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
    const answer = await submitOnce(ctx, () => vendor.create(channel, { request: task.params, image, taskId: task.id, callbackUrl }));
    const taken = { model: servedExpandModel(channel).name, upstreamId: 'upstreamId' in answer ? answer.upstreamId : null, cost: costOf(channel, task) };
    if ('made' in answer) return { kind: 'done', result: answer.made, taken };
    await ctx.saveUpstreamId(answer.upstreamId, { callback: callbackUrl !== undefined });
    return { ...(await this.interpret(vendor, answer.status, task)), taken };
  }

  /** The vendor's states onto ours: working → keep watching; succeeded → copy the images; failed → its words. */
  private async interpret(vendor: ExpandVendor, status: ExpandStatus, task: ExpandTask): Promise<StepOutcome<ExpandResultImage[]>> {
    if (status.state === 'working') return { kind: 'watch', minPollS: vendor.minPollS };
    if (status.state === 'failed') return { kind: 'failed', reason: `the upstream failed the task: ${status.reason}` };
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

