import type { DoorModule } from './contracts/door.js';
import { KlingDoorModule } from './kling/kling-door.module.js';
import { LumaDoorModule } from './luma/luma-door.module.js';
import { OpenAiDoorModule } from './openai/openai-door.module.js';
import { SunoDoorModule } from './suno/suno-door.module.js';
import { OpenAiSpeechDoorModule } from './openai/openai-speech-door.module.js';
import { SunoapiDoorModule } from './sunoapi/sunoapi-door.module.js';
import { ElevenLabsDoorModule } from './elevenlabs/elevenlabs-door.module.js';

/**
 * The registry of doors: one line each. A door's module mounts its routes and provides its renderings
 * (docs/contributors/extending.md, "Adding a door"); the app module mounts this list (`DoorsModule.forRoot`).
 */
export const DOOR_MODULES: readonly DoorModule[] = [LumaDoorModule, KlingDoorModule, OpenAiDoorModule, SunoDoorModule, SunoapiDoorModule, OpenAiSpeechDoorModule, ElevenLabsDoorModule];
