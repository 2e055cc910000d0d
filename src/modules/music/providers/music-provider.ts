import type { AudioFormatName } from '../../../infra/ffmpeg/media-format.js';
import type { StepOutcome, UpstreamWatcher } from '../../../common/tasks/task-kind.js';
import type { SubmitMarks } from '../../../infra/relay/upstream-client.js';
import type { MediaFile } from '../../../infra/storage/storage.js';
import type { WorkFiles } from '../../../infra/workdir/work-dir.service.js';
import type { TimedWord } from '../../clips/clip-lyrics.js';
import type { MusicTask } from '../music-task.js';

/**
 * One take a step produced: its audio (a work file) and format, its duration read from it, its cover, the
 * upstream's id of it, and its words where the vendor gave them: its lyrics, its title, its lyrics timed word by
 * word (counted from the take's own start, within its duration).
 */
export interface MusicTake {
  audio: MediaFile;
  format: AudioFormatName;
  durationS: number;
  lyrics?: string;
  title?: string;
  timedLyrics?: TimedWord[];
  cover: Buffer | null;
  upstreamId?: string | null;
}

export interface MusicContext extends SubmitMarks, WorkFiles {}

export interface MusicProvider {
  /** Its takes, in the order of the task's clip ids (as many as its model makes: one or all of them). */
  step(task: MusicTask, ctx: MusicContext): Promise<StepOutcome<MusicTake[]>>;
  /** How its tasks that wait on an upstream are polled (a relay). */
  readonly watcher?: UpstreamWatcher;
}

export const MUSIC_PROVIDERS = Symbol('MUSIC_PROVIDERS');
