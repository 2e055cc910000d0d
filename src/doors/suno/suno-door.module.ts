import { Module } from '@nestjs/common';
import { AudioModule } from '../../modules/audio/audio.module.js';
import { ClipsModule } from '../../modules/clips/clips.module.js';
import { ConcatModule } from '../../modules/concat/concat.module.js';
import { LyricsModule } from '../../modules/lyrics/lyrics.module.js';
import { MusicModule } from '../../modules/music/music.module.js';
import { AudioController } from './suno-audio.controller.js';
import { AudioRecords } from './suno-audio.records.js';
import { AudioService } from './suno-audio.service.js';
import { ClipAudioController } from './suno-clip-audio.controller.js';
import { ClipAudioService } from './suno-clip-audio.service.js';
import { ClipLyricsController } from './suno-clip-lyrics.controller.js';
import { ClipLyricsService } from './suno-clip-lyrics.service.js';
import { ClipRecords, SunoConcatRecords, SunoMusicRecords } from './suno-clip.records.js';
import { ConcatController } from './suno-concat.controller.js';
import { ConcatService } from './suno-concat.service.js';
import { MusicFetchController } from './suno-fetch.controller.js';
import { MusicFetchService } from './suno-fetch.service.js';
import { LyricsController } from './suno-lyrics.controller.js';
import { SunoLyricsRecords } from './suno-lyrics.records.js';
import { LyricsService } from './suno-lyrics.service.js';
import { MusicController } from './suno-music.controller.js';
import { MusicService } from './suno-music.service.js';
import { StemsModule } from '../../modules/stems/stems.module.js';
import { StemsController } from './suno-stems.controller.js';
import { SunoStemsRecords } from './suno-stems.records.js';
import { StemsService } from './suno-stems.service.js';
import { SUNO_DOOR } from './suno.door.js';

/**
 * A Suno-style aggregator's API as a door, under `/music-a`: audio uploads by URL, music, lyrics and concat
 * submissions, the fetch routes, clips' audio as WAV or FLAC and their timed lyrics, with string error codes; the
 * records of its music, concat, upload and lyrics tasks (the renderings the registry reads).
 */
@Module({
  imports: [AudioModule, MusicModule, ConcatModule, ClipsModule, LyricsModule, StemsModule],
  controllers: [AudioController, MusicController, LyricsController, ConcatController, MusicFetchController, ClipAudioController, ClipLyricsController, StemsController],
  providers: [AudioService, ClipAudioService, ClipLyricsService, AudioRecords, MusicService, LyricsService, ConcatService, MusicFetchService, ClipRecords, SunoMusicRecords, SunoConcatRecords, SunoLyricsRecords, StemsService, SunoStemsRecords],
  exports: [AudioRecords, SunoMusicRecords, SunoConcatRecords, SunoLyricsRecords, SunoStemsRecords],
})
export class SunoDoorModule {
  static readonly door = SUNO_DOOR;
  static readonly renderings = [AudioRecords, SunoMusicRecords, SunoConcatRecords, SunoLyricsRecords, SunoStemsRecords];
}
