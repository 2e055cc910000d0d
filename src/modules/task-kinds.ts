import type { KindModule } from '../common/tasks/task-kind.js';
import { AudioModule } from './audio/audio.module.js';
import { ConcatModule } from './concat/concat.module.js';
import { ExpandModule } from './expand/expand.module.js';
import { ImageModule } from './image/image.module.js';
import { LyricsModule } from './lyrics/lyrics.module.js';
import { MusicModule } from './music/music.module.js';
import { SpeechModule } from './speech/speech.module.js';
import { StemsModule } from './stems/stems.module.js';
import { VideoModule } from './video/video.module.js';
import { WavModule } from './wav/wav.module.js';

/**
 * The registry: every operation the service runs as a task, one line each. A kind's module provides its
 * TaskKind (see docs/contributors/architecture.md, "Adding an operation"); the config, the job queues, limits and
 * usage, metrics and the OpenAPI document all read this list.
 */
export const TASK_KIND_MODULES: readonly KindModule[] = [
  ExpandModule,
  VideoModule,
  AudioModule,
  MusicModule,
  ConcatModule,
  ImageModule,
  SpeechModule,
  LyricsModule,
  StemsModule,
  WavModule,
];
