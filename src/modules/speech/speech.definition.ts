import type { KindDefinition } from '../../common/tasks/task-kind.js';
import { GATEWAY } from '../../vendors/gateway/gateway.vendor.js';
import { SpeechModelDto } from './dto/speech-model.dto.js';

/** Text to speech: queued → in_progress → completed | failed (OpenAI's words for its jobs; its speech door holds the request until the end). */
export const SPEECH_DEFINITION: KindDefinition = {
  name: 'speech',
  states: { queued: 'queued', running: 'in_progress', succeeded: 'completed', failed: 'failed' },
  noun: 'speech',
  settings: {
    prefix: 'SPEECH',
    timeoutS: 120,
    // credits per 1,000 characters of input, each started thousand counted whole
    prices: { kchars: { env: 'PRICE_SPEECH_1K_CHARS', default: 1 } },
    // RELAY_SPEECH_URL speaks another gateway speaking its OpenAI speech door
    channels: { configProtocol: GATEWAY.protocol },
    costRouting: true,
    options: {
      // how long the OpenAI speech door holds a request for its task's end (0: the task's deadline and 15 s)
      holdS: { env: 'SPEECH_HOLD_S', default: 0, min: 0, max: 3600 },
      // how many characters the sandbox speaks per second (its audio's length: about 15, a reader's pace)
      sandboxCharsPerS: { env: 'SPEECH_SANDBOX_CHARS_PER_S', default: 15, min: 1, max: 1000 },
    },
  },
  openapi: { tag: 'speech', description: "Text to speech: OpenAI's speech API (the official openai SDK's audio.speech.create works with baseURL <this service>/openai/v1), made by OpenAI, ElevenLabs or Gemini voices." },
  models: { dto: SpeechModelDto },
};
