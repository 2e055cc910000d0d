import { Injectable } from '@nestjs/common';
import { SYNC_GENERATION_TIMEOUT_MS, UpstreamClient } from '../../infra/relay/upstream-client.js';
import { speechAudioOf } from '../contracts/speech-answer.js';
import { SPEECH_MAX_INPUT, type SpeechAudio, type SpeechCreate, type SpeechModelSpec, type SpeechVendor } from '../contracts/speech-vendor.js';
import { failedGenerations } from '../contracts/sync-generation.js';
import type { VendorAccount } from '../contracts/vendor.js';
import { OPENAI, openaiRefusal } from './openai.vendor.js';

/** The voices every OpenAI speech model speaks (OpenAI's text-to-speech guide: tts-1 and tts-1-hd speak these nine). */
const CLASSIC_VOICES = ['alloy', 'ash', 'coral', 'echo', 'fable', 'nova', 'onyx', 'sage', 'shimmer'] as const;
/** The voices only gpt-4o-mini-tts speaks besides them (the guide recommends marin and cedar for it). */
const NEWER_VOICES = ['ballad', 'verse', 'marin', 'cedar'] as const;
/** OpenAI's own voice names: a voice id not among them is a custom voice, sent as `{id}`. */
export const OPENAI_VOICES: readonly string[] = [...CLASSIC_VOICES, ...NEWER_VOICES];

/** OpenAI's voices under their own names (the gateway's voice names are OpenAI's). */
function voicesOf(names: readonly string[]): Record<string, string> {
  return Object.fromEntries(names.map((name) => [name, name]));
}

/** OpenAI's `speed`: 0.25 to 4 (openai-node's SpeechCreateParams; no model is said to take less). */
const SPEED = { min: 0.25, max: 4 };

/**
 * OpenAI's speech models (openai-node `src/resources/audio/speech.ts`, OpenAI's text-to-speech guide):
 * gpt-4o-mini-tts (and its dated snapshot) takes `instructions` ("Does not work with tts-1 or tts-1-hd"), all
 * thirteen voices and custom voices (`{id}`, made from audio samples); tts-1 and tts-1-hd the nine classic
 * voices and no instructions. All take 4,096 characters and `speed` 0.25 to 4. OpenAI shuts the three down on
 * 2027-01-06; a channel may serve their successors under names of its own.
 */
export const OPENAI_SPEECH_MODELS: readonly SpeechModelSpec[] = [
  { id: 'gpt-4o-mini-tts', voices: voicesOf(OPENAI_VOICES), voiceIds: true, maxInput: SPEECH_MAX_INPUT, instructions: true, speed: SPEED },
  { id: 'gpt-4o-mini-tts-2025-12-15', voices: voicesOf(OPENAI_VOICES), voiceIds: true, maxInput: SPEECH_MAX_INPUT, instructions: true, speed: SPEED },
  { id: 'tts-1', voices: voicesOf(CLASSIC_VOICES), voiceIds: false, maxInput: SPEECH_MAX_INPUT, instructions: false, speed: SPEED },
  { id: 'tts-1-hd', voices: voicesOf(CLASSIC_VOICES), voiceIds: false, maxInput: SPEECH_MAX_INPUT, instructions: false, speed: SPEED },
];

/** OpenAI's speech is 24 kHz in every format (`pcm`: "24kHz (16-bit signed, low-endian)"). */
const SAMPLE_RATE = 24_000;
/** The longest answer taken: 4,096 characters spoken slowly as WAV or PCM (48 kB a second) is some 30 MB. */
const RESULT_MAX_BYTES = 64 * 1024 * 1024;

/** The body of `POST /audio/speech`, in OpenAI's words. */
export interface OpenAISpeechBody {
  model: string;
  input: string;
  voice: string | { id: string };
  instructions?: string;
  response_format: string;
  speed?: number;
}

/**
 * The request OpenAI is sent: the model's id, the text, the voice (one of OpenAI's names as a string, any other
 * id — a channel's mapping to a custom voice, or `{id}` asked — as `{id}`), `instructions` where asked (the
 * door has refused them for a model without), the format asked (OpenAI makes all six), and `speed` unless 1
 * (its default).
 */
export function openaiSpeechBody({ model, request, voiceId }: SpeechCreate): OpenAISpeechBody {
  return {
    model: model.id,
    input: request.input,
    voice: OPENAI_VOICES.includes(voiceId) ? voiceId : { id: voiceId },
    ...(request.instructions !== null && model.instructions ? { instructions: request.instructions } : {}),
    response_format: request.format,
    ...(request.speed !== 1 ? { speed: request.speed } : {}),
  };
}

/**
 * OpenAI's Speech API, synchronous: `POST /audio/speech` (JSON) answers the audio's bytes in the format asked
 * (`Accept: application/octet-stream`, as openai-node asks). A gateway channel speaks this gateway's OpenAI
 * speech door through it. Errors as its images' (`openaiRefusal`): 401 credentials, 429 `insufficient_quota`
 * the account's credit, other 429s busy, 400 the request (a refusal by its safety system names its code), 5xx a
 * failed generation, not charged (`failedGenerations`: another channel may take the task). A 200 that is
 * not audio of the asked format is an unusable answer. It keeps no id of ours: a create whose answer was lost is
 * never sent there again.
 */
@Injectable()
export class OpenAISpeechVendor implements SpeechVendor {
  static readonly protocol = OPENAI.protocol;
  static readonly models = OPENAI_SPEECH_MODELS;
  readonly protocol = OpenAISpeechVendor.protocol;
  readonly models = OPENAI_SPEECH_MODELS;
  /** It answers at once: nothing is polled. */
  readonly minPollS = OPENAI.pollFloorS;

  constructor(private readonly client: UpstreamClient) {}

  async create(account: VendorAccount, create: SpeechCreate): Promise<SpeechAudio> {
    const body = openaiSpeechBody(create);
    return failedGenerations(async () => {
      const answer = await this.client.call('POST', `${account.baseUrl}/audio/speech`, {
        body,
        auth: account.auth,
        headers: { accept: 'application/octet-stream' },
        failFast: true,
        refusal: openaiRefusal,
        maxBytes: RESULT_MAX_BYTES,
        timeoutMs: SYNC_GENERATION_TIMEOUT_MS,
      });
      return speechAudioOf(answer, create.request.format, SAMPLE_RATE);
    });
  }
}

