import { Inject, Injectable } from '@nestjs/common';
import type { Price, StepContext, StepOutcome, Success, TaskKind, TaskTx, UpstreamWatcher } from '../../common/tasks/task-kind.js';
import { AppConfig, type ProviderName } from '../../infra/config/app-config.js';
import { AUDIO_FORMATS } from '../../infra/ffmpeg/media-format.js';
import { CLIP_AUDIO_ROLE, CLIP_COVER_ROLE } from '../clips/clip-media.js';
import { TaskDoors } from '../../doors/contracts/task-doors.js';
import { ClipsRepository } from '../clips/clips.repository.js';
import { mediaEndRows } from '../media/media.repository.js';
import { MediaService } from '../media/media.service.js';
import { MUSIC_DEFINITION } from './music.definition.js';
import type { MusicModelDto } from './dto/music-model.dto.js';
import { MusicModels } from './music-offer.js';
import type { MusicParams, MusicResult, MusicTask } from './music-task.js';
import { MUSIC_PROVIDERS, type MusicProvider } from './providers/music-provider.js';
import { type MadeTake, WHOLE_TRACK_ROLE, WholeTracks } from './whole-tracks.js';

/**
 * Music as a task kind: one slot and PRICE_MUSIC, two takes made through MUSIC_PROVIDER (the sandbox
 * composes MP3s offline, a relay forwards to a Suno-style aggregator); its success stores each take's
 * audio and cover, its duration and its words where its maker gave them (lyrics, title, lyrics timed by word),
 * and its whole track, where asked (WholeTracks); its notifications are its door's record.
 */
@Injectable()
export class MusicKind implements TaskKind<MusicParams, MusicResult, MadeTake[]> {
  static readonly definition = MUSIC_DEFINITION;
  readonly definition = MUSIC_DEFINITION;

  constructor(
    private readonly config: AppConfig,
    @Inject(MUSIC_PROVIDERS) private readonly providers: Record<ProviderName, MusicProvider>,
    private readonly doors: TaskDoors,
    private readonly media: MediaService,
    private readonly musicModels: MusicModels,
    private readonly wholeTracks: WholeTracks,
  ) {}

  price(): Price {
    return { slots: 1, credits: this.config.kinds.music.prices.task };
  }

  /** The relay's, when MUSIC_PROVIDER is relay: the poller asks the aggregator about the tasks waiting on it. */
  get watcher(): UpstreamWatcher | undefined {
    return this.providers[this.config.kinds.music.provider].watcher;
  }

  /** The provider's step; its takes made, each one's whole track where the task asks for it (`whole_track`). */
  async step(task: MusicTask, ctx: StepContext): Promise<StepOutcome<MadeTake[]>> {
    const outcome = await this.providers[this.config.kinds.music.provider].step(task, { ...ctx.marks, file: (prefix, ext) => ctx.files.file(prefix, ext) });
    return outcome.kind === 'done' ? { kind: 'done', result: await this.wholeTracks.make(task, outcome.result, ctx) } : outcome;
  }

  async store(task: MusicTask, takes: MadeTake[]): Promise<Success<MusicResult>> {
    const common = { owner: task.owner, taskId: task.id };
    const stored = await this.media.putResult(
      task.attempts,
      takes.flatMap((take, index) => [
        { ...common, role: CLIP_AUDIO_ROLE, index, body: take.audio, contentType: AUDIO_FORMATS[take.format].contentType },
        ...(take.cover ? [{ ...common, role: CLIP_COVER_ROLE, index, body: take.cover, contentType: 'image/png' }] : []),
        ...(take.whole ? [{ ...common, role: WHOLE_TRACK_ROLE, index, body: take.whole.audio, contentType: 'audio/mpeg' }] : []),
      ]),
    );
    const wholes = takes.filter((take) => take.whole);
    const clips = ClipsRepository.endRows(
      takes.map((take, idx) => ({
        id: task.params.clip_ids[idx],
        taskId: task.id,
        owner: task.owner,
        idx,
        type: 'gen' as const,
        parentId: task.params.continues?.clip_id ?? null,
        continueAt: task.params.continues?.at_s ?? null,
        duration: take.durationS,
        upstreamId: take.upstreamId ?? null,
        title: take.title ?? null,
        lyrics: take.lyrics ?? null,
        timedLyrics: take.timedLyrics ?? null,
      })),
    );
    // a clip a one-take model left unmade keeps no duration: the records of a task that ended leave it out
    return {
      ...(wholes.length > 0 ? { result: { whole_durations_s: takes.map((take) => take.whole?.durationS ?? 0) } } : {}),
      details: [mediaEndRows(stored), clips],
      discard: () => this.media.discardObjects(stored),
    };
  }

  /** Each task's record in its door's words (the Suno-style door's). */
  notifications(tasks: MusicTask[], tx?: TaskTx): Promise<unknown[]> {
    return this.doors.records(tasks, tx);
  }

  /** `GET /models`' music entries: what each configured model makes. */
  models(): Promise<MusicModelDto[]> {
    return this.musicModels.entries();
  }
}
