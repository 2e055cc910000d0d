import { Module } from '@nestjs/common';
import type { DoorRendering } from '../contracts/door.js';
import type { Type } from '@nestjs/common';
import { SpeechModule } from '../../modules/speech/speech.module.js';
import { OpenAiSpeechController } from './openai-speech.controller.js';
import { OpenAiSpeechService } from './openai-speech.service.js';

/**
 * OpenAI's speech API as a door, under `/openai/v1/audio/speech`: its body mapped into the speech operation's
 * normalized request, its answer the audio (or its events). It renders no record of its own (it takes no
 * callback; GET /tasks shows the speech kind's record, the request in the gateway's words).
 */
@Module({
  imports: [SpeechModule],
  controllers: [OpenAiSpeechController],
  providers: [OpenAiSpeechService],
})
export class OpenAiSpeechDoorModule {
  static readonly door = 'openai';
  static readonly renderings: readonly Type<DoorRendering>[] = [];
}
