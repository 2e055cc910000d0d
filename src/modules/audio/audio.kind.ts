import { Inject, Injectable } from '@nestjs/common';
import type { Price, StepContext, StepOutcome, Success, TaskKind, TaskTx, UpstreamWatcher } from '../../common/tasks/task-kind.js';
import { AppConfig, type ProviderName } from '../../infra/config/app-config.js';
import { CLIP_AUDIO_ROLE } from '../clips/clip-media.js';
import { TaskDoors } from '../../doors/contracts/task-doors.js';
import { ClipsRepository } from '../clips/clips.repository.js';
import { mediaEndRows } from '../media/media.repository.js';
import { MediaService } from '../media/media.service.js';
import { AUDIO_DEFINITION } from './audio.definition.js';
import type { AudioParams, AudioResult, AudioTask } from './audio-task.js';
import { AUDIO_PROVIDERS, type AudioFacts, type AudioProvider } from './providers/audio-provider.js';

/**
 * Audio clip upload as a task kind: one slot and PRICE_AUDIO_UPLOAD, run through AUDIO_PROVIDER (the
 * sandbox fetches and checks the file, a relay registers it with an aggregator); its success keeps the
 * clip (for later music to start from) and stores what the file turned out to be.
 */
@Injectable()
export class AudioKind implements TaskKind<AudioParams, AudioResult, AudioFacts> {
  static readonly definition = AUDIO_DEFINITION;
  readonly definition = AUDIO_DEFINITION;

  constructor(
    private readonly config: AppConfig,
    @Inject(AUDIO_PROVIDERS) private readonly providers: Record<ProviderName, AudioProvider>,
    private readonly doors: TaskDoors,
    private readonly media: MediaService,
  ) {}

  price(): Price {
    return { slots: 1, credits: this.config.kinds.audio.prices.upload };
  }

  /** The relay's, when AUDIO_PROVIDER is relay: the poller asks the upstream about the tasks waiting on it. */
  get watcher(): UpstreamWatcher | undefined {
    return this.providers[this.config.kinds.audio.provider].watcher;
  }

  step(task: AudioTask, ctx: StepContext): Promise<StepOutcome<AudioFacts>> {
    return this.providers[this.config.kinds.audio.provider].step(task, { ...ctx.marks, file: (prefix, ext) => ctx.files.file(prefix, ext) });
  }

  async store(task: AudioTask, facts: AudioFacts): Promise<Success<AudioResult>> {
    const stored = facts.clip ? await this.media.putResult(task.attempts, [{ owner: task.owner, taskId: task.id, role: CLIP_AUDIO_ROLE, index: 0, body: facts.clip.body, contentType: facts.clip.contentType }]) : [];
    const clip = ClipsRepository.endRows([{ id: task.id, taskId: task.id, owner: task.owner, idx: 0, type: 'upload', duration: facts.duration, upstreamId: task.upstreamId }]);
    return {
      result: { format: facts.format, duration: facts.duration, size_bytes: facts.sizeBytes, sha256: facts.sha256 },
      details: [mediaEndRows(stored), clip],
      discard: () => this.media.discardObjects(stored),
    };
  }

  /** Each upload's record in its door's words (the Suno-style door's). */
  notifications(tasks: AudioTask[], tx?: TaskTx): Promise<unknown[]> {
    return this.doors.records(tasks, tx);
  }
}
