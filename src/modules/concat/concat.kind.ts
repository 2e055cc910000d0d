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

/** How far past a clip's end its continuation may say it starts (durations are rounded to the millisecond). */
const CUT_SLACK_S = 0.01;

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
    const audio = new MediaFile(ctx.files.file('song', 'mp3'));
    const { pcm, channels } = await this.joined(task, ctx);
    // Mono when every part is (an upload's chain stays as the upload was); a mono part in a stereo song is on both channels.
    await encodeMp3(pcm, audio.path, channels);
    let durationS: number;
    try {
      durationS = durationOf(await decodeAudio(audio.path));
    } catch (err) {
      throw new TaskFailure(`the joined song could not be read back: ${(err as Error).message}`);
    }
    return { kind: 'done', result: { audio, durationS, cover: await renderCover({ seed: task.params.song_id, title: task.params.title ?? '' }) } };
  }

  /**
   * The parts decoded (each only up to its cut, so a long clip cut early is never held whole) and joined,
   * within CONCAT_MAX_DURATION_S of real audio. A cut a few milliseconds past its clip's end (a
   * continuation from the end of a clip whose duration was rounded to the millisecond) keeps it whole.
   */
  private async joined(task: ConcatTask, ctx: StepContext): Promise<{ pcm: Float32Array; channels: 1 | 2 }> {
    const maxFrames = this.config.kinds.concat.options.maxDurationS * SAMPLE_RATE;
    const parts: PcmPart[] = [];
    let channels: 1 | 2 = 1;
    let frames = 0;
    for (const [i, part] of task.params.parts.entries()) {
      const row = await this.media.findForTask(part.task_id, CLIP_AUDIO_ROLE, part.idx);
      const file = ctx.files.file(`part${i}`, 'audio');
      if (!row || (await this.media.copyToFile(row, file)) === null) throw new TaskFailure(`the audio of clip ${part.clip_id} is no longer stored (expired, or never kept by a relay)`);
      let decoded;
      try {
        decoded = await decodeAudioFile(file, { untilS: part.cut_at !== null ? part.cut_at + 0.05 : (maxFrames - frames) / SAMPLE_RATE + 1 });
      } catch (err) {
        throw new TaskFailure(`the audio of clip ${part.clip_id} could not be decoded: ${(err as Error).message}`);
      }
      if (decoded.channels === 2) channels = 2;
      const length = decoded.pcm.length / CHANNELS;
      let cut = part.cut_at;
      if (cut !== null && Math.round(cut * SAMPLE_RATE) > length) {
        if (Math.round(cut * SAMPLE_RATE) - length > CUT_SLACK_S * SAMPLE_RATE) {
          throw new TaskFailure(`clip ${part.clip_id} lasts ${durationOf(decoded.pcm)} s, less than the ${cut} s its continuation starts at`);
        }
        cut = null;
      }
      frames += cut === null ? length : Math.round(cut * SAMPLE_RATE);
      if (frames > maxFrames) throw new TaskFailure(`the joined song would last more than CONCAT_MAX_DURATION_S (${this.config.kinds.concat.options.maxDurationS} s)`);
      parts.push({ pcm: decoded.pcm, cutAtS: cut });
    }
    return { pcm: joinParts(parts), channels };
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

  notifications(tasks: ConcatTask[], tx?: TaskTx): Promise<MusicTaskDto[]> {
    return this.records.records(tasks, tx);
  }
}
