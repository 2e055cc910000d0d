import { Inject, Injectable, type OnApplicationBootstrap, type OnModuleInit } from '@nestjs/common';
import { TaskRunner } from '../../common/tasks/task-runner.js';
import { TaskSweeper } from '../../common/tasks/task-sweeper.js';
import { TaskTableSweep } from '../../common/tasks/task-table-sweep.js';
import { AppConfig, type ProviderName } from '../../infra/config/app-config.js';
import { NEW_TASK_PRIORITY, RESUME_PRIORITY } from '../../infra/queue/jobs.js';
import { type JobResult, QueueService } from '../../infra/queue/queue.service.js';
import { WorkDirService } from '../../infra/workdir/work-dir.service.js';
import { LimitsService } from '../limits/limits.service.js';
import { MediaService } from '../media/media.service.js';
import { AudioRepository, type AudioUploadRow } from './audio.repository.js';
import { AUDIO_PROVIDERS, type AudioFacts, type AudioProvider } from './providers/audio-provider.js';

/** Runs `audio.run` jobs under a lease through AUDIO_PROVIDER: pending → processing → ready | failed. */
@Injectable()
export class AudioProcessor implements OnModuleInit, OnApplicationBootstrap {
  private sweep!: TaskTableSweep<'audio.run'>;
  private get timeoutReason(): string {
    return `timed out: the upload did not finish within ${this.config.taskTimeoutS.audio} s`;
  }

  constructor(
    private readonly config: AppConfig,
    private readonly queue: QueueService,
    private readonly runner: TaskRunner,
    private readonly sweeper: TaskSweeper,
    private readonly uploads: AudioRepository,
    @Inject(AUDIO_PROVIDERS) private readonly providers: Record<ProviderName, AudioProvider>,
    private readonly limits: LimitsService,
    private readonly media: MediaService,
    private readonly workDir: WorkDirService,
  ) {}

  /** A final state change gives back the upload's slot (and its credits if it failed) in the same transaction. */
  onModuleInit(): void {
    this.uploads.onChange = this.limits.onStatusChange('audio');
    this.uploads.states.endSql = this.limits.endSql('audio');
  }

  async onApplicationBootstrap(): Promise<void> {
    this.sweep = new TaskTableSweep({
      kind: 'audio',
      states: this.uploads.states,
      queue: this.queue,
      job: 'audio.run',
      payload: (uploadId) => ({ uploadId }),
      leaseS: this.config.workerLeaseS,
      timeoutReason: () => this.timeoutReason,
      onChange: () => this.uploads.onChange,
    });
    this.sweeper.register(this.sweep);
    this.media.registerRetention((cutoff) => this.uploads.states.markMediaExpired(cutoff));
    if (this.config.runsWorkers) {
      await this.queue.work('audio.run', this.config.workerConcurrency, ({ uploadId }, job) => this.run(uploadId, job.priority));
    }
  }

  /** One step of the task; a job's priority is kept when the task must wait for the upstream cap. */
  run(uploadId: string, priority = NEW_TASK_PRIORITY): Promise<JobResult> {
    const provider = this.providers[this.config.providers.audio];
    return this.workDir.inScope((files) => this.runner.run<AudioUploadRow, AudioFacts>(uploadId, {
      lease: this.uploads.lease,
      labels: (task) => ({ owner: task.owner, operation: 'audio' }),
      deadlineOf: (u) => u.deadlineAt,
      timeoutReason: this.timeoutReason,
      attemptsOf: (u) => u.attempts,
      step: (u) => provider.step(u, { ...this.uploads.states.submitMarks(u.id, this.runner.worker), file: (prefix, ext) => files.file(prefix, ext) }),
      complete: (u, worker, facts) => this.complete(u, worker, facts),
      next: async (seconds) => void (await this.queue.send('audio.run', { uploadId }, { startAfterSeconds: seconds, priority: RESUME_PRIORITY })),
      defer: () => this.uploads.states.defer(uploadId, this.sweep.enqueue, priority),
    }));
  }

  /** Keeps the clip (so later music can start from it), then records its facts; a loser's copy is deleted. */
  private async complete(upload: AudioUploadRow, worker: string, facts: AudioFacts): Promise<boolean> {
    const stored = facts.clip ? await this.media.putResult([{ owner: upload.owner, taskId: upload.id, role: 'clip', index: 0, body: facts.clip.body, contentType: facts.clip.contentType }]) : [];
    if (await this.uploads.markReady(upload.id, worker, facts, stored)) return true;
    if (stored.length > 0 && (await this.uploads.findById(upload.id))?.status !== 'ready') await this.media.discardObjects(stored);
    return false;
  }
}
