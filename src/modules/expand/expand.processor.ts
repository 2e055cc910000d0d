import { readFile } from 'node:fs/promises';
import { Inject, Injectable, Logger, type OnApplicationBootstrap, type OnModuleInit } from '@nestjs/common';
import { type StepOutcome, TaskFailure, TaskRunner } from '../../common/tasks/task-runner.js';
import { TaskSweeper } from '../../common/tasks/task-sweeper.js';
import { TaskTableSweep } from '../../common/tasks/task-table-sweep.js';
import { AppConfig, type ProviderName } from '../../infra/config/app-config.js';
import { OutboundError, SafeFetchService } from '../../infra/outbound/safe-fetch.service.js';
import { allInTransaction } from '../../infra/prisma/task-table.js';
import { NEW_TASK_PRIORITY, RESUME_PRIORITY } from '../../infra/queue/jobs.js';
import { type JobResult, QueueService } from '../../infra/queue/queue.service.js';
import { MediaFile } from '../../infra/storage/storage.js';
import { WorkDirService, type WorkScope } from '../../infra/workdir/work-dir.service.js';
import { CallbacksService } from '../callbacks/callbacks.service.js';
import { LimitsService } from '../limits/limits.service.js';
import { MediaService } from '../media/media.service.js';
import { SamplesService } from '../samples/samples.service.js';
import { ExpandService } from './expand.service.js';
import { type ExpandTaskRow, ExpandRepository } from './expand.repository.js';
import { IMAGE_RULES, type ImageFacts, ImageRuleError, inspectImage } from './image-rules.js';
import { EXPAND_PROVIDERS, type ExpandContext, type ExpandProvider, type ExpandResultImage, type ExpandSource } from './providers/expand-provider.js';

/**
 * Runs expand tasks: `expand.run` jobs, one step at a time under a lease (TaskRunner), through the
 * provider chosen by EXPAND_PROVIDER; stores the result images and ends the task succeed or failed.
 */
@Injectable()
export class ExpandProcessor implements OnModuleInit, OnApplicationBootstrap {
  private sweep!: TaskTableSweep<'expand.run'>;
  private get timeoutReason(): string {
    return `timed out: the task did not finish within ${this.config.taskTimeoutS.expand} s`;
  }
  private readonly logger = new Logger(ExpandProcessor.name);

  constructor(
    private readonly config: AppConfig,
    private readonly queue: QueueService,
    private readonly runner: TaskRunner,
    private readonly sweeper: TaskSweeper,
    private readonly tasks: ExpandRepository,
    private readonly media: MediaService,
    private readonly fetcher: SafeFetchService,
    @Inject(EXPAND_PROVIDERS) private readonly providers: Record<ProviderName, ExpandProvider>,
    private readonly expand: ExpandService,
    private readonly callbacks: CallbacksService,
    private readonly samples: SamplesService,
    private readonly limits: LimitsService,
    private readonly workDir: WorkDirService,
  ) {}

  /** Every status change writes its notification (callback_url), and a final one gives back slots (and credits of a failure), in the same transaction (or statement, see TaskTable.end). */
  onModuleInit(): void {
    this.tasks.onChange = allInTransaction(this.callbacks.onStatusChange('expand', (tx, ids) => this.expand.callbackSubjects(tx, ids)), this.limits.onStatusChange('expand'));
    this.tasks.states.endSql = this.limits.endSql('expand');
  }

  async onApplicationBootstrap(): Promise<void> {
    this.sweep = new TaskTableSweep({
      kind: 'expand',
      states: this.tasks.states,
      queue: this.queue,
      job: 'expand.run',
      payload: (taskId) => ({ taskId }),
      leaseS: this.config.workerLeaseS,
      timeoutReason: () => this.timeoutReason,
      onChange: () => this.tasks.onChange,
    });
    this.sweeper.register(this.sweep);
    this.media.registerRetention((cutoff) => this.tasks.states.markMediaExpired(cutoff));
    if (this.config.runsWorkers) {
      await this.queue.work('expand.run', this.config.workerConcurrency, ({ taskId }, job) => this.run(taskId, job.priority));
    }
  }

  /** One step of the task; a job's priority is kept when the task must wait for the upstream cap. */
  run(taskId: string, priority = NEW_TASK_PRIORITY): Promise<JobResult> {
    const provider = this.providers[this.config.providers.expand];
    return this.workDir.inScope((files) => this.runner.run<ExpandTaskRow, ExpandResultImage[]>(taskId, {
      lease: this.tasks.lease,
      labels: (task) => ({ owner: task.owner, operation: 'expand' }),
      deadlineOf: (task) => task.deadlineAt,
      timeoutReason: this.timeoutReason,
      attemptsOf: (task) => task.attempts,
      step: (task): Promise<StepOutcome<ExpandResultImage[]>> => provider.step(task, this.contextFor(task, files)),
      complete: (task, worker, images) => this.complete(task, worker, images),
      next: async (seconds) => void (await this.queue.send('expand.run', { taskId }, { startAfterSeconds: seconds, priority: RESUME_PRIORITY })),
      defer: () => this.tasks.states.defer(taskId, this.sweep.enqueue, priority),
    }));
  }

  private contextFor(task: ExpandTaskRow, files: WorkScope): ExpandContext {
    return {
      source: () => this.loadSource(task, files),
      file: (prefix, ext) => files.file(prefix, ext),
      ...this.tasks.states.submitMarks(task.id, this.runner.worker),
    };
  }

  /**
   * The input image. Base64 was decoded and checked at submission, and its facts are on the row; it is
   * copied into a work file (the renderer reads it from there; no buffer of it outlives the copy's chunks).
   * A URL is fetched now and checked against the same rules.
   */
  private async loadSource(task: ExpandTaskRow, files: WorkScope): Promise<ExpandSource> {
    if (!task.imageUrl) {
      const image = new MediaFile(files.file('input', 'img'));
      const size = await this.copyInput(task.id, image.path);
      if (size === null) throw new TaskFailure('the input image is missing');
      const { imageFormat: format, imageWidth: width, imageHeight: height } = task;
      if ((format === 'png' || format === 'jpeg') && width && height) return { image, facts: { format, width, height, bytes: size } };
      return { image, facts: await this.inspect(await readFile(image.path), task) };
    }
    let bytes = this.samples.resolve(task.imageUrl, task.baseUrl);
    try {
      bytes ??= (await this.fetcher.fetchBytes(task.imageUrl, IMAGE_RULES.maxBytes)).body;
    } catch (err) {
      if (err instanceof OutboundError) {
        throw new TaskFailure(err.kind === 'too_large' ? 'image at the URL is larger than 10 MB' : `could not fetch the image URL: ${err.message}`);
      }
      throw err;
    }
    return { image: bytes, facts: await this.inspect(bytes, task) };
  }

  /**
   * The submitted image into `file`: from an object of the media store (s3), or from the bytes beside the
   * task in the database; its size, or null. The configured driver's place is read first; the other holds
   * inputs accepted before a driver change.
   */
  private async copyInput(taskId: string, file: string): Promise<number | null> {
    const fromDatabase = () => this.tasks.copyInputToFile(taskId, file);
    const fromStore = async () => {
      const object = await this.media.findForTask(taskId, 'input');
      return object ? this.media.copyToFile(object, file) : null;
    };
    const [first, second] = this.media.storesInputs ? [fromStore, fromDatabase] : [fromDatabase, fromStore];
    return (await first()) ?? second();
  }

  private async inspect(bytes: Buffer, task: ExpandTaskRow): Promise<ImageFacts> {
    try {
      return inspectImage(bytes);
    } catch (err) {
      if (err instanceof ImageRuleError) throw new TaskFailure(`the image ${task.imageUrl ? 'at the URL ' : ''}breaks a rule: ${err.message}`);
      throw err;
    }
  }

  private async complete(task: ExpandTaskRow, worker: string, images: ExpandResultImage[]): Promise<boolean> {
    const stored = await this.media.putResult(
      images.flatMap((image, index) => {
        const common = { owner: task.owner, taskId: task.id, index, contentType: image.contentType, width: image.width, height: image.height };
        return [{ ...common, role: 'image' as const, body: image.body }, ...(image.watermark ? [{ ...common, role: 'watermark' as const, body: image.watermark }] : [])];
      }),
    );
    if (await this.tasks.markSucceeded(task.id, worker, stored)) {
      this.logger.log({ msg: 'expand task succeeded', task_id: task.id, images: images.length });
      return true;
    }
    // Someone else ended the task first (the deadline, or another worker): keep only a winner's files.
    if ((await this.tasks.findById(task.id))?.status !== 'succeed') await this.media.discardObjects(stored);
    return false;
  }
}
