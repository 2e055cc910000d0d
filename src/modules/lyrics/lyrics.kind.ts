import { Inject, Injectable } from '@nestjs/common';
import type { Price, StepContext, StepOutcome, Success, TaskKind, TaskTx, UpstreamWatcher } from '../../common/tasks/task-kind.js';
import { TaskDoors } from '../../doors/contracts/task-doors.js';
import { AppConfig, type ProviderName } from '../../infra/config/app-config.js';
import type { LyricsText } from '../../vendors/contracts/lyrics-vendor.js';
import type { LyricsModelDto } from './dto/lyrics-model.dto.js';
import { LYRICS_DEFINITION } from './lyrics.definition.js';
import { LyricsModels } from './lyrics-models.js';
import { type LyricsParams, type LyricsResult, type LyricsTask, versionsOf } from './lyrics-task.js';
import { LYRICS_PROVIDERS, type LyricsProvider } from './providers/lyrics-provider.js';

/**
 * Lyrics generation as a task kind: one slot and PRICE_LYRICS per task, written by the provider LYRICS_PROVIDER
 * chooses (the sandbox from templates, a relay by the vendors behind the lyrics channels); its success stores the
 * versions written as its result (no media); its records and callbacks are its door's (the Suno-style door's).
 */
@Injectable()
export class LyricsKind implements TaskKind<LyricsParams, LyricsResult, LyricsText[]> {
  static readonly definition = LYRICS_DEFINITION;
  readonly definition = LYRICS_DEFINITION;

  constructor(
    private readonly config: AppConfig,
    @Inject(LYRICS_PROVIDERS) private readonly providers: Record<ProviderName, LyricsProvider>,
    private readonly doors: TaskDoors,
    private readonly lyricsModels: LyricsModels,
  ) {}

  price(): Price {
    return { slots: 1, credits: this.config.kinds.lyrics.prices.task };
  }

  /** The relay's, when LYRICS_PROVIDER is relay: the poller asks the aggregators about the tasks waiting on them. */
  get watcher(): UpstreamWatcher | undefined {
    return this.providers[this.config.kinds.lyrics.provider].watcher;
  }

  step(task: LyricsTask, ctx: StepContext): Promise<StepOutcome<LyricsText[]>> {
    return this.providers[this.config.kinds.lyrics.provider].step(task, ctx.marks);
  }

  store(_task: LyricsTask, lyrics: LyricsText[]): Promise<Success<LyricsResult>> {
    return Promise.resolve({ result: { versions: versionsOf(lyrics) }, details: [], discard: () => Promise.resolve() });
  }

  /** Each task's record in its door's words. */
  notifications(tasks: LyricsTask[], tx?: TaskTx): Promise<unknown[]> {
    return this.doors.records(tasks, tx);
  }

  /** `GET /models`' lyrics entries. */
  models(): Promise<LyricsModelDto[]> {
    return this.lyricsModels.entries();
  }
}
