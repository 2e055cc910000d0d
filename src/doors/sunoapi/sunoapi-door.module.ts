import { Module } from '@nestjs/common';
import { AudioModule } from '../../modules/audio/audio.module.js';
import { ClipsModule } from '../../modules/clips/clips.module.js';
import { MusicModule } from '../../modules/music/music.module.js';
import { SunoapiLyricsController } from './sunoapi-lyrics.controller.js';
import { SunoapiLyricsService } from './sunoapi-lyrics.service.js';
import { SunoapiMusicController } from './sunoapi-music.controller.js';
import { SunoapiMusicRecords } from './sunoapi-music.records.js';
import { SunoapiMusicService } from './sunoapi-music.service.js';
import { SUNOAPI_DOOR } from './sunoapi.door.js';

/**
 * The sunoapi.org family's music API (sunoapi.org, api.box, kie.ai) as a door, under `/sunoapi/api/v1`:
 * generate, extend, upload-extend and record-info, answered `{code, msg, data}`, with their stage callbacks;
 * the record of its music tasks (the rendering the registry reads for tasks storing its name).
 */
@Module({
  imports: [AudioModule, MusicModule, ClipsModule],
  controllers: [SunoapiMusicController, SunoapiLyricsController],
  providers: [SunoapiMusicService, SunoapiMusicRecords, SunoapiLyricsService],
  exports: [SunoapiMusicRecords],
})
export class SunoapiDoorModule {
  static readonly door = SUNOAPI_DOOR;
  static readonly renderings = [SunoapiMusicRecords];
}
