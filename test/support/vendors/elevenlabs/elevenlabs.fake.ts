import { randomBytes } from 'node:crypto';
import type { ServerResponse } from 'node:http';
import { sendJson, startServer, type TestServer } from '../../http-server.js';
import { type SpeechEncoding, speechLike, spokenSeconds } from '../speech-audio.js';
import { handleMusic, type MusicReceived, type MusicState } from './elevenlabs-music.fake.js';
import { handleStems, type StemsReceived } from './elevenlabs-stems.fake.js';

/** Its text-to-speech models and the characters each takes a request (its models page). */
const MODELS: Record<string, { name: string; maxCharacters: number }> = {
  eleven_multilingual_v2: { name: 'Eleven Multilingual v2', maxCharacters: 10_000 },
  eleven_flash_v2_5: { name: 'Eleven Flash v2.5', maxCharacters: 40_000 },
  eleven_turbo_v2_5: { name: 'Eleven Turbo v2.5', maxCharacters: 40_000 },
  eleven_v3: { name: 'Eleven v3', maxCharacters: 5_000 },
};
/** The premade voices of its default library an account has (voice_id → name). */
export const PREMADE_VOICES: Record<string, string> = {
  SAz9YHcvj6GT2YYXdXww: 'River',
  iP95p4xoKVk53GoZ742B: 'Chris',
  JBFqnCBsd6RMkjVDRZzb: 'George',
  EXAVITQu4vr4xnSDxMaL: 'Sarah',
  cjVigY5qzO86Huf0OWal: 'Eric',
  onwK4e9ZLuTAKqWW03F9: 'Daniel',
  cgSgspJ2msm6clMCkdW9: 'Jessica',
  nPczCjzI2devNBz1zQrb: 'Brian',
  XrExE9yKIg1WjnnlVkGX: 'Matilda',
  Xb7hH8MSUJpSbSDYk0k2: 'Alice',
  TX3LPaxmHKxFdv7VOQHJ: 'Liam',
  FGY2WhTYpPnrIDTdsKH5: 'Laura',
  CwhRBWXzGAHq8TQ4Fs17: 'Roger',
  pNInz6obpgDQGcFmaJgB: 'Adam',
  pFZP5JQG7iQjIQuC4Bku: 'Lily',
  bIHbv24MWmeRgasZH58o: 'Will',
  pqHfZKP75CvOlQylNhV4: 'Bill',
  IKne3meq5aSn9XLyUdCD: 'Charlie',
  N2lVS1w4EtoT3dr4eOWO: 'Callum',
  XB0fDUnXU5powFXDhCwa: 'Charlotte',
};
/** Its output formats (the SDK's TextToSpeechConvertRequestOutputFormat): codec, sample rate, bitrate. */
const OUTPUT_FORMAT = /^(mp3|pcm|wav|opus|ulaw|alaw)_(\d+)(?:_(\d+))?$/;
const KNOWN_FORMATS = new Set([
  'mp3_22050_32', 'mp3_24000_48', 'mp3_44100_32', 'mp3_44100_64', 'mp3_44100_96', 'mp3_44100_128', 'mp3_44100_192',
  'pcm_8000', 'pcm_16000', 'pcm_22050', 'pcm_24000', 'pcm_32000', 'pcm_44100', 'pcm_48000',
  'wav_8000', 'wav_16000', 'wav_22050', 'wav_24000', 'wav_32000', 'wav_44100', 'wav_48000',
  'opus_48000_32', 'opus_48000_64', 'opus_48000_96', 'opus_48000_128', 'opus_48000_192', 'ulaw_8000', 'alaw_8000',
]);
const CONTENT_TYPES: Record<string, string> = { mp3: 'audio/mpeg', pcm: 'audio/pcm', wav: 'audio/wav', opus: 'audio/opus', ulaw: 'audio/basic', alaw: 'audio/basic' };

export interface FakeElevenLabs {
  server: TestServer;
  /** The base a client or a channel names (its paths start with /v1/). */
  url: string;
  /** Each text-to-speech request (answered or refused), in ElevenLabs' words: the voice in its path, its query's output_format, its JSON body, whether it was `/stream`, and what was answered. */
  received: { voiceId: string; outputFormat: string; body: Record<string, unknown>; stream: boolean; status: number; seconds?: number }[];
  /**
   * `serverError`: the next creates answer 500; `rateLimited`: the next creates answer 429
   * too_many_concurrent_requests; `quotaExceeded`: 401 quota_exceeded (the account's credits); `refusal`: 400
   * bad_prompt (its moderation); `musicRefusal`: Music's bad_prompt / bad_composition_plan, with its suggestion
   * (`copyright`) or without (`harmful`). The first three apply to music and stem separation too.
   */
  knobs: { serverError?: number; rateLimited?: number; quotaExceeded?: boolean; refusal?: boolean } & MusicState['knobs'];
  /** Each request to Music's routes (`/v1/music`, `/v1/music/stream`, `/v1/music/plan`), in ElevenLabs' words, and what was answered. */
  music: MusicReceived[];
  /** Each request to its stem separation (`/v1/music/stem-separation`), in ElevenLabs' words (the form's file and fields), and what was answered. */
  stems: StemsReceived[];
  /** The voices the account has besides the premade ones (its clones), voice_id → name. */
  voices: Map<string, string>;
  authFailures: string[];
  close(): Promise<void>;
}

/**
 * ElevenLabs' API, from @elevenlabs/elevenlabs-js (`textToSpeech.convert` and `.stream`) and its API reference:
 * `POST /v1/text-to-speech/{voice_id}` and `…/{voice_id}/stream`, `?output_format=` (default mp3_44100_128),
 * JSON `{text, model_id (default eleven_multilingual_v2), voice_settings {stability, similarity_boost, style,
 * use_speaker_boost, speed 0.7-1.2}, language_code, seed, previous_text, next_text, …}`, answered with the
 * audio's bytes (its `request-id` and `x-character-count` headers); `GET /v1/models`, `GET /v1/voices`. Auth by
 * `xi-api-key`. Errors as `{detail: {status, message}}`: 401 invalid_api_key and quota_exceeded, 404
 * voice_not_found, 400 max_character_limit_exceeded and bad_prompt, 429 too_many_concurrent_requests; a body
 * its schema refuses as FastAPI's 422 `{detail: [{loc, msg, type}]}`. Music's routes: `handleMusic`.
 */
export async function startFakeElevenLabs(apiKey: string): Promise<FakeElevenLabs> {
  const received: FakeElevenLabs['received'] = [];
  const authFailures: string[] = [];
  const knobs: FakeElevenLabs['knobs'] = {};
  const voices = new Map<string, string>();
  const music: MusicReceived[] = [];
  const stems: StemsReceived[] = [];
  const fail = (res: ServerResponse, status: number, code: string, message: string) => sendJson(res, status, { detail: { status: code, message } });
  const unprocessable = (res: ServerResponse, loc: (string | number)[], msg: string, type: string) => sendJson(res, 422, { detail: [{ loc, msg, type }] });

  const server = await startServer(async (req, res) => {
    const url = new URL(req.url ?? '/', 'http://x');
    res.setHeader('request-id', randomBytes(10).toString('hex'));
    const key = String(req.headers['xi-api-key'] ?? '');
    if (key !== apiKey) {
      authFailures.push(key);
      return fail(res, 401, 'invalid_api_key', 'Invalid API key');
    }
    if (req.method === 'GET' && url.pathname === '/v1/models') {
      return sendJson(
        res,
        200,
        Object.entries(MODELS).map(([model_id, m]) => ({ model_id, name: m.name, can_do_text_to_speech: true, can_do_voice_conversion: false, can_use_style: true, can_use_speaker_boost: true, max_characters_request_free_user: Math.min(m.maxCharacters, 2_500), max_characters_request_subscribed_user: m.maxCharacters, languages: [{ language_id: 'en', name: 'English' }] })),
      );
    }
    if (req.method === 'GET' && url.pathname === '/v1/voices') {
      const all = [...Object.entries(PREMADE_VOICES).map(([id, name]) => [id, name, 'premade']), ...[...voices].map(([id, name]) => [id, name, 'cloned'])];
      return sendJson(res, 200, { voices: all.map(([voice_id, name, category]) => ({ voice_id, name, category })) });
    }
    if (await handleMusic(url, req.method ?? '', req.body, res, { received: music, knobs })) return;
    if (await handleStems(url, req.method ?? '', req.headers, req.body, res, { received: stems, knobs })) return;
    const route = /^\/v1\/text-to-speech\/([^/]+)(\/stream)?$/.exec(url.pathname);
    if (req.method !== 'POST' || !route) return sendJson(res, 404, { detail: 'Not Found' });

    let body: Record<string, unknown>;
    try {
      const parsed: unknown = JSON.parse(req.body.toString('utf8'));
      if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) throw new Error('not an object');
      body = parsed as Record<string, unknown>;
    } catch {
      return unprocessable(res, ['body'], 'JSON decode error', 'json_invalid');
    }
    const voiceId = decodeURIComponent(route[1]);
    const outputFormat = url.searchParams.get('output_format') ?? 'mp3_44100_128';
    const entry: FakeElevenLabs['received'][number] = { voiceId, outputFormat, body, stream: Boolean(route[2]), status: 0 };
    received.push(entry);
    const answer = (status: number, send: () => void) => {
      entry.status = status;
      send();
    };

    if (knobs.serverError && knobs.serverError > 0) {
      knobs.serverError--;
      return answer(500, () => fail(res, 500, 'internal_error', 'An internal server error occurred.'));
    }
    if (knobs.rateLimited && knobs.rateLimited > 0) {
      knobs.rateLimited--;
      return answer(429, () => fail(res, 429, 'too_many_concurrent_requests', 'Your current subscription is associated with a maximum of 2 concurrent requests and you have exceeded that limit.'));
    }
    if (!KNOWN_FORMATS.has(outputFormat)) return answer(422, () => unprocessable(res, ['query', 'output_format'], `Input should be one of ${[...KNOWN_FORMATS].map((f) => `'${f}'`).join(', ')}`, 'enum'));
    if (typeof body.text !== 'string') return answer(422, () => unprocessable(res, ['body', 'text'], body.text === undefined ? 'Field required' : 'Input should be a valid string', body.text === undefined ? 'missing' : 'string_type'));
    const text = body.text;
    const modelId = body.model_id === undefined ? 'eleven_multilingual_v2' : String(body.model_id);
    const model = MODELS[modelId];
    if (!model) return answer(400, () => fail(res, 400, 'model_not_found', `A model with model ID ${modelId} does not exist.`));
    if (!PREMADE_VOICES[voiceId] && !voices.has(voiceId)) return answer(404, () => fail(res, 404, 'voice_not_found', `A voice with the voice_id ${voiceId} was not found.`));
    if (text.trim().length === 0) return answer(400, () => fail(res, 400, 'invalid_text', 'The text is empty.'));
    if (text.length > model.maxCharacters) return answer(400, () => fail(res, 400, 'max_character_limit_exceeded', `Text is too long. The maximum length for model ${modelId} is ${model.maxCharacters} characters.`));
    const settings = body.voice_settings;
    let speed = 1;
    if (settings !== undefined && settings !== null) {
      if (typeof settings !== 'object' || Array.isArray(settings)) return answer(422, () => unprocessable(res, ['body', 'voice_settings'], 'Input should be a valid dictionary or object to extract fields from', 'model_attributes_type'));
      for (const [field, value] of Object.entries(settings as Record<string, unknown>)) {
        if (field === 'use_speaker_boost') continue;
        if (!['stability', 'similarity_boost', 'style', 'speed'].includes(field)) continue;
        if (typeof value !== 'number') return answer(422, () => unprocessable(res, ['body', 'voice_settings', field], 'Input should be a valid number', 'float_type'));
        if (field === 'speed' && (value < 0.7 || value > 1.2)) return answer(400, () => fail(res, 400, 'invalid_voice_settings', `speed must be between 0.7 and 1.2, got ${value}.`));
        if (field !== 'speed' && (value < 0 || value > 1)) return answer(400, () => fail(res, 400, 'invalid_voice_settings', `${field} must be between 0 and 1, got ${value}.`));
        if (field === 'speed') speed = value;
      }
    }
    if (knobs.quotaExceeded) return answer(401, () => fail(res, 401, 'quota_exceeded', `This request exceeds your quota of 10000. You have 0 credits remaining, while ${text.length} credits are required for this request.`));
    if (knobs.refusal) return answer(400, () => fail(res, 400, 'bad_prompt', 'Your prompt appears to have violated our Terms of Service. Please try again with a different prompt.'));

    const [, codec, rate, kbps] = OUTPUT_FORMAT.exec(outputFormat)!;
    const seconds = spokenSeconds(text, speed);
    const audio = await speechLike(codec as SpeechEncoding, seconds, Number(rate), kbps ? Number(kbps) : undefined);
    entry.seconds = seconds;
    answer(200, () => {
      res.writeHead(200, { 'content-type': CONTENT_TYPES[codec], 'content-length': audio.length, 'x-character-count': String(text.length) });
      res.end(audio);
    });
  });
  return { server, url: server.url, received, music, stems, knobs, voices, authFailures, close: () => server.close() };
}
