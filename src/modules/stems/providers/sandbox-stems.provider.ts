import { Injectable, Logger } from '@nestjs/common';
import { type StepOutcome, TaskFailure } from '../../../common/tasks/task-kind.js';
import { AppConfig } from '../../../infra/config/app-config.js';
import { AudioUnreadable } from '../../../infra/ffmpeg/audio-decode.js';
import { CpuSlots } from '../../../infra/process/cpu-slots.js';
import { StepScope } from '../../../infra/process/step-scope.js';
import { MediaFile } from '../../../infra/storage/storage.js';
import { STEMS_VENDORS } from '../../../vendors/stems-vendors.js';
import { ClipsRepository } from '../../clips/clips.repository.js';
import { MediaService } from '../../media/media.service.js';
import { decodeAudioFile, durationOf, encodeMp3, SAMPLE_RATE } from '../../music/sound/music-sound.js';
import { splitBands } from '../stems-bands.js';
import { clipAudioRowOrFailure } from '../stems-source.js';
import type { StemsTask } from '../stems-task.js';
import type { StemsContext, StemsProvider, StemTake } from './stems-provider.js';

/** The stems the sandbox makes when no mirrored model names them (a model named that no catalog knows). */
const DEFAULT_STEMS = { two: ['vocals', 'instrumental'], all: ['vocals', 'instrumental'] } as const;

/**
 * Splits offline: the clip's samples cut into bands of its spectrum (`splitBands`), as many as the model it
 * mirrors makes for the split and named as it names them (ElevenLabs' two: vocals and instrumental; its six),
 * each encoded as MP3 with the clip's channels. The bands sum back to the clip: the stems of a song played
 * together are the song (within MP3's loss). The same clip and split, the same stems.
 */
@Injectable()
export class SandboxStemsProvider implements StemsProvider {
  private readonly logger = new Logger(SandboxStemsProvider.name);

  constructor(
    private readonly config: AppConfig,
    private readonly clips: ClipsRepository,
    private readonly media: MediaService,
    private readonly cpu: CpuSlots,
  ) {}

  async step(task: StemsTask, ctx: StemsContext): Promise<StepOutcome<StemTake[]>> {
    if (this.config.sandboxDelayMs > 0) await StepScope.delay(this.config.sandboxDelayMs);
    const p = task.params;
    const names = stemNames(p.model, p.split);
    const source = ctx.file('source', 'audio');
    const row = await clipAudioRowOrFailure(this.clips, this.media, p.clip_id);
    if ((await this.media.copyToFile(row, source)) === null) throw new TaskFailure(`the audio of clip ${p.clip_id} is no longer stored`);
    let decoded;
    try {
      decoded = await decodeAudioFile(source);
    } catch (err) {
      if (!(err instanceof AudioUnreadable)) throw err;
      this.logger.warn({ msg: 'the clip a stems task splits could not be decoded', clip_id: p.clip_id, reason: err.reason, ffmpeg: err.detail });
      throw new TaskFailure(`the audio of clip ${p.clip_id} ${err.reason}`);
    }
    const bands = await this.cpu.run(async () => splitBands(decoded.pcm, names.length, SAMPLE_RATE));
    const takes: StemTake[] = [];
    // the highest band first: the two-stem split's "vocals" is the clip above 900 Hz, its "instrumental" the rest
    for (const [index, name] of names.entries()) {
      const pcm = bands[bands.length - 1 - index];
      const audio = new MediaFile(ctx.file(`stem${index}`, 'mp3'));
      await encodeMp3(pcm, audio.path, decoded.channels);
      takes.push({ name, audio, format: 'mp3', durationS: durationOf(pcm) });
    }
    return { kind: 'done', result: takes };
  }
}

/** The stems of a split, as the mirrored model names them (the first vendor model of that name that makes it). */
export function stemNames(model: string | null, split: 'two' | 'all'): readonly string[] {
  for (const vendor of STEMS_VENDORS) {
    for (const spec of vendor.models) if ((model === null || spec.id === model) && spec.splits[split]) return spec.splits[split]!;
  }
  return DEFAULT_STEMS[split];
}
