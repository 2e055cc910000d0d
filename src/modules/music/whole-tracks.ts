import { rm } from 'node:fs/promises';
import { Injectable, Logger } from '@nestjs/common';
import { type StepContext, TaskFailure } from '../../common/tasks/task-kind.js';
import { AudioUnreadable, type PinnedAudio, withPinnedAudio } from '../../infra/ffmpeg/audio-decode.js';
import { MediaFile } from '../../infra/storage/storage.js';
import { CLIP_AUDIO_ROLE } from '../clips/clip-media.js';
import { ClipsRepository } from '../clips/clips.repository.js';
import { MediaService } from '../media/media.service.js';
import type { MusicTake } from './providers/music-provider.js';
import type { MusicTask } from './music-task.js';
import { decodedChannels, encodeMp3Stream, PcmJoiner, SAMPLE_RATE, secondsOf, streamPcm } from './sound/music-sound.js';

/** The media role of a take's whole track (the continued clip up to the cut, then the take), beside its own audio (`clip`). */
export const WHOLE_TRACK_ROLE = 'whole';

/** A take with, where the task asks for it (`whole_track`), its whole track: an MP3 work file and its duration. */
export type MadeTake = MusicTake & { whole?: { audio: MediaFile; durationS: number } };

/** How far past the continued clip's end its cut may be (durations are rounded to the millisecond). */
const CUT_SLACK_S = 0.01;

/**
 * The whole tracks of a continuation (a task whose params ask `whole_track`): for each take, the continued
 * clip's stored audio from its start to the cut (`continues.at_s`, sample-exact) followed by the take, joined as
 * concat joins (3 ms fades at the junction, mono when both are), streamed from decoders to the MP3 encoder. What
 * the sunoapi.org family's upload-extend answers: "a longer track", the upload continued. A continued clip whose
 * audio is not stored here (an upload only a relay holds) has none: its takes are answered alone.
 */
@Injectable()
export class WholeTracks {
  private readonly logger = new Logger(WholeTracks.name);

  constructor(
    private readonly clips: ClipsRepository,
    private readonly media: MediaService,
  ) {}

  async make(task: MusicTask, takes: MusicTake[], ctx: StepContext): Promise<MadeTake[]> {
    const continues = task.params.continues;
    if (!task.params.whole_track || !continues) return takes;
    const [parent] = await this.clips.findForOwner(task.owner, [continues.clip_id]);
    const row = parent?.audioStored ? await this.media.findForTask(parent.taskId, CLIP_AUDIO_ROLE, parent.idx) : null;
    const head = ctx.files.file('whole-head', 'audio');
    try {
      if (!row || (await this.media.copyToFile(row, head)) === null) {
        this.logger.warn({ msg: 'no whole track: the continued clip\'s audio is not stored here', task_id: task.id, clip_id: continues.clip_id });
        return takes;
      }
      const cutS = continues.at_s ?? parent.duration; // null: its end, as long as it is
      const made: MadeTake[] = [];
      for (const [i, take] of takes.entries()) {
        const audio = new MediaFile(ctx.files.file(`whole${i}`, 'mp3'));
        const frames = await this.join(task, [
          { path: head, cutS, what: `clip ${continues.clip_id}` },
          { path: take.audio.path, cutS: null, what: `take ${i + 1}` },
        ], audio.path, (cutS ?? parent.duration ?? 0) + take.durationS);
        made.push({ ...take, whole: { audio, durationS: secondsOf(frames) } });
      }
      return made;
    } finally {
      await rm(head, { force: true });
    }
  }

  /** The parts joined into `file` (MP3); answers the frames encoded. */
  private async join(task: MusicTask, parts: { path: string; cutS: number | null; what: string }[], file: string, totalS: number): Promise<number> {
    const channels: number[] = [];
    for (const part of parts) channels.push(await this.decoding(task, part, (pinned) => decodedChannels(part.path, pinned)));
    const joiner = new PcmJoiner();
    let frames = 0;
    await encodeMp3Stream(file, channels.every((c) => c === 1) ? 1 : 2, totalS + 1, async (write) => {
      for (const [i, part] of parts.entries()) {
        const cut = part.cutS !== null ? Math.round(part.cutS * SAMPLE_RATE) : null;
        joiner.startPart(cut);
        await this.decoding(task, part, (pinned) =>
          streamPcm(part.path, pinned, { ...(part.cutS !== null ? { untilS: part.cutS + 0.05 } : {}), channels: channels[i] }, async (pcm) => {
            for (const piece of joiner.push(pcm)) await write(piece);
          }),
        );
        const { frames: length, kept } = joiner.endPart();
        if (cut !== null && cut - length > CUT_SLACK_S * SAMPLE_RATE) throw new TaskFailure(`${part.what} lasts ${secondsOf(length)} s, less than the ${part.cutS} s it is continued at`);
        frames += kept;
      }
      for (const piece of joiner.finish()) await write(piece);
    });
    return frames;
  }

  /** Runs `work` on a part, its format pinned from its bytes; audio that does not decode fails the task, naming the part. */
  private async decoding<T>(task: MusicTask, part: { path: string; what: string }, work: (pinned: PinnedAudio) => Promise<T>): Promise<T> {
    try {
      return await withPinnedAudio(part.path, work);
    } catch (err) {
      if (!(err instanceof AudioUnreadable)) throw err;
      this.logger.warn({ msg: 'a part of a whole track could not be decoded', task_id: task.id, part: part.what, reason: err.reason, ffmpeg: err.detail });
      throw new TaskFailure(`the whole track could not be made: the audio of ${part.what} ${err.reason}`);
    }
  }
}
