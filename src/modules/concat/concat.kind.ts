import { rm } from 'node:fs/promises';
import { Injectable, Logger } from '@nestjs/common';
import { type Price, type StepContext, type StepOutcome, type Success, TaskFailure, type TaskKind, type TaskTx } from '../../common/tasks/task-kind.js';
import { AppConfig } from '../../infra/config/app-config.js';
import { AudioUnreadable, type PinnedAudio, withPinnedAudio } from '../../infra/ffmpeg/audio-decode.js';
import { MediaFile } from '../../infra/storage/storage.js';
import { CLIP_AUDIO_ROLE, CLIP_COVER_ROLE } from '../clips/clip-media.js';
import { TaskDoors } from '../../doors/contracts/task-doors.js';
import { ClipsRepository } from '../clips/clips.repository.js';
import { mediaEndRows } from '../media/media.repository.js';
import { MediaService } from '../media/media.service.js';
import { decodedChannels, encodeMp3Stream, PcmJoiner, renderCover, SAMPLE_RATE, secondsOf, streamPcm } from '../music/sound/music-sound.js';
import { CONCAT_DEFINITION } from './concat.definition.js';
import type { ConcatParams, ConcatPart, ConcatResult, ConcatTask } from './concat-task.js';

/** How far past a clip's end its continuation may say it starts (durations are rounded to the millisecond). */
const CUT_SLACK_S = 0.01;

/** What a concat step made: the song (an MP3 work file), its duration (that of the samples encoded), its cover. */
export interface JoinedSong {
  audio: MediaFile;
  durationS: number;
  cover: Buffer;
}

/**
 * Concat as a task kind: one slot and PRICE_CONCAT, always run by the gateway itself: each part's audio
 * is read from the media store, decoded (its format decided from its bytes and pinned), cut at its sample
 * (continue_at × 44 100), joined with a few milliseconds of fade at each junction, and encoded as one MP3
 * (mono when every part is mono), streamed from decoder to encoder.
 */
@Injectable()
export class ConcatKind implements TaskKind<ConcatParams, ConcatResult, JoinedSong> {
  static readonly definition = CONCAT_DEFINITION;
  readonly definition = CONCAT_DEFINITION;
  private readonly logger = new Logger(ConcatKind.name);

  constructor(
    private readonly config: AppConfig,
    private readonly doors: TaskDoors,
    private readonly media: MediaService,
  ) {}

  price(): Price {
    return { slots: 1, credits: this.config.kinds.concat.prices.task };
  }

  async step(task: ConcatTask, ctx: StepContext): Promise<StepOutcome<JoinedSong>> {
    const audio = new MediaFile(ctx.files.file('song', 'mp3'));
    // as long as the frames encoded (an MP3 decodes to exactly those: see SandboxMusicProvider), not decoded again
    const durationS = secondsOf(await this.join(task, ctx, audio.path));
    return { kind: 'done', result: { audio, durationS, cover: await renderCover({ seed: task.params.song_id, title: task.params.title ?? '' }) } };
  }

  /**
   * Joins the parts into `file`, an MP3, as a stream: each part is decoded (only up to its cut, so a long
   * clip cut early is never decoded whole) and goes through the joiner into the encoder piece by piece; no
   * part and no song is ever whole in memory. First each part's channel count is read (the first 50 ms of
   * it decoded): mono when every part is (an upload's chain stays as the upload was); a mono part in a
   * stereo song is on both channels. Within CONCAT_MAX_DURATION_S of real audio. A cut a few milliseconds
   * past its clip's end (a continuation from the end of a clip whose duration was rounded to the
   * millisecond) keeps it whole. Returns the frames encoded: every part's kept frames (a fade changes none's count).
   */
  private async join(task: ConcatTask, ctx: StepContext, file: string): Promise<number> {
    const maxS = this.config.kinds.concat.options.maxDurationS;
    const maxFrames = maxS * SAMPLE_RATE;
    const partChannels: number[] = [];
    for (const [i, part] of task.params.parts.entries()) {
      partChannels.push(await this.withPart(task, part, ctx, `probe${i}`, (path, pinned) => decodedChannels(path, pinned)));
    }
    const joiner = new PcmJoiner();
    let frames = 0;
    await encodeMp3Stream(file, partChannels.every((c) => c === 1) ? 1 : 2, maxS + 1, async (write) => {
      for (const [i, part] of task.params.parts.entries()) {
        const cut = part.cut_at !== null ? Math.round(part.cut_at * SAMPLE_RATE) : null;
        const untilS = part.cut_at !== null ? part.cut_at + 0.05 : (maxFrames - frames) / SAMPLE_RATE + 1;
        joiner.startPart(cut);
        await this.withPart(task, part, ctx, `part${i}`, (path, pinned) =>
          streamPcm(path, pinned, { untilS, channels: partChannels[i] }, async (pcm) => {
            for (const piece of joiner.push(pcm)) await write(piece);
          }),
        );
        const { frames: length, kept } = joiner.endPart();
        if (cut !== null && cut - length > CUT_SLACK_S * SAMPLE_RATE) {
          throw new TaskFailure(`clip ${part.clip_id} lasts ${secondsOf(length)} s, less than the ${part.cut_at} s its continuation starts at`);
        }
        frames += kept;
        if (frames > maxFrames) throw new TaskFailure(`the joined song would last more than CONCAT_MAX_DURATION_S (${maxS} s)`);
      }
      for (const piece of joiner.finish()) await write(piece);
    });
    return frames;
  }

  /**
   * Runs `work` on a work file holding the part's stored audio, its format decided from its bytes (a clip
   * stored before uploads were checked may be anything); the file is removed after. A file that is not
   * audio in an accepted format, or does not decode, fails the task with a reason that names the clip and
   * what is wrong with it (ffmpeg's own words, which name the worker's files, go to the log).
   */
  private async withPart<T>(task: ConcatTask, part: ConcatPart, ctx: StepContext, name: string, work: (path: string, pinned: PinnedAudio) => Promise<T>): Promise<T> {
    const path = ctx.files.file(name, 'audio');
    try {
      const row = await this.media.findForTask(part.task_id, CLIP_AUDIO_ROLE, part.idx);
      if (!row || (await this.media.copyToFile(row, path)) === null) throw new TaskFailure(`the audio of clip ${part.clip_id} is no longer stored (expired, or never kept by a relay)`);
      try {
        return await withPinnedAudio(path, (pinned) => work(path, pinned));
      } catch (err) {
        if (!(err instanceof AudioUnreadable)) throw err;
        this.logger.warn({ msg: 'a part of a concat could not be decoded', task_id: task.id, clip_id: part.clip_id, reason: err.reason, ffmpeg: err.detail });
        throw new TaskFailure(`the audio of clip ${part.clip_id} ${err.reason}`);
      }
    } finally {
      await rm(path, { force: true });
    }
  }

  async store(task: ConcatTask, song: JoinedSong): Promise<Success<ConcatResult>> {
    const common = { owner: task.owner, taskId: task.id, index: 0 };
    const stored = await this.media.putResult(task.attempts, [
      { ...common, role: CLIP_AUDIO_ROLE, body: song.audio, contentType: 'audio/mpeg' },
      { ...common, role: CLIP_COVER_ROLE, body: song.cover, contentType: 'image/png' },
    ]);
    const clip = ClipsRepository.endRows([{ id: task.params.song_id, taskId: task.id, owner: task.owner, idx: 0, type: 'concat', duration: song.durationS }]);
    return { details: [mediaEndRows(stored), clip], discard: () => this.media.discardObjects(stored) };
  }

  /** Each task's record in its door's words (the Suno-style door's). */
  notifications(tasks: ConcatTask[], tx?: TaskTx): Promise<unknown[]> {
    return this.doors.records(tasks, tx);
  }
}
