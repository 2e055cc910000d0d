import { readFile } from 'node:fs/promises';
import { Inject, Injectable } from '@nestjs/common';
import { type Price, type StepContext, type StepOutcome, type Success, TaskFailure, type TaskKind, type TaskTx, type UpstreamWatcher } from '../../common/tasks/task-kind.js';
import { AppConfig, type ProviderName } from '../../infra/config/app-config.js';
import { OutboundError, SafeFetchService } from '../../infra/outbound/safe-fetch.service.js';
import { bytesOf, MediaFile } from '../../infra/storage/storage.js';
import type { WorkScope } from '../../infra/workdir/work-dir.service.js';
import { mediaEndRows } from '../media/media.repository.js';
import { MediaService } from '../media/media.service.js';
import { SamplesService } from '../samples/samples.service.js';
import { TaskDoors } from '../../doors/contracts/task-doors.js';
import { EXPAND_DEFINITION } from './expand.definition.js';
import { ExpandRepository } from './expand.repository.js';
import type { ExpandParams, ExpandTask } from './expand-task.js';
import { expandBoundsProblem, IMAGE_RULES, type ImageFacts, ImageRuleError, inspectImage } from './image-rules.js';
import { EXPAND_PROVIDERS, type ExpandProvider, type ExpandResultImage, type ExpandSource } from './providers/expand-provider.js';

/**
 * Image expand as a task kind: priced per image, run through the provider EXPAND_PROVIDER chooses (the
 * sandbox renders, a relay forwards to Kling), its success stores the result images (and watermarked
 * copies) as media; its notifications are its door's record (Kling's).
 */
@Injectable()
export class ExpandKind implements TaskKind<ExpandParams, Record<string, never>, ExpandResultImage[]> {
  static readonly definition = EXPAND_DEFINITION;
  readonly definition = EXPAND_DEFINITION;

  constructor(
    private readonly config: AppConfig,
    @Inject(EXPAND_PROVIDERS) private readonly providers: Record<ProviderName, ExpandProvider>,
    private readonly inputs: ExpandRepository,
    private readonly doors: TaskDoors,
    private readonly media: MediaService,
    private readonly fetcher: SafeFetchService,
    private readonly samples: SamplesService,
  ) {}

  /** An expand task holds one slot per image (Kling's rule) and costs PRICE_EXPAND_IMAGE each. */
  price(params: ExpandParams): Price {
    return { slots: params.n, credits: params.n * this.config.kinds.expand.prices.image };
  }

  /** The relay's, when EXPAND_PROVIDER is relay: the poller asks Kling about the tasks waiting on it. */
  get watcher(): UpstreamWatcher | undefined {
    return this.providers[this.config.kinds.expand.provider].watcher;
  }

  step(task: ExpandTask, ctx: StepContext): Promise<StepOutcome<ExpandResultImage[]>> {
    const provider = this.providers[this.config.kinds.expand.provider];
    return provider.step(task, { ...ctx.marks, file: (prefix, ext) => ctx.files.file(prefix, ext), source: () => this.loadSource(task, ctx.files), input: () => this.inputBytes(task, ctx.files) });
  }

  async store(task: ExpandTask, images: ExpandResultImage[]): Promise<Success<Record<string, never>>> {
    const stored = await this.media.putResult(
      task.attempts,
      images.flatMap((image, index) => {
        const common = { owner: task.owner, taskId: task.id, index, contentType: image.contentType, width: image.width, height: image.height };
        return [{ ...common, role: 'image', body: image.body }, ...(image.watermark ? [{ ...common, role: 'watermark', body: image.watermark }] : [])];
      }),
    );
    return { details: [mediaEndRows(stored)], discard: () => this.media.discardObjects(stored) };
  }

  /** Each task's record in its door's words (Kling's: expand's one door). */
  notifications(tasks: ExpandTask[], tx?: TaskTx): Promise<unknown[]> {
    return this.doors.records(tasks, tx);
  }

  /**
   * The input image, checked against the bounds (its size, the expanded size) before anything decodes it. Base64
   * was decoded and checked at submission, and its facts are in the parameters; it is copied into a work file
   * (the renderer reads it from there). A URL is fetched now and checked against the same rules.
   */
  private async loadSource(task: ExpandTask, files: WorkScope): Promise<ExpandSource> {
    const source = await this.readSource(task, files);
    const problem = this.boundsProblem(task.params, source.facts.width, source.facts.height);
    if (problem) throw new TaskFailure(`the image ${task.params.image_url ? 'at the URL ' : ''}breaks a rule: ${problem}`);
    return source;
  }

  /**
   * The image bounds (IMAGE_MAX_SIDE, IMAGE_MAX_PIXELS) and, when the sandbox renders, the expanded image's
   * (EXPAND_MAX_OUTPUT_PIXELS) for an input of `width` x `height` with the task's ratios: the rule broken, naming the fields; null within.
   * Checked at the door when the image came as Base64, and by the step before anything decodes the image.
   */
  boundsProblem(params: ExpandParams, width: number, height: number): string | null {
    // the expanded image's cap spares the sandbox's renderer; a relayed task's image is the upstream's to make
    const settings = this.config.kinds.expand;
    return expandBoundsProblem(params, width, height, this.config.images, settings.provider === 'sandbox' ? settings.options.maxOutputPixels : Number.POSITIVE_INFINITY);
  }

  private async readSource(task: ExpandTask, files: WorkScope): Promise<ExpandSource> {
    const { image_url: url, image_format: format, image_width: width, image_height: height } = task.params;
    if (!url) {
      const image = new MediaFile(files.file('input', 'img'));
      const size = await this.copyInput(task.id, image.path);
      if (size === null) throw new TaskFailure('the input image is missing');
      if ((format === 'png' || format === 'jpeg') && width && height) return { image, facts: { format, width, height, bytes: size } };
      return { image, facts: inspect(await readFile(image.path), false) };
    }
    let bytes = this.samples.resolve(url, task.baseUrl);
    try {
      bytes ??= (await this.fetcher.fetchBytes('caller', url, IMAGE_RULES.maxBytes)).body;
    } catch (err) {
      if (err instanceof OutboundError) {
        throw new TaskFailure(err.kind === 'too_large' ? 'image at the URL is larger than 10 MB' : `could not fetch the image URL: ${err.message}`);
      }
      throw err;
    }
    return { image: bytes, facts: inspect(bytes, true) };
  }

  /**
   * The submitted image's bytes, for a relay that sends them on: read straight from the row beside the task
   * (no work file) when inputs live in the database; otherwise as the renderer gets them.
   */
  private async inputBytes(task: ExpandTask, files: WorkScope): Promise<Buffer> {
    if (!task.params.image_url && !this.media.storesInputs) {
      const bytes = await this.inputs.readInput(task.id);
      if (bytes) return bytes;
    }
    return bytesOf((await this.loadSource(task, files)).image);
  }

  /**
   * The submitted image into `file`: from an object of the media store (s3), or from the bytes beside the
   * task in the database; its size, or null. The configured driver's place is read first; the other holds
   * inputs accepted before a driver change.
   */
  private async copyInput(taskId: string, file: string): Promise<number | null> {
    const fromDatabase = () => this.inputs.copyInputToFile(taskId, file);
    const fromStore = async () => {
      const object = await this.media.findForTask(taskId, 'input');
      return object ? this.media.copyToFile(object, file) : null;
    };
    const [first, second] = this.media.storesInputs ? [fromStore, fromDatabase] : [fromDatabase, fromStore];
    return (await first()) ?? second();
  }
}

function inspect(bytes: Buffer, fromUrl: boolean): ImageFacts {
  try {
    return inspectImage(bytes);
  } catch (err) {
    if (err instanceof ImageRuleError) throw new TaskFailure(`the image ${fromUrl ? 'at the URL ' : ''}breaks a rule: ${err.message}`);
    throw err;
  }
}
