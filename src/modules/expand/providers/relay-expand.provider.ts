import { Injectable } from '@nestjs/common';
import type { ChannelPoll, StepOutcome, UpstreamWatcher, WatchedTask, WatchNews } from '../../../common/tasks/task-kind.js';
import { AppConfig } from '../../../infra/config/app-config.js';
import { boundedMetadata, ImageRejected } from '../../../infra/images/image-bounds.js';
import { pollDelaySeconds, submitOnce, UpstreamBusy, UpstreamClient, UpstreamRefused, UpstreamUnavailable } from '../../../infra/relay/upstream-client.js';
import { isKlingNotFound, klingEnvelopeData } from '../../../vendors/kling/kling-envelope.js';
import { servedExpandModel } from '../../channels/channel-models.js';
import { type CandidateChannel, type ChannelHandle, ChannelRouter, type Created, stalledOn, stallReason } from '../../channels/channel-router.js';
import { isContentRefusal } from '../../../vendors/contracts/content-refusal.js';
import { UpstreamCallbackUrls } from '../../channels/upstream-callback-urls.js';
import { CallerUrls } from '../../samples/caller-urls.service.js';
import type { ExpandTask } from '../expand-task.js';
import { sniffFormat } from '../image-rules.js';
import { StabilityOutpaintVendor } from '../vendors/stability-outpaint.vendor.js';
import type { ExpandContext, ExpandProvider, ExpandResultImage } from './expand-provider.js';

const RESULT_MAX_BYTES = 64 * 1024 * 1024;
/** How often Kling may be asked about a task: it publishes no limit, so the schedule (RELAY_POLL_MS and the age back-off) alone decides. */
const MIN_POLL_S = 0;
/** Kling's final states: the task's next step acts on them. */
const FINAL = new Set(['succeed', 'failed']);

interface UpstreamTask {
  task_id?: unknown;
  task_status?: unknown;
  task_status_msg?: unknown;
  task_result?: { images?: { index?: number; url?: string; watermark_url?: string }[] };
}

/**
 * Forwards expand tasks to Kling's API, or to an upstream that speaks this same interface, through the
 * task's channel (a channel's base is the one before `/v1/images/editing/expand`:
 * https://api-singapore.klingai.com, or https://aggregator.example/video-a; RELAY_EXPAND_URL is one
 * channel). A new task takes a channel from the router and keeps it: its create, polls and lookups use
 * that channel's address and credentials. Our task id goes as external_task_id, so a create whose
 * answer never arrived (a timeout, a 5xx) is found again by it rather than sent twice; when the lookup
 * answers that the upstream has no such task, it provably was not created, and any channel may take it.
 *
 * A `stability` channel (Stability's outpaint, `StabilityOutpaintVendor`) answers the images at once: the
 * task is done in the step that sends it. It takes the task only when it can make it exactly (no watermark,
 * margins of at most 2000 px, an input of its sizes), so the router's `fits` asks it; a URL input is read
 * first when a Stability channel is configured (its size decides). Among channels of one priority,
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
    private readonly stability: StabilityOutpaintVendor,
    private readonly callerUrls: CallerUrls,
  ) {}

  /** The tasks a channel holds are asked about one by one (Kling has no query for several). */
  async channelPoll(channelId: string | null): Promise<ChannelPoll | null> {
    const channel = await this.router.heldBy({ channelId }, 'expand');
    if (!channel) return null;
    return {
      name: channel.name,
      batchSize: 1,
      poll: async ([task]: WatchedTask[]) => {
        // stalled past the channel's limit: its step gives it up
        if (stalledOn(channel, task.upstreamSince)) return new Map<string, WatchNews>([[task.id, 'changed']]);
        const data = await this.router.onHeld(channel, task.id, 'expand', () => this.query(channel, task.upstreamId, true));
        return new Map<string, WatchNews>([[task.id, FINAL.has(String(data.task_status)) ? 'changed' : 'working']]);
      },
    };
  }

  async step(task: ExpandTask, ctx: ExpandContext): Promise<StepOutcome<ExpandResultImage[]>> {
    try {
      if (task.upstreamId || task.submitStartedAt) {
        const channel = await this.router.heldBy(task, 'expand');
        if (!channel) return await this.router.gatewayFailure(task.id, 'expand', `the channel that holds the task (${task.channelId ?? 'RELAY_EXPAND_URL'}) no longer exists`);
        if (channel.protocol === StabilityOutpaintVendor.protocol) {
          return await this.router.gatewayFailure(task.id, 'expand', 'the upstream never answered the request; it was not sent again, to avoid a second (billed) image', channel);
        }
        const upstreamId = task.upstreamId;
        if (upstreamId) {
          const upstream = await this.router.onHeld(channel, task.id, 'expand', () => this.query(channel, upstreamId));
          if (!(await this.gaveUp(channel, task, upstreamId, upstream, ctx))) return await this.interpret(upstream, task);
          // given up there: on to a channel it has not had, in this same step
        } else {
          // An earlier create got no usable answer: it may have been created upstream. Look for it by our id first.
          const earlier = await this.router.onHeld(channel, task.id, 'expand', () => this.findByOurId(channel, task.id));
          if (earlier) return await this.adopt(earlier, task, ctx);
          // Kling answers that it has no task with our external_task_id: it provably did not create it, so any channel may take it now.
          await ctx.clearSubmitting();
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
        fits: (channel) => channel.protocol !== StabilityOutpaintVendor.protocol || StabilityOutpaintVendor.unmet(task.params, size) === null,
        costOf: (channel) => costOf(channel, task),
        send: (channel) => (channel.protocol === StabilityOutpaintVendor.protocol ? this.outpaint(channel, task, ctx) : this.submit(channel, task, ctx)),
      });
    } catch (err) {
      if (err instanceof UpstreamRefused) return await this.router.refusal(task.id, 'expand', err, 'the upstream refused the task');
      if (err instanceof UpstreamBusy) return { kind: 'busy', seconds: pollDelaySeconds(task.createdAt, this.config.relay.pollMs) };
      if (err instanceof UpstreamUnavailable) return { kind: 'wait', seconds: pollDelaySeconds(task.createdAt, this.config.relay.pollMs) };
      throw err;
    }
  }

  /**
   * Failover after acceptance: an upstream task failed for a reason of Kling's own (not a content refusal,
   * unless RELAY_FAILOVER_ON_CONTENT) or still working past the channel's stall_after_s is given up when a
   * capable channel the task has not had can take it (RELAY_UPSTREAM_ATTEMPTS). Answers whether it was.
   */
  private async gaveUp(channel: ChannelHandle, task: ExpandTask, upstreamId: string, upstream: UpstreamTask, ctx: ExpandContext): Promise<boolean> {
    const words = typeof upstream.task_status_msg === 'string' && upstream.task_status_msg ? upstream.task_status_msg : 'no reason given';
    const failed = upstream.task_status === 'failed' && (!isContentRefusal(words) || this.config.relay.failoverOnContent);
    const stalled = !FINAL.has(String(upstream.task_status)) && stalledOn(channel, task.upstreamSince);
    if (!failed && !stalled) return false;
    const size = await this.inputSize(task, ctx);
    const fits = (c: CandidateChannel) => c.protocol !== StabilityOutpaintVendor.protocol || StabilityOutpaintVendor.unmet(task.params, size) === null;
    if (!(await this.router.mayFailOver('expand', task.id, fits))) return false;
    const reason = stalled ? stallReason(channel) : `the upstream failed the task: ${words}`;
    await this.router.abandon({ operation: 'expand', taskId: task.id, channel, upstreamId, marks: ctx, reason });
    return true;
  }

  /** The input's size: known from acceptance for Base64; a URL is read only when a Stability channel (which needs it) is configured. */
  private async inputSize(task: ExpandTask, ctx: ExpandContext): Promise<{ width: number; height: number } | null> {
    if (task.params.image_width && task.params.image_height) return { width: task.params.image_width, height: task.params.image_height };
    const configured = await this.router.configuredFor('expand');
    if (!configured.some((c) => c.protocol === StabilityOutpaintVendor.protocol)) return null;
    return (await ctx.source()).facts;
  }

  /** Stability's synchronous outpaint: the images come with the answer. */
  private async outpaint(channel: ChannelHandle, task: ExpandTask, ctx: ExpandContext): Promise<Created<ExpandResultImage[]>> {
    const source = await ctx.source();
    const images = await submitOnce(ctx, () => this.stability.expand(channel, task.params, source.image, source.facts));
    return { kind: 'done', result: images, taken: { model: servedExpandModel(channel).name, upstreamId: null, cost: costOf(channel, task) } };
  }

  private async submit(channel: ChannelHandle, task: ExpandTask, ctx: ExpandContext): Promise<Created<ExpandResultImage[]>> {
    const image = task.params.image_url ?? (await ctx.input()).toString('base64');
    const callbackUrl = this.callbacks.urlFor(task.id);
    const body = {
      image,
      up_expansion_ratio: task.params.up_ratio,
      bottom_expansion_ratio: task.params.bottom_ratio,
      down_expansion_ratio: task.params.bottom_ratio,
      left_expansion_ratio: task.params.left_ratio,
      right_expansion_ratio: task.params.right_ratio,
      n: task.params.n,
      external_task_id: task.id,
      ...(callbackUrl ? { callback_url: callbackUrl } : {}),
      ...(task.params.watermark ? { watermark_info: { enabled: true } } : {}),
      ...(task.params.prompt ? { prompt: task.params.prompt } : {}),
    };
    let data;
    try {
      data = await submitOnce(ctx, async () => klingEnvelopeData<UpstreamTask>((await this.client.call('POST', endpoint(channel), { body, auth: channel.auth, failFast: true })).json));
    } catch (err) {
      // A refusal may be the upstream recognising our external_task_id from a create that did go through.
      if (err instanceof UpstreamRefused) {
        const earlier = await this.findByOurId(channel, task.id);
        if (earlier) return this.adopt(earlier, task, ctx, callbackUrl !== undefined, channel);
      }
      throw err;
    }
    if (typeof data?.task_id !== 'string' || !data.task_id) {
      return { kind: 'failed', reason: 'the upstream answered the create request without a task_id' };
    }
    return this.adopt(data, task, ctx, callbackUrl !== undefined, channel);
  }

  /** `callback`: the create asked Kling to call back (or an earlier one did; we cannot tell, so only a create that we know did). */
  private async adopt(upstream: UpstreamTask, task: ExpandTask, ctx: ExpandContext, callback = false, channel?: ChannelHandle): Promise<Created<ExpandResultImage[]>> {
    await ctx.saveUpstreamId(String(upstream.task_id), { callback });
    const outcome = await this.interpret(upstream, task);
    return channel ? { ...outcome, taken: { model: servedExpandModel(channel).name, upstreamId: String(upstream.task_id), cost: costOf(channel, task) } } : outcome;
  }

  /** `poll`: one try with a short time limit (the poller asks again at its next time). */
  private async query(channel: ChannelHandle, id: string, poll = false): Promise<UpstreamTask> {
    const answer = await this.client.call('GET', `${endpoint(channel)}/${encodeURIComponent(id)}`, { auth: channel.auth, idempotent: true, once: poll });
    const data = klingEnvelopeData<UpstreamTask>(answer.json);
    if (!data) throw new UpstreamUnavailable('the upstream answered the query without data', false);
    return data;
  }

  private async findByOurId(channel: ChannelHandle, taskId: string): Promise<UpstreamTask | null> {
    try {
      const found = await this.query(channel, taskId);
      return typeof found.task_id === 'string' ? found : null;
    } catch (err) {
      if (isKlingNotFound(err)) return null;
      throw err;
    }
  }

  /** Maps the upstream's states onto ours: submitted/processing → keep polling; succeed → copy the images; failed → its message. */
  private async interpret(upstream: UpstreamTask, task: ExpandTask): Promise<StepOutcome<ExpandResultImage[]>> {
    switch (upstream.task_status) {
      case 'succeed': {
        const images = [...(upstream.task_result?.images ?? [])].sort((a, b) => (a.index ?? 0) - (b.index ?? 0));
        if (images.length === 0 || images.some((i) => typeof i.url !== 'string')) {
          return { kind: 'failed', reason: 'the upstream reported success without result images' };
        }
        const results: ExpandResultImage[] = [];
        for (const image of images) {
          const bytes = await this.client.download(image.url!, RESULT_MAX_BYTES);
          const format = sniffFormat(bytes);
          if (format !== 'png' && format !== 'jpeg') return { kind: 'failed', reason: `the upstream's result image ${image.index ?? results.length} is not a PNG or JPEG` };
          // an upstream's bytes: the header only, under the pixel limit
          let meta: { width: number; height: number };
          try {
            meta = await boundedMetadata(bytes, this.config.images);
          } catch (err) {
            if (err instanceof ImageRejected) return { kind: 'failed', reason: `the upstream's result image ${image.index ?? results.length} ${err.message}` };
            throw err;
          }
          const watermark = task.params.watermark && typeof image.watermark_url === 'string' ? await this.client.download(image.watermark_url, RESULT_MAX_BYTES) : undefined;
          results.push({ body: bytes, contentType: format === 'png' ? 'image/png' : 'image/jpeg', width: meta.width, height: meta.height, ...(watermark ? { watermark } : {}) });
        }
        return { kind: 'done', result: results };
      }
      case 'failed':
        return { kind: 'failed', reason: `the upstream failed the task: ${typeof upstream.task_status_msg === 'string' && upstream.task_status_msg ? upstream.task_status_msg : 'no reason given'}` };
      default: // submitted, processing: the poller watches it
        return { kind: 'watch', minPollS: MIN_POLL_S };
    }
  }
}

/** What an expand costs the company on a channel: its model's price per image times n; null when unpriced. */
function costOf(channel: CandidateChannel, task: ExpandTask): number | null {
  const perImage = servedExpandModel(channel).price?.per_image;
  return perImage === undefined ? null : Math.round(perImage * task.params.n * 1e6) / 1e6;
}

function endpoint(channel: ChannelHandle): string {
  return `${channel.baseUrl}/v1/images/editing/expand`;
}
