import { Inject, Injectable } from '@nestjs/common';
import type { ChannelPoll, StepOutcome, UpstreamWatcher } from '../../../common/tasks/task-kind.js';
import { AppConfig, type ImageLimits } from '../../../infra/config/app-config.js';
import { ImageRejected, readImageHeader } from '../../../infra/images/image-bounds.js';
import { UpstreamClient, UpstreamGenerationFailed, UpstreamRefused } from '../../../infra/relay/upstream-client.js';
import { unmetImageFields, type ImageRequest } from '../../../vendors/contracts/image-request.js';
import type { ImageStatus, ImageVendor, VendorImage } from '../../../vendors/contracts/image-vendor.js';
import { imageCostOf, type ServedImageModel, servedImageModels } from '../../channels/channel-models.js';
import type { CandidateChannel } from '../../channels/channel-router.js';
import { RelayFlow, type RelayOperation } from '../../channels/relay-flow.js';
import { UpstreamCallbackUrls } from '../../channels/upstream-callback-urls.js';
import { CallerUrls } from '../../samples/caller-urls.service.js';
import { imageRequestOf, type ImageTask } from '../image-task.js';
import type { ImageContext, ImageOutput, ImageProvider } from './image-provider.js';

/** A vendor's image: at most this many bytes (a 4K PNG is ~25 MB). */
const IMAGE_MAX_BYTES = 64 * 1024 * 1024;

/** The image vendors' adapters by channel protocol (`src/vendors/image-vendors.ts`; a gateway speaks the OpenAI Images door). */
export const IMAGE_VENDOR_ADAPTERS = Symbol('IMAGE_VENDOR_ADAPTERS');

/**
 * Relays image tasks to the vendors behind the image channels, on the one relay path (RelayFlow: channel,
 * create once, watch, fail over): what is the image operation's own is here. A task goes to a channel with a
 * model that makes exactly what it asks (`unmetImageFields` empty: no field dropped), priced per image; a
 * synchronous vendor (OpenAI, Gemini, Stability) answers the images in the step that sends it, an
 * asynchronous one (FLUX, Kling) is watched (polled, or called back). A vendor's own failure goes on to the
 * next capable channel; its links (FLUX's live 10 minutes) are downloaded at once.
 */
@Injectable()
export class RelayImageProvider implements ImageProvider, UpstreamWatcher {
  readonly watcher: UpstreamWatcher = this;

  constructor(
    private readonly client: UpstreamClient,
    private readonly flow: RelayFlow,
    private readonly callbacks: UpstreamCallbackUrls,
    private readonly callerUrls: CallerUrls,
    private readonly config: AppConfig,
    @Inject(IMAGE_VENDOR_ADAPTERS) private readonly vendors: Record<string, ImageVendor>,
  ) {}

  channelPoll(channelId: string | null): Promise<ChannelPoll | null> {
    return this.flow.channelPoll(channelId, { operation: 'image', vendors: this.vendors, failsOver: true });
  }

  step(task: ImageTask, ctx: ImageContext): Promise<StepOutcome<ImageOutput>> {
    const request = imageRequestOf(task.params);
    const modelFor = (channel: CandidateChannel) => modelOf(channel, request);
    const op: RelayOperation<ImageVendor, ImageStatus, ImageOutput> = {
      operation: 'image',
      noun: 'task',
      vendors: this.vendors,
      failsOver: true,
      fits: (channel) => modelFor(channel) !== undefined,
      costOf: (channel) => {
        const model = modelFor(channel);
        return model ? imageCostOf(model, request) : null;
      },
      taken: (channel) => {
        const model = modelFor(channel);
        return { model: model?.name ?? request.model ?? '', cost: model ? imageCostOf(model, request) : null };
      },
      prepare: async () => {
        // an input's URL is read by the gateway (the vendors get the bytes); it is checked as a caller's URL at the door
        for (const input of task.params.inputs) {
          const refused = input.url ? await this.callerUrls.handOffRefusal('image', input.url, task.baseUrl) : null;
          if (refused) return { kind: 'failed', reason: refused };
        }
        return { pinnedTo: null, data: undefined };
      },
      create: async (channel, vendor) => {
        const model = modelFor(channel);
        if (!model) throw new UpstreamRefused(`channel ${channel.name} has no model that makes what the task asks`, 0, 'request', true);
        const callbackUrl = vendor.query ? this.callbacks.urlFor(task.id) : undefined;
        const answer = await vendor.create(channel, { model: model.spec, request, taskId: task.id, callbackUrl, partials: task.params.partial_images, images: ctx.inputs, mask: ctx.mask, partial: ctx.partial });
        if (!('made' in answer)) return { ...answer, callback: callbackUrl !== undefined };
        const made = await this.downloaded(answer.made, answer.revisedPrompt);
        madeImages(made.images, this.config.images);
        return { made };
      },
      findByOwnId: (channel, vendor) => vendor.findByOwnId?.(channel, task.id) ?? null,
      finished: async (status) => {
        const done = status as Extract<ImageStatus, { state: 'succeeded' }>;
        return { kind: 'done', result: await this.downloaded(done.images, done.revisedPrompt) };
      },
    };
    return this.flow.step(task, ctx, op);
  }

  /** The vendor's images as bytes: links downloaded now (they expire). */
  private async downloaded(images: VendorImage[], revisedPrompt?: string): Promise<ImageOutput> {
    const bytes: Buffer[] = [];
    for (const image of images) bytes.push('bytes' in image ? image.bytes : await this.client.download(image.url, IMAGE_MAX_BYTES));
    return { images: bytes, ...(revisedPrompt ? { revisedPrompt } : {}) };
  }
}

/**
 * A synchronous vendor's images, looked at before the task takes them: one whose bytes are no image within the
 * bounds (cut off, not an image at all) made nothing usable there, as a 5xx does not: a failed generation
 * (UpstreamGenerationFailed), so the task goes on to another channel that makes it while it may. Only the
 * header is read here; the image kind decodes what it keeps.
 */
function madeImages(images: readonly Buffer[], limits: ImageLimits): void {
  for (const [index, bytes] of images.entries()) {
    try {
      readImageHeader(bytes, limits);
    } catch (err) {
      if (err instanceof ImageRejected) throw new UpstreamGenerationFailed(`the upstream's image ${index} ${err.message}`, undefined, { status: 200 });
      throw err;
    }
  }
}

/** The channel's first model (in its list's order) that makes exactly what the request asks. */
function modelOf(channel: CandidateChannel, request: ImageRequest): ServedImageModel | undefined {
  return servedImageModels(channel).find((m) => (request.model === undefined || m.name === request.model) && unmetImageFields(m.spec, request).length === 0);
}
