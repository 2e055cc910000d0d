import { Injectable, Logger } from '@nestjs/common';
import { type StepOutcome, TaskFailure } from '../../../common/tasks/task-kind.js';
import { AppConfig } from '../../../infra/config/app-config.js';
import { AudioUnreadable, withPinnedAudio } from '../../../infra/ffmpeg/audio-decode.js';
import { MediaFile } from '../../../infra/storage/storage.js';
import { spreadWords } from '../../clips/clip-lyrics.js';
import { CLIP_AUDIO_ROLE } from '../../clips/clip-media.js';
import { ClipsRepository } from '../../clips/clips.repository.js';
import { MediaService } from '../../media/media.service.js';
import type { MusicTask } from '../music-task.js';
import { sandboxLyricsFrom, sandboxTitleFrom } from '../sandbox-lyrics.js';
import { decodedChannels, durationOf, encodeMp3, renderCover, synthesizeSong } from '../sound/music-sound.js';
import type { MusicContext, MusicProvider, MusicTake } from './music-provider.js';
import { StepScope } from '../../../infra/process/step-scope.js';

/**
 * Composes offline: each take is a melody and rhythm derived from the request (model, prompt, style,
 * title, the clip continued and where) and the take's place, MUSIC_SANDBOX_DURATION_S long, encoded as
 * MP3; a continuation holds only its new part, as Suno's, with the channels of the clip it continues (a
 * mono upload's chain stays mono, so its joined song is the upload's own samples). The duration is that of
 * the samples encoded. Each take (not instrumental) sings the lyrics asked, or lyrics written from the description
 * (`sandboxLyricsFrom`), its words timed evenly over the take, so lyrics and their timing work offline.
 */
@Injectable()
export class SandboxMusicProvider implements MusicProvider {
  private readonly logger = new Logger(SandboxMusicProvider.name);
  constructor(
    private readonly config: AppConfig,
    private readonly clips: ClipsRepository,
    private readonly media: MediaService,
  ) {}

  async step(task: MusicTask, ctx: MusicContext): Promise<StepOutcome<MusicTake[]>> {
    if (this.config.sandboxDelayMs > 0) await StepScope.delay(this.config.sandboxDelayMs); // ends with the step's time limit
    const p = task.params;
    const channels = p.continues ? await this.channelsOf(p.continues.clip_id, ctx) : 2;
    const takes: MusicTake[] = [];
    for (const [index, clipId] of p.clip_ids.entries()) {
      const seed = JSON.stringify([p.model, p.lyrics, p.description, p.style, p.avoid_style, p.title, p.instrumental, p.continues?.clip_id ?? null, p.continues?.at_s ?? null, index]);
      const audio = new MediaFile(ctx.file(`take${index}`, 'mp3'));
      const pcm = synthesizeSong({ seed, durationS: p.duration_s ?? this.config.kinds.music.options.sandboxDurationS });
      await encodeMp3(pcm, audio.path, channels);
      // as long as the samples encoded: the MP3's LAME header trims the encoder's delay and padding, so it decodes
      // to exactly those (music-sound.spec's round trip); not decoded again to be measured, an ffmpeg start a take
      const durationS = durationOf(pcm);
      // sung words, as a vendor reports them: the lyrics asked, or written from the description; timed over the take
      const lyrics = p.instrumental ? null : (p.lyrics ?? (p.description ? sandboxLyricsFrom(p.description, index) : null));
      const timedLyrics = lyrics ? spreadWords(lyrics, durationS) : null;
      // a song asked by description is named, as a vendor names what it wrote (none asked and no description: untitled)
      const title = p.title ?? (p.description ? sandboxTitleFrom(p.description) : null);
      takes.push({
        audio,
        format: 'mp3',
        durationS,
        cover: await renderCover({ seed: `${seed}|${clipId}`, title: title ?? '' }),
        ...(title !== null && p.title === null ? { title } : {}),
        ...(lyrics ? { lyrics } : {}),
        ...(timedLyrics ? { timedLyrics } : {}),
      });
    }
    return { kind: 'done', result: takes };
  }

  /**
   * The channel count of the continued clip's file (stereo when it is not stored here), as concat will
   * decode it: its format decided from its bytes, its first 50 ms decoded pinned. A stored file that is
   * not audio in an accepted format (one kept before uploads were checked) fails the task with the reason.
   */
  private async channelsOf(clipId: string, ctx: MusicContext): Promise<1 | 2> {
    const clip = await this.clips.findById(clipId);
    const row = clip && (await this.media.findForTask(clip.taskId, CLIP_AUDIO_ROLE, clip.idx));
    const file = ctx.file('parent', 'audio');
    if (!row || (await this.media.copyToFile(row, file)) === null) return 2;
    try {
      return (await withPinnedAudio(file, (pinned) => decodedChannels(file, pinned))) === 1 ? 1 : 2;
    } catch (err) {
      if (!(err instanceof AudioUnreadable)) throw err;
      this.logger.warn({ msg: 'the clip a music task continues could not be decoded', clip_id: clipId, reason: err.reason, ffmpeg: err.detail });
      throw new TaskFailure(`the audio of clip ${clipId} ${err.reason}`);
    }
  }
}
