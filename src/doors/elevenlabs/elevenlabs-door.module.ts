import { Module, type Type } from '@nestjs/common';
import { ClipsModule } from '../../modules/clips/clips.module.js';
import { MusicModule } from '../../modules/music/music.module.js';
import type { DoorRendering } from '../contracts/door.js';
import { ElevenLabsMusicController } from './elevenlabs-music.controller.js';
import { ElevenLabsMusicService } from './elevenlabs-music.service.js';
import { ELEVENLABS_DOOR } from './elevenlabs.door.js';

/**
 * ElevenLabs' music API as a door, under `/elevenlabs/v1/music` (and `/stream`): its body mapped into the music
 * task's parameters, its answer the song's audio once the task ends, its errors in ElevenLabs' shape, the key
 * taken in its `xi-api-key` header too. It renders no record of its own (it takes no callback; the music kind's
 * fallback, the Suno-style door's record, shows its tasks in GET /tasks and /music-a/fetch).
 */
@Module({
  imports: [MusicModule, ClipsModule],
  controllers: [ElevenLabsMusicController],
  providers: [ElevenLabsMusicService],
})
export class ElevenLabsDoorModule {
  static readonly door = ELEVENLABS_DOOR;
  static readonly renderings: readonly Type<DoorRendering>[] = [];
}
