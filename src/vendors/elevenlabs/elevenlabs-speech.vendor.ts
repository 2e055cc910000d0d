import { Injectable } from '@nestjs/common';
import { SYNC_GENERATION_TIMEOUT_MS, UpstreamClient } from '../../infra/relay/upstream-client.js';
import { speechAudioOf } from '../contracts/speech-answer.js';
import type { SpeechAudio, SpeechCreate, SpeechFormat, SpeechModelSpec, SpeechVendor } from '../contracts/speech-vendor.js';
import { failedGenerations } from '../contracts/sync-generation.js';
import type { VendorAccount } from '../contracts/vendor.js';
import { ELEVENLABS, elevenlabsRefusal } from './elevenlabs.vendor.js';

/**
 * The gateway's voice names (OpenAI's) as ElevenLabs' premade voices of the default library, each chosen for the
 * same character (its voice library's descriptions): a channel may map them to voices of its own account
 * instead, and any voice id of its account is taken as `{id}`.
 */
export const ELEVENLABS_DEFAULT_VOICES: Readonly<Record<string, string>> = {
  // neutral, balanced: River (relaxed, neutral)
  alloy: 'SAz9YHcvj6GT2YYXdXww',
  // warm, conversational male: Chris (charming, down-to-earth)
  ash: 'iP95p4xoKVk53GoZ742B',
  // emotive British male: George (warm, captivating storyteller)
  ballad: 'JBFqnCBsd6RMkjVDRZzb',
  // warm, friendly female: Sarah (mature, reassuring)
  coral: 'EXAVITQu4vr4xnSDxMaL',
  // clear, resonant male: Eric (smooth, trustworthy)
  echo: 'cjVigY5qzO86Huf0OWal',
  // British, expressive: Daniel (steady broadcaster)
  fable: 'onwK4e9ZLuTAKqWW03F9',
  // bright, energetic female: Jessica (playful, bright, warm)
  nova: 'cgSgspJ2msm6clMCkdW9',
  // deep, authoritative male: Brian (deep, resonant)
  onyx: 'nPczCjzI2devNBz1zQrb',
  // calm, wise female: Matilda (knowledgable, professional)
  sage: 'XrExE9yKIg1WjnnlVkGX',
  // soft, clear female: Alice (clear, engaging educator)
  shimmer: 'Xb7hH8MSUJpSbSDYk0k2',
  // versatile, expressive male: Liam (energetic)
  verse: 'TX3LPaxmHKxFdv7VOQHJ',
  // natural female: Laura (enthusiast, quirky)
  marin: 'FGY2WhTYpPnrIDTdsKH5',
  // natural male: Roger (laid-back, casual)
  cedar: 'CwhRBWXzGAHq8TQ4Fs17',
};

/** The longest answer taken: 4,096 characters spoken slowly as 24 kHz PCM (48 kB a second) is some 30 MB. */
const RESULT_MAX_BYTES = 64 * 1024 * 1024;

/** `voice_settings.speed`: 0.7 to 1.2 ("Values below 1.0 will slow down the speech, … the range is 0.7 to 1.2"). */
const SPEED = { min: 0.7, max: 1.2 };

function model(id: string, maxInput: number, speed: SpeechModelSpec['speed']): SpeechModelSpec {
  // no `instructions`: its models take none (v3's audio tags are words of the text itself)
  return { id, voices: ELEVENLABS_DEFAULT_VOICES, voiceIds: true, maxInput, instructions: false, speed };
}

/**
 * ElevenLabs' speech models (its models page): Multilingual v2 takes 10,000 characters, Flash v2.5 and Turbo
 * v2.5 40,000, v3 5,000 (each more than the gateway's 4,096); v3 takes no `speed` in its voice settings, the
 * others 0.7 to 1.2.
 */
export const ELEVENLABS_SPEECH_MODELS: readonly SpeechModelSpec[] = [
  model('eleven_multilingual_v2', 10_000, SPEED),
  model('eleven_flash_v2_5', 40_000, SPEED),
  model('eleven_turbo_v2_5', 40_000, SPEED),
  model('eleven_v3', 5_000, null),
];

/**
 * The `output_format` asked and what it answers: MP3 where MP3 is asked (44.1 kHz at 128 kbit/s, what every
 * plan makes), else raw PCM at 24 kHz (`pcm_24000`: OpenAI's PCM exactly; lossless, so the gateway's one
 * conversion into WAV, FLAC, Opus or AAC is the only loss). Its `opus_48000_*` and `wav_*` formats are not
 * used: the gateway converts from PCM alike.
 */
export function elevenlabsOutputOf(format: SpeechFormat): { outputFormat: string; format: SpeechFormat; sampleRate: number } {
  return format === 'mp3' ? { outputFormat: 'mp3_44100_128', format: 'mp3', sampleRate: 44_100 } : { outputFormat: 'pcm_24000', format: 'pcm', sampleRate: 24_000 };
}

/** The body of `POST /v1/text-to-speech/{voice_id}`, in ElevenLabs' words. */
export interface ElevenLabsSpeechBody {
  text: string;
  model_id: string;
  voice_settings?: { speed: number };
}

/**
 * The request ElevenLabs is sent: its path (the voice id, the output format in the query) and body (`text`,
 * `model_id`, and `voice_settings.speed` when a speed other than 1 was asked: the voice's stored settings apply
 * otherwise, and a speed overrides only that one of them).
 */
export function elevenlabsSpeechRequest({ model, request, voiceId }: SpeechCreate): { path: string; body: ElevenLabsSpeechBody } {
  const { outputFormat } = elevenlabsOutputOf(request.format);
  return {
    path: `/v1/text-to-speech/${encodeURIComponent(voiceId)}?output_format=${outputFormat}`,
    body: {
      text: request.input,
      model_id: model.id,
      ...(request.speed !== 1 && model.speed ? { voice_settings: { speed: request.speed } } : {}),
    },
  };
}

/**
 * ElevenLabs' text to speech, synchronous: `POST /v1/text-to-speech/{voice_id}?output_format=…` (JSON) answers
 * the audio's bytes. Errors (`elevenlabsRefusal`): 401 `quota_exceeded` the account's credits, other 401s its
 * key, 400 `bad_prompt` its moderation, 404 `voice_not_found` and 422 the request, 429 busy, 5xx a failed
 * generation, not charged (another channel may take the task). A 200 that is not audio of the format asked is
 * an unusable answer. It keeps no id of ours (its `request-id` is its own): a create whose answer was lost is
 * never sent there again.
 */
@Injectable()
export class ElevenLabsSpeechVendor implements SpeechVendor {
  static readonly protocol = ELEVENLABS.protocol;
  static readonly models = ELEVENLABS_SPEECH_MODELS;
  readonly protocol = ElevenLabsSpeechVendor.protocol;
  readonly models = ELEVENLABS_SPEECH_MODELS;
  /** It answers at once: nothing is polled. */
  readonly minPollS = ELEVENLABS.pollFloorS;

  constructor(private readonly client: UpstreamClient) {}

  async create(account: VendorAccount, create: SpeechCreate): Promise<SpeechAudio> {
    const { path, body } = elevenlabsSpeechRequest(create);
    const output = elevenlabsOutputOf(create.request.format);
    return failedGenerations(async () => {
      const answer = await this.client.call('POST', `${account.baseUrl}${path}`, {
        body,
        auth: account.auth,
        headers: { accept: output.format === 'mp3' ? 'audio/mpeg' : '*/*' },
        failFast: true,
        refusal: elevenlabsRefusal,
        maxBytes: RESULT_MAX_BYTES,
        timeoutMs: SYNC_GENERATION_TIMEOUT_MS,
      });
      return speechAudioOf(answer, output.format, output.sampleRate);
    });
  }
}
