import { Injectable } from '@nestjs/common';
import { z } from 'zod';
import { SYNC_GENERATION_TIMEOUT_MS, UpstreamClient, UpstreamRefused } from '../../infra/relay/upstream-client.js';
import type { SpeechAudio, SpeechCreate, SpeechModelSpec, SpeechVendor } from '../contracts/speech-vendor.js';
import { failedGenerations } from '../contracts/sync-generation.js';
import { UnusableAnswer, type VendorAccount } from '../contracts/vendor.js';
import { GOOGLE, googleRefusal } from './google.vendor.js';

/** Gemini's 30 prebuilt voices (its speech generation guide), each with the character the guide gives it. */
export const GEMINI_VOICES = [
  'Zephyr', // bright
  'Puck', // upbeat
  'Charon', // informative
  'Kore', // firm
  'Fenrir', // excitable
  'Leda', // youthful
  'Orus', // firm
  'Aoede', // breezy
  'Callirrhoe', // easy-going
  'Autonoe', // bright
  'Enceladus', // breathy
  'Iapetus', // clear
  'Umbriel', // easy-going
  'Algieba', // smooth
  'Despina', // smooth
  'Erinome', // clear
  'Algenib', // gravelly
  'Rasalgethi', // informative
  'Laomedeia', // upbeat
  'Achernar', // soft
  'Alnilam', // firm
  'Schedar', // even
  'Gacrux', // mature
  'Pulcherrima', // forward
  'Achird', // friendly
  'Zubenelgenubi', // casual
  'Vindemiatrix', // gentle
  'Sadachbia', // lively
  'Sadaltager', // knowledgeable
  'Sulafat', // warm
] as const;

/**
 * The gateway's voice names (OpenAI's) as Gemini voices of the same character; a channel may map them otherwise,
 * and any of the 30 is taken by its name as `{id}`.
 */
export const GEMINI_DEFAULT_VOICES: Readonly<Record<string, string>> = {
  alloy: 'Schedar', // neutral, balanced: even
  ash: 'Achird', // warm, conversational: friendly
  ballad: 'Gacrux', // emotive: mature
  coral: 'Sulafat', // warm, friendly: warm
  echo: 'Iapetus', // clear, resonant: clear
  fable: 'Charon', // expressive storyteller: informative
  nova: 'Puck', // bright, energetic: upbeat
  onyx: 'Alnilam', // deep, authoritative: firm
  sage: 'Vindemiatrix', // calm, wise: gentle
  shimmer: 'Achernar', // soft: soft
  verse: 'Fenrir', // versatile, expressive: excitable
  marin: 'Kore', // natural female: firm (the guide's first example)
  cedar: 'Orus', // natural male: firm
};

function model(id: string): SpeechModelSpec {
  return {
    id,
    voices: GEMINI_DEFAULT_VOICES,
    voiceIds: true,
    // 8,192 input tokens (its model card), of which the instructions take some: a character a token at worst
    maxInput: 8_000,
    // in the prompt's words ("Say cheerfully: …"), as the guide steers it
    instructions: true,
    // no speed parameter (a pace is asked in words)
    speed: null,
  };
}

/** Gemini's speech models (the Gemini API's speech generation guide: single-speaker and multi-speaker text to speech, preview). */
export const GEMINI_SPEECH_MODELS: readonly SpeechModelSpec[] = [model('gemini-2.5-flash-preview-tts'), model('gemini-2.5-pro-preview-tts')];

/** What Gemini's TTS answers: 16-bit PCM, mono, at 24 kHz, unless its mimeType says another rate. */
const DEFAULT_RATE = 24_000;
/** 4,096 characters as 24 kHz PCM in Base64 is some 40 MB of JSON. */
const RESULT_MAX_BYTES = 96 * 1024 * 1024;

/** The finish reasons that say Google's filters stopped it (js-genai's FinishReason): a content refusal. */
const REFUSED = /^(SAFETY|PROHIBITED_CONTENT|RECITATION|BLOCKLIST|SPII)$/;

/** The body of `POST /models/{model}:generateContent` for speech, in Google's words. */
export interface GeminiSpeechBody {
  contents: { role: 'user'; parts: { text: string }[] }[];
  generationConfig: { responseModalities: ['AUDIO']; speechConfig: { voiceConfig: { prebuiltVoiceConfig: { voiceName: string } } } };
}

/**
 * The text Gemini is asked to speak: the input alone, or, with instructions, the instructions then the input as
 * Google's guide steers a voice ("Say cheerfully: Have a wonderful day!"): the instructions' last stop or colon
 * gives way to one colon.
 */
export function geminiPromptOf(input: string, instructions: string | null): string {
  const how = instructions?.trim().replace(/[\s.:;,!]+$/u, '');
  return how ? `${how}: ${input}` : input;
}

/**
 * The request Gemini is sent: one user turn with the prompt, `responseModalities: ["AUDIO"]` and the prebuilt
 * voice by name (single-speaker). No speed: the door refuses one for these models.
 */
export function geminiSpeechBody({ request, voiceId }: SpeechCreate): GeminiSpeechBody {
  return {
    contents: [{ role: 'user', parts: [{ text: geminiPromptOf(request.input, request.instructions) }] }],
    generationConfig: { responseModalities: ['AUDIO'], speechConfig: { voiceConfig: { prebuiltVoiceConfig: { voiceName: voiceId } } } },
  };
}

/** The answer as far as it is read: the first candidate's parts (an `inlineData` among them), its finish reason, and the prompt's feedback. */
const ANSWER = z.object({
  candidates: z
    .array(
      z.object({
        content: z.object({ parts: z.array(z.object({ text: z.string().optional(), inlineData: z.object({ mimeType: z.string(), data: z.string().min(1) }).optional() })).optional() }).nullish(),
        finishReason: z.string().optional(),
        finishMessage: z.string().optional(),
      }),
    )
    .nullish(),
  promptFeedback: z.object({ blockReason: z.string().optional(), blockReasonMessage: z.string().optional() }).nullish(),
});

/** `audio/L16;codec=pcm;rate=24000` read: its rate (24 kHz when it says none); another audio type is not what was asked. */
function rateOf(mimeType: string, path: string): number {
  const [type, ...params] = mimeType.split(';').map((p) => p.trim());
  if (!/^audio\/(L16|pcm)$/i.test(type)) throw new UnusableAnswer(`the upstream's ${path} is ${mimeType}, not 16-bit PCM (audio/L16)`);
  const rate = params.map((p) => /^rate=(\d+)$/i.exec(p)).find(Boolean);
  return rate ? Number(rate[1]) : DEFAULT_RATE;
}

/**
 * The audio of a `generateContent` answer: the first candidate's first `inlineData` part, Base64 of 16-bit
 * little-endian PCM, mono (`audio/L16;codec=pcm;rate=24000`). None: a content refusal where the prompt's
 * `blockReason` or the candidate's `finishReason` says Google's filters stopped it, else an unusable answer
 * naming the field it lacks (`candidates[0].content.parts[0].inlineData`) and the finish reason.
 */
export function geminiAudioOf(json: Record<string, unknown>, status: number): SpeechAudio {
  const parsed = ANSWER.safeParse(json);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new UnusableAnswer(`the upstream's answer is not Gemini's: ${pathOf(issue.path)} ${issue.message.replace(/^Invalid input: /, '').toLowerCase()}`);
  }
  const { candidates, promptFeedback } = parsed.data;
  const blocked = promptFeedback?.blockReason && promptFeedback.blockReason !== 'BLOCKED_REASON_UNSPECIFIED' ? promptFeedback.blockReason : undefined;
  if (blocked) throw new UpstreamRefused(`the upstream's safety filters blocked the prompt (blockReason ${blocked})${promptFeedback?.blockReasonMessage ? `: ${promptFeedback.blockReasonMessage}` : ''}`, status, 'request');
  const candidate = candidates?.[0];
  const parts = candidate?.content?.parts ?? [];
  const at = parts.findIndex((p) => p.inlineData);
  if (at >= 0) {
    const path = `candidates[0].content.parts[${at}].inlineData`;
    const { mimeType, data } = parts[at].inlineData!;
    const sampleRate = rateOf(mimeType, `${path}.mimeType`);
    const bytes = Buffer.from(data, 'base64');
    if (bytes.length === 0 || bytes.length % 2 !== 0) throw new UnusableAnswer(`the upstream's ${path}.data is ${bytes.length} bytes, not 16-bit PCM`);
    return { bytes, format: 'pcm', sampleRate };
  }
  const finish = candidate?.finishReason;
  const words = candidate?.finishMessage ?? parts.find((p) => p.text)?.text?.slice(0, 200);
  if (finish && REFUSED.test(finish)) throw new UpstreamRefused(`the upstream's safety filters refused the speech (finishReason ${finish})${words ? `: ${words}` : ''}`, status, 'request');
  const missing = !candidate ? 'candidates[0]' : parts.length === 0 ? 'candidates[0].content.parts' : 'candidates[0].content.parts[0].inlineData';
  throw new UnusableAnswer(`the upstream answered without audio: no ${missing} (finishReason ${finish ?? 'none'})${words ? `: ${words}` : ''}`);
}

/** A zod issue's path as the answer's fields are written: `candidates[0].content.parts`. */
function pathOf(path: readonly PropertyKey[]): string {
  return path.reduce<string>((out, key) => (typeof key === 'number' ? `${out}[${key}]` : out ? `${out}.${String(key)}` : String(key)), '') || 'the answer';
}

/**
 * Gemini's text to speech, synchronous: `POST /models/{model}:generateContent` with `responseModalities:
 * ["AUDIO"]` and a prebuilt voice answers the speech inline as Base64 PCM (`geminiAudioOf`). Errors as its
 * images' (`googleRefusal`): a key not valid is a 400, a free-tier key's `limit: 0` the account's, other 429s
 * and 503 busy, 5xx a failed generation, not charged (another channel may take the task; its TTS models answer
 * a 500 now and then). It keeps no id of ours: a create whose answer was lost is never sent there again.
 */
@Injectable()
export class GeminiSpeechVendor implements SpeechVendor {
  static readonly protocol = GOOGLE.protocol;
  static readonly models = GEMINI_SPEECH_MODELS;
  readonly protocol = GeminiSpeechVendor.protocol;
  readonly models = GEMINI_SPEECH_MODELS;
  /** It answers at once: nothing is polled (the descriptor's floor is Veo's). */
  readonly minPollS = GOOGLE.pollFloorS;

  constructor(private readonly client: UpstreamClient) {}

  async create(account: VendorAccount, create: SpeechCreate): Promise<SpeechAudio> {
    const url = `${account.baseUrl}/models/${encodeURIComponent(create.model.id)}:generateContent`;
    const body = geminiSpeechBody(create);
    return failedGenerations(async () => {
      const answer = await this.client.call('POST', url, { body, auth: account.auth, failFast: true, refusal: googleRefusal, maxBytes: RESULT_MAX_BYTES, timeoutMs: SYNC_GENERATION_TIMEOUT_MS });
      return geminiAudioOf(answer.json, answer.status);
    });
  }
}
