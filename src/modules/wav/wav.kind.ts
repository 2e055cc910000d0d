import { Injectable, Logger } from '@nestjs/common';
import { type Price, type StepContext, type StepOutcome, type Success, TaskFailure, type TaskKind, type TaskTx } from '../../common/tasks/task-kind.js';
import { TaskDoors } from '../../doors/contracts/task-doors.js';
import { AppConfig } from '../../infra/config/app-config.js';
import { NoAudio, pinAudio } from '../../infra/ffmpeg/audio-decode.js';
import { exportPcm16, PCM16_EXPORTS } from '../../infra/ffmpeg/audio-export.js';
import { FfmpegFailed, FfmpegTimedOut } from '../../infra/ffmpeg/ffmpeg.js';
import { MediaRefused } from '../../infra/ffmpeg/media-format.js';
import { MediaFile } from '../../infra/storage/storage.js';
import { mediaEndRows } from '../media/media.repository.js';
import { MediaService } from '../media/media.service.js';
import { WAV_DEFINITION } from './wav.definition.js';
import { WAV_ROLE, type WavParams, type WavResult, type WavTask } from './wav-task.js';

/**
 * WAV conversion as a task kind, always run by the gateway itself: the source audio (resolved at acceptance)
 * is copied from the media store to a work file, its format pinned from its bytes, and exported by ffmpeg as
 * 16-bit PCM WAV at its own sample rate and channel count (the same export as the Suno-style door's
 * `GET /music-a/clips/{clip_id}/audio?format=wav`: src/infra/ffmpeg/audio-export.ts), to a file so the header
 * has its sizes; then stored, before the task succeeds, as its result (linked like every result: signed).
 * One slot and PRICE_WAV.
 */
@Injectable()
export class WavKind implements TaskKind<WavParams, WavResult, MediaFile> {
  static readonly definition = WAV_DEFINITION;
  readonly definition = WAV_DEFINITION;
  private readonly logger = new Logger(WavKind.name);

  constructor(
    private readonly config: AppConfig,
    private readonly doors: TaskDoors,
    private readonly media: MediaService,
  ) {}

  price(): Price {
    return { slots: 1, credits: this.config.kinds.wav.prices.task };
  }

  async step(task: WavTask, ctx: StepContext): Promise<StepOutcome<MediaFile>> {
    const { source, clip_id: clipId } = task.params;
    const input = ctx.files.file('wav-source', 'audio');
    const out = ctx.files.file('wav-export', 'wav');
    const row = await this.media.findForTask(source.task_id, source.role, source.index);
    if (!row || (await this.media.copyToFile(row, input)) === null) throw new TaskFailure(`the audio of clip ${clipId} is no longer stored (expired after RESULT_RETENTION_DAYS)`);
    try {
      await exportPcm16(input, await pinAudio(input), out, 'wav', task.params.duration_s);
    } catch (err) {
      if (err instanceof FfmpegTimedOut) throw new TaskFailure(`converting clip ${clipId} to WAV took longer than ${Math.round(err.limitMs / 1000)} s`);
      if (err instanceof MediaRefused || err instanceof FfmpegFailed || err instanceof NoAudio) {
        this.logger.warn({ msg: 'a stored clip could not be converted to WAV', task_id: task.id, clip_id: clipId, reason: err.message, ffmpeg: err instanceof FfmpegFailed ? err.detail : undefined });
        throw new TaskFailure(`the stored audio of clip ${clipId} ${err instanceof MediaRefused ? err.message : 'does not decode'}, so it cannot be converted to WAV`);
      }
      throw err;
    }
    return { kind: 'done', result: new MediaFile(out) };
  }

  async store(task: WavTask, wav: MediaFile): Promise<Success<WavResult>> {
    const stored = await this.media.putResult(task.attempts, [{ owner: task.owner, taskId: task.id, role: WAV_ROLE, index: 0, body: wav, contentType: PCM16_EXPORTS.wav.contentType }]);
    return { result: { duration_s: task.params.duration_s }, details: [mediaEndRows(stored)], discard: () => this.media.discardObjects(stored) };
  }

  /** Each task's record (and callback body) in its door's words (the sunoapi.org-shaped door's). */
  notifications(tasks: WavTask[], tx?: TaskTx): Promise<unknown[]> {
    return this.doors.records(tasks, tx);
  }
}
