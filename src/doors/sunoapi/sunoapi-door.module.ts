import { Module } from '@nestjs/common';
import { AudioModule } from '../../modules/audio/audio.module.js';
import { ClipsModule } from '../../modules/clips/clips.module.js';
import { MusicModule } from '../../modules/music/music.module.js';
import { WavModule } from '../../modules/wav/wav.module.js';
import { SunoapiLyricsController } from './sunoapi-lyrics.controller.js';
import { SunoapiLyricsService } from './sunoapi-lyrics.service.js';
import { SunoapiMusicController } from './sunoapi-music.controller.js';
import { SunoapiMusicRecords } from './sunoapi-music.records.js';
import { SunoapiMusicService } from './sunoapi-music.service.js';
import { SunoapiWavController } from './sunoapi-wav.controller.js';
import { SunoapiWavRecords } from './sunoapi-wav.records.js';
import { SunoapiWavService } from './sunoapi-wav.service.js';
import { SUNOAPI_DOOR } from './sunoapi.door.js';

/**
 * The sunoapi.org family's music API (sunoapi.org, api.box, kie.ai) as a door, under `/sunoapi/api/v1`:
 * generate, extend, upload-extend and record-info, answered `{code, msg, data}`, with their stage callbacks;
 * WAV conversion (wav/generate, wav/record-info: WAV tasks) and the remaining credits (generate/credit); the
 * records of its music tasks (the rendering the registry reads for tasks storing its name) and of WAV tasks.
 */
@Module({
  imports: [AudioModule, MusicModule, ClipsModule, WavModule],
  controllers: [SunoapiMusicController, SunoapiWavController, SunoapiLyricsController],
  providers: [SunoapiMusicService, SunoapiMusicRecords, SunoapiWavService, SunoapiWavRecords, SunoapiLyricsService],
  exports: [SunoapiMusicRecords, SunoapiWavRecords],
})
export class SunoapiDoorModule {
  static readonly door = SUNOAPI_DOOR;
  static readonly renderings = [SunoapiMusicRecords, SunoapiWavRecords];
}
