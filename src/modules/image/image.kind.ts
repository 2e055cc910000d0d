import { Inject, Injectable } from '@nestjs/common';
import { type Price, type StepContext, type StepOutcome, type Success, TaskFailure, type TaskKind, type TaskTx, type UpstreamWatcher } from '../../common/tasks/task-kind.js';
import { AppConfig, type ProviderName } from '../../infra/config/app-config.js';
import { decodedImageHeader, ImageRejected, readImageHeader } from '../../infra/images/image-bounds.js';
import { OutboundError, SafeFetchService } from '../../infra/outbound/safe-fetch.service.js';
import type { ImageInput } from '../../vendors/contracts/image-vendor.js';
import { mediaEndRows } from '../media/media.repository.js';
import { MediaService } from '../media/media.service.js';
import { SamplesService } from '../samples/samples.service.js';
import { TaskDoors } from '../../doors/contracts/task-doors.js';
import { IMAGE_DEFINITION } from './image.definition.js';
import { type FinishedImage, finishImage } from './image-output.js';
import type { ImageInputParams, ImageParams, ImageResult, ImageTask } from './image-task.js';
import { IMAGE_PROVIDERS, type ImageProvider } from './providers/image-provider.js';

/** An input image fetched from a caller's URL: at most this many bytes (Kling's rule is 10 MB). */
const INPUT_MAX_BYTES = 10 * 1024 * 1024;

/**
 * Image generation and editing as a task kind: priced per image, made by the provider IMAGE_PROVIDER
 * chooses (the sandbox draws, a relay has the vendors behind the image channels make them), each image
 * converted into the asked size and format before it is stored; its notifications are its door's record.
 */
/** What an image step makes: the images as they are stored (what the task's doors answer, in hand on the instance that made them). */
export interface MadeImages {
  images: FinishedImage[];
  revisedPrompt?: string;
}

@Injectable()
export class ImageKind implements TaskKind<ImageParams, ImageResult, { images: FinishedImage[]; revisedPrompt?: string }> {
  static readonly definition = IMAGE_DEFINITION;
  readonly definition = IMAGE_DEFINITION;

  constructor(
    private readonly config: AppConfig,
    @Inject(IMAGE_PROVIDERS) private readonly providers: Record<ProviderName, ImageProvider>,
    private readonly doors: TaskDoors,
    private readonly media: MediaService,
    private readonly fetcher: SafeFetchService,
    private readonly samples: SamplesService,
  ) {}

  /** A task holds one slot per image and costs PRICE_IMAGE credits each. */
  price(params: ImageParams): Price {
    return { slots: params.n, credits: params.n * this.config.kinds.image.prices.image };
  }

  get watcher(): UpstreamWatcher | undefined {
    return this.providers[this.config.kinds.image.provider].watcher;
  }

  async step(task: ImageTask, ctx: StepContext): Promise<StepOutcome<MadeImages>> {
    const provider = this.providers[this.config.kinds.image.provider];
    let inputs: Promise<ImageInput[]> | undefined;
    const outcome = await provider.step(task, {
      ...ctx.marks,
      signal: ctx.signal,
      file: (prefix, ext) => ctx.files.file(prefix, ext),
      inputs: () => (inputs ??= Promise.all(task.params.inputs.map((input, index) => this.readInput(task, 'input', index, input)))),
      mask: async () => (task.params.mask && task.params.mask_facts ? this.readInput(task, 'mask', 0, task.params.mask_facts) : undefined),
      partial: async (index, image) => void (await this.media.putNow({ owner: task.owner, taskId: task.id, role: 'partial', index, body: image, contentType: 'image/png' }, ctx.marks.holder)),
    });
    if (outcome.kind !== 'done') return outcome;
    const images: FinishedImage[] = [];
    for (const [index, bytes] of outcome.result.images.entries()) {
      try {
        images.push(await finishImage(bytes, task.params, this.config.images));
      } catch (err) {
        if (err instanceof ImageRejected) return { kind: 'failed', reason: `the made image ${index} ${err.message}` };
        throw err;
      }
    }
    if (images.length === 0) return { kind: 'failed', reason: 'no image was made' };
    return { kind: 'done', result: { images, revisedPrompt: outcome.result.revisedPrompt } };
  }

  async store(task: ImageTask, output: MadeImages): Promise<Success<ImageResult>> {
    const stored = await this.media.putResult(
      task.attempts,
      output.images.map((image, index) => ({ owner: task.owner, taskId: task.id, role: 'image', index, body: image.body, contentType: image.contentType, width: image.width, height: image.height })),
    );
    return { result: output.revisedPrompt ? { revised_prompt: output.revisedPrompt } : {}, details: [mediaEndRows(stored)], discard: () => this.media.discardObjects(stored) };
  }

  /** Each task's record in its door's words (TaskDoors: a door that takes no callback, OpenAI's, reads as the image kind's fallback door). */
  notifications(tasks: ImageTask[], tx?: TaskTx): Promise<unknown[]> {
    return this.doors.records(tasks, tx);
  }

  /** An input image: the task's stored file, or the caller's URL fetched now; checked against the image bounds. */
  private async readInput(task: ImageTask, role: 'input' | 'mask', index: number, input: ImageInputParams): Promise<ImageInput> {
    let bytes: Buffer | null;
    if (input.url) {
      bytes = this.samples.resolve(input.url, task.baseUrl) ?? null;
      try {
        bytes ??= (await this.fetcher.fetchBytes('caller', input.url, INPUT_MAX_BYTES)).body;
      } catch (err) {
        if (err instanceof OutboundError) throw new TaskFailure(err.kind === 'too_large' ? 'the image at the URL is larger than 10 MB' : `could not fetch the image URL: ${err.message}`);
        throw err;
      }
    } else {
      const row = await this.media.findForTask(task.id, role, index);
      bytes = row ? await this.media.readBytes(row) : null;
      if (!bytes) throw new TaskFailure(`the ${role === 'mask' ? 'mask' : `input image ${index}`} is missing`);
    }
    try {
      // a caller's URL is read here first (decoded, as at a door's intake); a stored input was at its intake
      const header = input.url ? await decodedImageHeader(bytes, this.config.images) : readImageHeader(bytes, this.config.images);
      return { bytes, format: header.format, width: header.width, height: header.height };
    } catch (err) {
      if (err instanceof ImageRejected) throw new TaskFailure(`the ${role === 'mask' ? 'mask' : `image ${input.url ? 'at the URL' : index}`} ${err.message}`);
      throw err;
    }
  }
}
