import { Injectable } from '@nestjs/common';
import sharp from 'sharp';
import type { ChannelPoll, StepOutcome, UpstreamWatcher, WatchedTask, WatchNews } from '../../../common/tasks/task-kind.js';
import { AppConfig } from '../../../infra/config/app-config.js';
import { pollDelaySeconds, submitOnce, UpstreamBusy, UpstreamClient, UpstreamRefused, UpstreamUnavailable } from '../../../infra/relay/upstream-client.js';
import { MediaFile } from '../../../infra/storage/storage.js';
import { type ChannelHandle, ChannelRouter } from '../../channels/channel-router.js';
import { UpstreamCallbackUrls } from '../../channels/upstream-callback-urls.js';
import type { VideoTask } from '../video-task.js';
import type { VideoContext, VideoProvider, VideoResult } from './video-provider.js';

const VIDEO_MAX_BYTES = 512 * 1024 * 1024;
const IMAGE_MAX_BYTES = 32 * 1024 * 1024;
/** How often Luma may be asked about a generation: it publishes no limit, so the schedule (RELAY_POLL_MS and the age back-off) alone decides. */
const MIN_POLL_S = 0;
/** Luma's final states: the generation's next step acts on them. */
const FINAL = new Set(['completed', 'failed']);

interface UpstreamGeneration {
  id?: unknown;
  state?: unknown;
  failure_reason?: unknown;
  assets?: { video?: unknown; image?: unknown } | null;
}

/**
 * Forwards generations to Luma's API (states queued | dreaming | completed | failed, `failure_reason`,
 * `assets.video`) or to an upstream speaking this same interface (pending | processing | …), through the
 * generation's channel (its base is the one before `/generations`: https://api.lumalabs.ai/dream-machine/v1,
 * or https://aggregator.example/video-b/v1; RELAY_VIDEO_URL is one channel). A create goes on to the next
 * channel only when one provably did not take it (429, refused connection, refused credentials or credit);
 * Luma has no idempotency key, so a create whose answer never arrived fails the generation rather than
 * risk a second one. A generation naming an earlier one as a keyframe goes to that one's channel.
 */
@Injectable()
export class RelayVideoProvider implements VideoProvider, UpstreamWatcher {
  readonly watcher: UpstreamWatcher = this;

  constructor(
    private readonly client: UpstreamClient,
    private readonly config: AppConfig,
    private readonly router: ChannelRouter,
    private readonly callbacks: UpstreamCallbackUrls,
  ) {}

  /** The generations a channel holds are asked about one by one (Luma has no query for several). */
  async channelPoll(channelId: string | null): Promise<ChannelPoll | null> {
    const channel = await this.router.heldBy({ channelId }, 'video');
    if (!channel) return null;
    return {
      name: channel.name,
      batchSize: 1,
      poll: async ([task]: WatchedTask[]) => {
        const answer = await this.router.onHeld(channel, task.id, 'video', () =>
          this.client.call('GET', `${endpoint(channel)}/${encodeURIComponent(task.upstreamId)}`, { auth: channel.auth, idempotent: true, once: true }),
        );
        return new Map<string, WatchNews>([[task.id, FINAL.has(String((answer.json as UpstreamGeneration).state)) ? 'changed' : 'working']]);
      },
    };
  }

  async step(generation: VideoTask, ctx: VideoContext): Promise<StepOutcome<VideoResult>> {
    try {
      if (generation.upstreamId) {
        const channel = await this.router.heldBy(generation, 'video');
        if (!channel) return { kind: 'failed', reason: 'the channel that holds the generation no longer exists' };
        const upstreamId = generation.upstreamId;
        return await this.router.onHeld(channel, generation.id, 'video', async () => {
          const answer = await this.client.call('GET', `${endpoint(channel)}/${encodeURIComponent(upstreamId)}`, { auth: channel.auth, idempotent: true });
          return this.interpret(answer.json as UpstreamGeneration, generation, ctx);
        });
      }
      if (generation.submitStartedAt) {
        return { kind: 'failed', reason: 'the upstream never answered the create request; it was not sent again, to avoid a second (billed) generation' };
      }
      // A keyframe naming an earlier generation names it by the upstream's id: only the account that made it knows it.
      const keyframes: Record<string, unknown> = {};
      let pinnedTo: string | null = null;
      for (const frame of generation.params.keyframes) {
        if (frame.type === 'image') {
          keyframes[frame.position] = { type: 'image', url: frame.url };
          continue;
        }
        const named = await ctx.upstreamOf(frame.generation_id!);
        if (!named) return { kind: 'failed', reason: `keyframes.${frame.position} names generation ${frame.generation_id}, which the upstream does not know` };
        if (pinnedTo && named.channelId && named.channelId !== pinnedTo) return { kind: 'failed', reason: 'the keyframes name generations made on different upstream channels' };
        pinnedTo = named.channelId ?? pinnedTo;
        keyframes[frame.position] = { type: 'generation', id: named.upstreamId };
      }
      return await this.router.submitNew({ operation: 'video', task: generation, marks: ctx, pinnedTo, send: (channel) => this.submit(channel, generation, keyframes, ctx) });
    } catch (err) {
      if (err instanceof UpstreamRefused) return { kind: 'failed', reason: `the upstream refused the generation: ${err.message}` };
      if (err instanceof UpstreamBusy) return { kind: 'busy', seconds: pollDelaySeconds(generation.createdAt, this.config.relay.pollMs) };
      if (err instanceof UpstreamUnavailable) return { kind: 'wait', seconds: pollDelaySeconds(generation.createdAt, this.config.relay.pollMs) };
      throw err;
    }
  }

  private async submit(channel: ChannelHandle, generation: VideoTask, keyframes: Record<string, unknown>, ctx: VideoContext): Promise<StepOutcome<VideoResult>> {
    const callbackUrl = this.callbacks.urlFor(generation.id);
    const body = {
      prompt: generation.params.prompt,
      aspect_ratio: generation.params.aspect_ratio,
      loop: generation.params.loop,
      model: generation.params.model,
      ...(generation.params.resolution ? { resolution: generation.params.resolution } : {}),
      ...(generation.params.duration ? { duration: generation.params.duration } : {}),
      ...(generation.params.concepts ? { concepts: generation.params.concepts } : {}),
      ...(Object.keys(keyframes).length ? { keyframes } : {}),
      ...(callbackUrl ? { callback_url: callbackUrl } : {}),
    };
    const answer = await submitOnce(ctx, () => this.client.call('POST', endpoint(channel), { body, auth: channel.auth, failFast: true }));
    const created = answer.json as UpstreamGeneration;
    if (typeof created.id !== 'string' || !created.id) return { kind: 'failed', reason: 'the upstream answered the create request without an id' };
    await ctx.saveUpstreamId(created.id, { callback: callbackUrl !== undefined });
    return this.interpret(created, generation, ctx);
  }

  private async interpret(upstream: UpstreamGeneration, generation: VideoTask, ctx: VideoContext): Promise<StepOutcome<VideoResult>> {
    switch (upstream.state) {
      case 'completed': {
        const videoUrl = upstream.assets?.video;
        if (typeof videoUrl !== 'string') return { kind: 'failed', reason: 'the upstream completed without a video' };
        const video = new MediaFile(ctx.file('video', 'mp4'));
        await this.client.downloadToFile(videoUrl, VIDEO_MAX_BYTES, video.path);
        const imageUrl = upstream.assets?.image;
        const thumbnail = typeof imageUrl === 'string' ? await this.client.download(imageUrl, IMAGE_MAX_BYTES) : undefined;
        const meta = thumbnail ? await sharp(thumbnail).metadata().catch(() => null) : null;
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
      case 'failed':
        return { kind: 'failed', reason: `the upstream failed the generation: ${typeof upstream.failure_reason === 'string' && upstream.failure_reason ? upstream.failure_reason : 'no reason given'}` };
      default: // queued, dreaming, pending, processing: the poller watches it
        return { kind: 'watch', minPollS: MIN_POLL_S };
    }
  }
}

function endpoint(channel: ChannelHandle): string {
  return `${channel.baseUrl}/generations`;
}
