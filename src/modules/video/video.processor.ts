import { Inject, Injectable, Logger, type OnApplicationBootstrap, type OnModuleInit } from '@nestjs/common';
import sharp from 'sharp';
import { TaskFailure, TaskRunner } from '../../common/tasks/task-runner.js';
import { TaskSweeper } from '../../common/tasks/task-sweeper.js';
import { TaskTableSweep } from '../../common/tasks/task-table-sweep.js';
import { AppConfig, type ProviderName } from '../../infra/config/app-config.js';
import { OutboundError, SafeFetchService } from '../../infra/outbound/safe-fetch.service.js';
import { allInTransaction } from '../../infra/prisma/task-table.js';
import { NEW_TASK_PRIORITY, RESUME_PRIORITY } from '../../infra/queue/jobs.js';
import { type JobResult, QueueService } from '../../infra/queue/queue.service.js';
import { WorkDirService, type WorkScope } from '../../infra/workdir/work-dir.service.js';
import { IMAGE_RULES } from '../expand/image-rules.js';
import { CallbacksService } from '../callbacks/callbacks.service.js';
import { LimitsService } from '../limits/limits.service.js';
import { MediaService } from '../media/media.service.js';
import { SamplesService } from '../samples/samples.service.js';
import { VideoService } from './video.service.js';
import { lastFrame } from './providers/clip-renderer.js';
import { type KeyframePositionName, VIDEO_PROVIDERS, type VideoContext, type VideoProvider, type VideoResult } from './providers/video-provider.js';
import { type GenerationRow, VideoRepository } from './video.repository.js';

/** Runs `video.run` jobs under a lease through VIDEO_PROVIDER; stores the MP4 and its thumbnail. */
@Injectable()
export class VideoProcessor implements OnModuleInit, OnApplicationBootstrap {
  private sweep!: TaskTableSweep<'video.run'>;
  private get timeoutReason(): string {
    return `timed out: the generation did not finish within ${this.config.taskTimeoutS.video} s`;
  }
  private readonly logger = new Logger(VideoProcessor.name);

  constructor(
    private readonly config: AppConfig,
    private readonly queue: QueueService,
    private readonly runner: TaskRunner,
    private readonly sweeper: TaskSweeper,
    private readonly generations: VideoRepository,
    private readonly media: MediaService,
    private readonly fetcher: SafeFetchService,
    @Inject(VIDEO_PROVIDERS) private readonly providers: Record<ProviderName, VideoProvider>,
    private readonly video: VideoService,
    private readonly callbacks: CallbacksService,
    private readonly workDir: WorkDirService,
    private readonly samples: SamplesService,
    private readonly limits: LimitsService,
  ) {}

  /** Every state change writes its notification (callback_url), and a final one gives back slots (and credits of a failure), in the same transaction. */
  onModuleInit(): void {
    this.generations.onChange = allInTransaction(this.callbacks.onStatusChange('video', (tx, ids) => this.video.callbackSubjects(tx, ids)), this.limits.onStatusChange('video'));
    this.generations.states.endSql = this.limits.endSql('video');
  }

  async onApplicationBootstrap(): Promise<void> {
    this.sweep = new TaskTableSweep({
      kind: 'video',
      states: this.generations.states,
      queue: this.queue,
      job: 'video.run',
      payload: (generationId) => ({ generationId }),
      leaseS: this.config.workerLeaseS,
      timeoutReason: () => this.timeoutReason,
      onChange: () => this.generations.onChange,
    });
    this.sweeper.register(this.sweep);
    this.media.registerRetention((cutoff) => this.generations.states.markMediaExpired(cutoff));
    if (this.config.runsWorkers) {
      await this.queue.work('video.run', this.config.workerConcurrency, ({ generationId }, job) => this.run(generationId, job.priority));
    }
  }

  /** One step of the task; a job's priority is kept when the task must wait for the upstream cap. */
  run(generationId: string, priority = NEW_TASK_PRIORITY): Promise<JobResult> {
    const provider = this.providers[this.config.providers.video];
    return this.workDir.inScope((files) => this.runner.run<GenerationRow, VideoResult>(generationId, {
      lease: this.generations.lease,
      labels: (task) => ({ owner: task.owner, operation: 'video' }),
      deadlineOf: (g) => g.deadlineAt,
      timeoutReason: this.timeoutReason,
      attemptsOf: (g) => g.attempts,
      step: (g) => provider.step(g, this.contextFor(g, files)),
      complete: (g, worker, result) => this.complete(g, worker, result),
      next: async (seconds) => void (await this.queue.send('video.run', { generationId }, { startAfterSeconds: seconds, priority: RESUME_PRIORITY })),
      defer: () => this.generations.states.defer(generationId, this.sweep.enqueue, priority),
    }));
  }

  private contextFor(generation: GenerationRow, files: WorkScope): VideoContext {
    return {
      keyframeImage: (position) => this.keyframeImage(generation, position, files),
      file: (prefix, ext) => files.file(prefix, ext),
      upstreamIdOf: async (id) => (await this.generations.findById(id))?.upstreamId ?? undefined,
      ...this.generations.states.submitMarks(generation.id, this.runner.worker),
    };
  }

  private async keyframeImage(generation: GenerationRow, position: KeyframePositionName, files: WorkScope): Promise<Buffer | undefined> {
    const frame = generation.keyframes.find((k) => k.position === position);
    if (!frame) return undefined;
    if (frame.kind === 'generation') {
      const source = await this.generations.findById(frame.sourceGenerationId!);
      const video = source?.state === 'completed' ? (await this.media.listForTasks([source.id])).find((m) => m.role === 'video') : undefined;
      // the stored video is copied into a work file as a stream, never held whole, and ffmpeg reads it there
      const file = files.file('source', 'mp4');
      if (!video || (await this.media.copyToFile(video, file)) === null) {
        throw new TaskFailure(`keyframes.${position} names generation ${frame.sourceGenerationId}, which has no completed video to continue from`);
      }
      return lastFrame(file);
    }
    let bytes = this.samples.resolve(frame.url!, generation.baseUrl);
    try {
      bytes ??= (await this.fetcher.fetchBytes(frame.url!, IMAGE_RULES.maxBytes)).body;
    } catch (err) {
      if (err instanceof OutboundError) throw new TaskFailure(`could not fetch keyframes.${position}.url: ${err.message}`);
      throw err;
    }
    const meta = await sharp(bytes).metadata().catch(() => null);
    if (!meta?.width || !meta.height) throw new TaskFailure(`keyframes.${position}.url is not an image (its bytes are not a format we can read)`);
    return bytes;
  }

  private async complete(generation: GenerationRow, worker: string, result: VideoResult): Promise<boolean> {
    const common = { owner: generation.owner, taskId: generation.id, index: 0, width: result.width || null, height: result.height || null };
    const stored = await this.media.putResult([
      { ...common, role: 'video', body: result.video, contentType: 'video/mp4' },
      ...(result.thumbnail.length > 0 ? [{ ...common, role: 'thumbnail' as const, body: result.thumbnail, contentType: result.thumbnailType }] : []),
    ]);
    if (await this.generations.markCompleted(generation.id, worker, stored)) {
      this.logger.log({ msg: 'video generation completed', generation_id: generation.id, bytes: stored[0].sizeBytes });
      return true;
    }
    if ((await this.generations.findById(generation.id))?.state !== 'completed') await this.media.discardObjects(stored);
    return false;
  }
}
