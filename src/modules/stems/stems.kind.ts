import { randomUUID } from 'node:crypto';
import { Inject, Injectable } from '@nestjs/common';
import type { Price, StepContext, StepOutcome, Success, TaskKind, TaskTx, UpstreamWatcher } from '../../common/tasks/task-kind.js';
import { TaskDoors } from '../../doors/contracts/task-doors.js';
import { AppConfig, type ProviderName } from '../../infra/config/app-config.js';
import { AUDIO_FORMATS } from '../../infra/ffmpeg/media-format.js';
import { CLIP_AUDIO_ROLE } from '../clips/clip-media.js';
import { ClipsRepository } from '../clips/clips.repository.js';
import { mediaEndRows } from '../media/media.repository.js';
import { MediaService } from '../media/media.service.js';
import type { StemsModelDto } from './dto/stems-model.dto.js';
import { STEMS_PROVIDERS, type StemsProvider, type StemTake } from './providers/stems-provider.js';
import { STEMS_DEFINITION } from './stems.definition.js';
import { StemsModels } from './stems-offer.js';
import type { StemsParams, StemsResult, StemsTask } from './stems-task.js';

/**
 * Stems as a task kind: one slot and PRICE_STEMS, the clip split through STEMS_PROVIDER (the sandbox cuts it into
 * bands offline, a relay sends it to a vendor that separates stems); its success keeps every stem as a clip of
 * its own (type `stem`, titled by the stem's name; the task's parent is the clip it was made from), so a stem
 * is fetched, continued, joined or downloaded as WAV as any clip is. Its notifications are its door's record.
 */
@Injectable()
export class StemsKind implements TaskKind<StemsParams, StemsResult, StemTake[]> {
  static readonly definition = STEMS_DEFINITION;
  readonly definition = STEMS_DEFINITION;

  constructor(
    private readonly config: AppConfig,
    @Inject(STEMS_PROVIDERS) private readonly providers: Record<ProviderName, StemsProvider>,
    private readonly doors: TaskDoors,
    private readonly media: MediaService,
    private readonly stemsModels: StemsModels,
  ) {}

  price(): Price {
    return { slots: 1, credits: this.config.kinds.stems.prices.task };
  }

  get watcher(): UpstreamWatcher | undefined {
    return this.providers[this.config.kinds.stems.provider].watcher;
  }

  step(task: StemsTask, ctx: StepContext): Promise<StepOutcome<StemTake[]>> {
    return this.providers[this.config.kinds.stems.provider].step(task, { ...ctx.marks, signal: ctx.signal, file: (prefix, ext) => ctx.files.file(prefix, ext) });
  }

  async store(task: StemsTask, stems: StemTake[]): Promise<Success<StemsResult>> {
    const common = { owner: task.owner, taskId: task.id };
    const stored = await this.media.putResult(task.attempts, stems.map((stem, index) => ({ ...common, role: CLIP_AUDIO_ROLE, index, body: stem.audio, contentType: AUDIO_FORMATS[stem.format].contentType })));
    const kept = stems.map((stem) => ({ clip_id: randomUUID(), name: stem.name, duration_s: stem.durationS }));
    const clips = ClipsRepository.endRows(kept.map((stem, idx) => ({ id: stem.clip_id, taskId: task.id, owner: task.owner, idx, type: 'stem' as const, duration: stem.duration_s, title: stem.name })));
    return { result: { stems: kept }, details: [mediaEndRows(stored), clips], discard: () => this.media.discardObjects(stored) };
  }

  /** Each task's record in its door's words (the Suno-style door's). */
  notifications(tasks: StemsTask[], tx?: TaskTx): Promise<unknown[]> {
    return this.doors.records(tasks, tx);
  }

  models(): Promise<StemsModelDto[]> {
    return this.stemsModels.entries();
  }
}
