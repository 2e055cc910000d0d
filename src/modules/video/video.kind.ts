import { readFile } from 'node:fs/promises';
import { Inject, Injectable, Logger } from '@nestjs/common';
import { type Price, type StepContext, type StepOutcome, type Success, TaskFailure, type TaskKind, type TaskTx, type UpstreamWatcher } from '../../common/tasks/task-kind.js';
import { TaskRepository } from '../../common/tasks/task.repository.js';
import { AppConfig, type ProviderName } from '../../infra/config/app-config.js';
import { FfmpegFailed, FfmpegTimedOut } from '../../infra/ffmpeg/ffmpeg.js';
import { MediaRefused } from '../../infra/ffmpeg/media-format.js';
import { fitFrame, fitsAlready } from '../../infra/images/frame-fit.js';
import { ImageRejected, readImageHeader } from '../../infra/images/image-bounds.js';
import { OutboundError, SafeFetchService } from '../../infra/outbound/safe-fetch.service.js';
import type { WorkScope } from '../../infra/workdir/work-dir.service.js';
import { IMAGE_RULES } from '../expand/image-rules.js';
import { mediaEndRows } from '../media/media.repository.js';
import { MediaService } from '../media/media.service.js';
import { SamplesService } from '../samples/samples.service.js';
import { lastFrame } from './providers/clip-renderer.js';
import { VIDEO_PROVIDERS, type VideoProvider, type VideoResult } from './providers/video-provider.js';
import { VIDEO_DEFINITION } from './video.definition.js';
import { durationOf, fieldOf, type InputImage, type KeyframePositionName, referenceRole, type VideoParams, type VideoTask, type VideoTaskResult } from './video-task.js';
import { TaskDoors } from '../../doors/contracts/task-doors.js';
import type { ModelDto } from './dto/model.dto.js';
import { VideoModels } from './video-models.js';

/**
 * Video generation as a task kind: priced per second of video, run through VIDEO_PROVIDER (the sandbox
 * renders an MP4 with ffmpeg, a relay forwards to Luma), its success stores the video and a thumbnail;
 * its notifications are the generation record GET gives.
 */
@Injectable()
export class VideoKind implements TaskKind<VideoParams, VideoTaskResult, VideoResult> {
  static readonly definition = VIDEO_DEFINITION;
  readonly definition = VIDEO_DEFINITION;
  private readonly logger = new Logger(VideoKind.name);

  constructor(
    private readonly config: AppConfig,
    @Inject(VIDEO_PROVIDERS) private readonly providers: Record<ProviderName, VideoProvider>,
    private readonly doors: TaskDoors,
    private readonly tasks: TaskRepository,
    private readonly media: MediaService,
    private readonly fetcher: SafeFetchService,
    private readonly samples: SamplesService,
    private readonly videoModels: VideoModels,
  ) {}

  /** `GET /models`' video entries. */
  models(): Promise<ModelDto[]> {
    return this.videoModels.entries();
  }

  /** One slot; PRICE_VIDEO_SECOND per second of `duration` (5 s, Luma's default, when not given). */
  price(params: VideoParams): Price {
    return { slots: 1, credits: durationOf(params) * this.config.kinds.video.prices.second };
  }

  /** The relay's, when VIDEO_PROVIDER is relay: the poller asks the upstream about the tasks waiting on it. */
  get watcher(): UpstreamWatcher | undefined {
    return this.providers[this.config.kinds.video.provider].watcher;
  }

  step(task: VideoTask, ctx: StepContext): Promise<StepOutcome<VideoResult>> {
    const provider = this.providers[this.config.kinds.video.provider];
    return provider.step(task, {
      ...ctx.marks,
      file: (prefix, ext) => ctx.files.file(prefix, ext),
      keyframeImage: (position) => this.keyframeImage(task, position, ctx.files),
      referenceImage: (index) => this.referenceImage(task, index, ctx.files),
      upstreamOf: async (id) => {
        const named = await this.tasks.findById(id);
        return named?.upstreamId ? { upstreamId: named.upstreamId, channelId: named.channelId } : undefined;
      },
      uploadUrl: async (role) => {
        const row = await this.media.findForTask(task.id, role);
        return row ? this.media.signedUrl(row, this.media.linkBase(task.baseUrl)) : undefined;
      },
      fieldName: (field) => this.doors.field(task, field),
      fittedFrame: async (fit, ratio, minSide) => {
        const source = await this.keyframeImage(task, 'frame0', ctx.files);
        if (!source) throw new TaskFailure('the first frame to fit is missing');
        const header = readImageHeader(source, this.config.images);
        if (fitsAlready(header.width, header.height, ratio, minSide)) return undefined;
        const fitted = await fitFrame(source, ratio, fit, this.config.images, minSide).catch((err: unknown) => {
          if (err instanceof ImageRejected) throw new TaskFailure(`${this.inputField(task, { role: 'frame0', image: task.params.firstFrame! })} ${err.message}`);
          throw err;
        });
        const row = await this.media.putNow({ owner: task.owner, taskId: task.id, role: FITTED_ROLE, index: 0, body: fitted.bytes, contentType: 'image/jpeg', width: fitted.width, height: fitted.height }, ctx.marks.holder);
        return { url: this.media.signedUrl(row, this.media.linkBase(task.baseUrl)), bytes: fitted.bytes };
      },
    });
  }

  async store(task: VideoTask, result: VideoResult): Promise<Success<VideoTaskResult>> {
    const common = { owner: task.owner, taskId: task.id, index: 0, width: result.width || null, height: result.height || null };
    const stored = await this.media.putResult(task.attempts, [
      { ...common, role: 'video', body: result.video, contentType: 'video/mp4' },
      ...(result.thumbnail.length > 0 ? [{ ...common, role: 'thumbnail', body: result.thumbnail, contentType: result.thumbnailType }] : []),
    ]);
    return { result: result.model ? { model: result.model } : {}, details: [mediaEndRows(stored)], discard: () => this.media.discardObjects(stored) };
  }

  /** Each in the vocabulary of the door that made it (TaskDoors: the door it stores, else the kind's fallback door, Luma's). */
  notifications(tasks: VideoTask[], tx?: TaskTx): Promise<unknown[]> {
    return this.doors.records(tasks, tx);
  }

  /**
   * The keyframe as an image: fetched from its URL, read from the upload stored with the task, or the last
   * frame of the generation it names; in each case a PNG, JPEG or WebP file within the image bounds
   * (IMAGE_MAX_SIDE, IMAGE_MAX_PIXELS), read from its header before anything decodes it, or the task fails
   * with a reason naming the door's field.
   */
  private keyframeImage(task: VideoTask, position: KeyframePositionName, files: WorkScope): Promise<Buffer | undefined> {
    const image = position === 'frame0' ? task.params.firstFrame : task.params.lastFrame;
    return image ? this.inputImage(task, { role: position, image }, files) : Promise.resolve(undefined);
  }

  /** The i-th reference image, under the same rules as a keyframe. */
  private referenceImage(task: VideoTask, index: number, files: WorkScope): Promise<Buffer | undefined> {
    const image = task.params.referenceImages?.[index];
    return image ? this.inputImage(task, { role: referenceRole(index), image }, files) : Promise.resolve(undefined);
  }

  /** The field an input image came in, as the task's door names it (Luma's keyframes.frame0.url, Kling's image_tail, OpenAI's input_reference). */
  private inputField(task: VideoTask, { role, image }: InputImage): string {
    const field = this.doors.field(task, fieldOf(role));
    return image.type === 'generation' ? `the last frame of generation ${image.generationId} (${field})` : field;
  }

  private async inputImage(task: VideoTask, frame: InputImage, files: WorkScope): Promise<Buffer> {
    const bytes = await this.keyframeBytes(task, frame, files);
    try {
      readImageHeader(bytes, this.config.images);
    } catch (err) {
      if (err instanceof ImageRejected) throw new TaskFailure(`${this.inputField(task, frame)} ${err.message}`);
      throw err;
    }
    return bytes;
  }

  private async keyframeBytes(task: VideoTask, input: InputImage, files: WorkScope): Promise<Buffer> {
    const { role: position, image: frame } = input;
    if (frame.type === 'image' && frame.upload) {
      const row = await this.media.findForTask(task.id, position);
      const file = files.file(position, 'img');
      if (!row || (await this.media.copyToFile(row, file)) === null) throw new TaskFailure(`the uploaded ${position === 'frame0' ? 'first frame' : position === 'frame1' ? 'last frame' : 'reference image'} is missing`);
      return readFile(file);
    }
    if (frame.type === 'generation') {
      const source = await this.tasks.findById(frame.generationId);
      const video = source?.state === 'succeeded' ? (await this.media.listForTasks([source.id])).find((m) => m.role === 'video') : undefined;
      // the stored video is copied into a work file as a stream, never held whole, and ffmpeg reads it there
      const file = files.file('source', 'mp4');
      if (!video || (await this.media.copyToFile(video, file)) === null) {
        throw new TaskFailure(`${this.doors.field(task, fieldOf(position))} names generation ${frame.generationId}, which has no completed video to continue from`);
      }
      return lastFrame(file).catch((err: unknown) => {
        if (!(err instanceof MediaRefused || err instanceof FfmpegFailed || err instanceof FfmpegTimedOut)) throw err;
        this.logger.warn({ msg: "a generation's last frame could not be read", task_id: task.id, err: String(err), ...(err instanceof FfmpegFailed ? { ffmpeg: err.detail } : {}) });
        throw new TaskFailure(`${this.doors.field(task, fieldOf(position))}: the video of generation ${frame.generationId} could not be read (its last frame does not decode)`);
      });
    }
    const field = this.inputField(task, input);
    const sample = this.samples.resolve(frame.url, task.baseUrl);
    if (sample) return sample;
    try {
      return (await this.fetcher.fetchBytes('caller', frame.url, IMAGE_RULES.maxBytes)).body;
    } catch (err) {
      if (err instanceof OutboundError) throw new TaskFailure(`could not fetch ${field}: ${err.message}`);
      throw err;
    }
  }
}

/** The media role of the first frame as fitted to the asked ratio (the image sent in its stead). */
const FITTED_ROLE = 'fit0';
