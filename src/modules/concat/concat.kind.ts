import { Injectable } from '@nestjs/common';
import { type Price, type StepContext, type StepOutcome, type Success, TaskFailure, type TaskKind, type TaskTx } from '../../common/tasks/task-kind.js';
import { AppConfig } from '../../infra/config/app-config.js';
import { MediaFile } from '../../infra/storage/storage.js';
import { CLIP_AUDIO_ROLE, CLIP_COVER_ROLE, ClipRecords } from '../clips/clip-records.js';
import { ClipsRepository } from '../clips/clips.repository.js';
import type { MusicTaskDto } from '../clips/dto/music-task.dto.js';
import { mediaEndRows } from '../media/media.repository.js';
import { MediaService } from '../media/media.service.js';
import { CHANNELS, decodeAudio, decodeAudioFile, durationOf, encodeMp3, joinParts, type PcmPart, renderCover, SAMPLE_RATE } from '../music/sound/music-sound.js';
import { CONCAT_DEFINITION } from './concat.definition.js';
import type { ConcatParams, ConcatResult, ConcatTask } from './concat-task.js';

/** What a concat step made: the song (an MP3 work file), its duration read from it, its cover. */
export interface JoinedSong {
  audio: MediaFile;
  durationS: number;
  cover: Buffer;
}

/**
 * Concat as a task kind: one slot and PRICE_CONCAT, always run by the gateway itself: each part's audio
 * is read from the media store, decoded, cut at its sample (continue_at × 44 100), joined with a few
 * milliseconds of fade at each junction, and encoded as one MP3 (mono when every part is mono).
 */
@Injectable()
export class ConcatKind implements TaskKind<ConcatParams, ConcatResult, JoinedSong> {
  static readonly definition = CONCAT_DEFINITION;
  readonly definition = CONCAT_DEFINITION;

  constructor(
    private readonly config: AppConfig,
    private readonly records: ClipRecords,
    private readonly media: MediaService,
  ) {}

  price(): Price {
    return { slots: 1, credits: this.config.kinds.concat.prices.task };
  }

  async step(task: ConcatTask, ctx: StepContext): Promise<StepOutcome<JoinedSong>> {
    const parts: PcmPart[] = [];
    let channels: 1 | 2 = 1;
    for (const [i, part] of task.params.parts.entries()) {
      const row = await this.media.findForTask(part.task_id, CLIP_AUDIO_ROLE, part.idx);
      const file = ctx.files.file(`part${i}`, 'audio');
      if (!row || (await this.media.copyToFile(row, file)) === null) throw new TaskFailure(`the audio of clip ${part.clip_id} is no longer stored (expired, or never kept by a relay)`);
      const decoded = await decodeAudioFile(file);
      const pcm = decoded.pcm;
      if (decoded.channels === 2) channels = 2;
      if (part.cut_at !== null && Math.round(part.cut_at * SAMPLE_RATE) > pcm.length / CHANNELS) {
        throw new TaskFailure(`clip ${part.clip_id} lasts ${durationOf(pcm)} s, less than the ${part.cut_at} s its continuation starts at`);
      }
      parts.push({ pcm, cutAtS: part.cut_at });
    }
    const audio = new MediaFile(ctx.files.file('song', 'mp3'));
    // Mono when every part is (an upload's chain stays as the upload was); a mono part in a stereo song is on both channels.
    await encodeMp3(joinParts(parts), audio.path, channels);
    const durationS = durationOf(await decodeAudio(audio.path));
    return { kind: 'done', result: { audio, durationS, cover: await renderCover({ seed: task.params.song_id, title: task.params.title ?? '' }) } };
  }

  async store(task: ConcatTask, song: JoinedSong): Promise<Success<ConcatResult>> {
    const common = { owner: task.owner, taskId: task.id, index: 0 };
    const stored = await this.media.putResult([
      { ...common, role: CLIP_AUDIO_ROLE, body: song.audio, contentType: 'audio/mpeg' },
      { ...common, role: CLIP_COVER_ROLE, body: song.cover, contentType: 'image/png' },
    ]);
    const clip = ClipsRepository.endRows([{ id: task.params.song_id, taskId: task.id, owner: task.owner, idx: 0, type: 'concat', duration: song.durationS }]);
    return { details: [mediaEndRows(stored), clip], discard: () => this.media.discardObjects(stored) };
  }

  notifications(tasks: ConcatTask[], tx: TaskTx): Promise<MusicTaskDto[]> {
    return this.records.records(tasks, tx);
  }
}
