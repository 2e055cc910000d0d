import { Inject, Injectable, type OnApplicationBootstrap } from '@nestjs/common';
import { TaskRunner } from '../../common/tasks/task-runner.js';
import { TaskSweeper } from '../../common/tasks/task-sweeper.js';
import { TaskTableSweep } from '../../common/tasks/task-table-sweep.js';
import { AppConfig, type ProviderName } from '../../infra/config/app-config.js';
import { QueueService } from '../../infra/queue/queue.service.js';
import { AudioRepository, type AudioUploadRow } from './audio.repository.js';
import { AUDIO_PROVIDERS, type AudioFacts, type AudioProvider } from './providers/audio-provider.js';

/** Runs `audio.run` jobs under a lease through AUDIO_PROVIDER: pending → processing → ready | failed. */
@Injectable()
export class AudioProcessor implements OnApplicationBootstrap {
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
  ) {}

  async onApplicationBootstrap(): Promise<void> {
    this.sweeper.register(
      new TaskTableSweep({
        kind: 'audio',
        states: this.uploads.states,
        queue: this.queue,
        job: 'audio.run',
        payload: (uploadId) => ({ uploadId }),
        leaseS: this.config.workerLeaseS,
        timeoutReason: () => this.timeoutReason,
        onChange: () => this.uploads.onChange,
      }),
    );
    if (this.config.runsWorkers) {
      await this.queue.work('audio.run', this.config.workerConcurrency, ({ uploadId }) => this.run(uploadId));
    }
  }

  run(uploadId: string): Promise<void> {
    const provider = this.providers[this.config.providers.audio];
    return this.runner.run<AudioUploadRow, AudioFacts>(uploadId, {
      lease: this.uploads.lease,
      deadlineOf: (u) => u.deadlineAt,
      timeoutReason: this.timeoutReason,
      attemptsOf: (u) => u.attempts,
      step: (u) =>
        provider.step(u, {
          markSubmitting: () => this.uploads.states.markSubmitStarted(u.id, this.runner.worker),
          saveUpstreamId: (upstreamId) => this.uploads.states.saveUpstreamId(u.id, this.runner.worker, upstreamId),
        }),
      complete: (u, worker, facts) => this.uploads.markReady(u.id, worker, facts),
      next: async (seconds) => void (await this.queue.send('audio.run', { uploadId }, { startAfterSeconds: seconds })),
    });
  }
}
