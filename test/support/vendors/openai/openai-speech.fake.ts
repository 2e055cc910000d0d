import { randomBytes } from 'node:crypto';
import type { ServerResponse } from 'node:http';
import { sendJson, startServer, type TestServer } from '../../http-server.js';
import { type SpeechEncoding, speechLike, spokenSeconds } from '../speech-audio.js';

/** The nine voices every model speaks, and the four only gpt-4o-mini-tts does (OpenAI's text-to-speech guide). */
const CLASSIC = ['alloy', 'ash', 'coral', 'echo', 'fable', 'nova', 'onyx', 'sage', 'shimmer'];
const ALL = [...CLASSIC, 'ballad', 'verse', 'marin', 'cedar'];
/** Each model: its voices, whether it takes instructions, custom voices (`{id}`) and `stream_format: sse`. */
const MODELS: Record<string, { voices: string[]; steerable: boolean }> = {
  'tts-1': { voices: CLASSIC, steerable: false },
  'tts-1-hd': { voices: CLASSIC, steerable: false },
  'gpt-4o-mini-tts': { voices: ALL, steerable: true },
  'gpt-4o-mini-tts-2025-12-15': { voices: ALL, steerable: true },
  'gpt-4o-mini-tts-2025-03-20': { voices: ALL, steerable: true },
};
const FORMATS = ['mp3', 'opus', 'aac', 'flac', 'wav', 'pcm'];
/** Each format's Content-Type as OpenAI answers it. */
const CONTENT_TYPES: Record<string, string> = { mp3: 'audio/mpeg', opus: 'audio/opus', aac: 'audio/aac', flac: 'audio/flac', wav: 'audio/wav', pcm: 'audio/pcm' };

export interface FakeOpenAISpeech {
  server: TestServer;
  /** The base a client or a channel names: `…/v1`. */
  url: string;
  /** Each request to `/v1/audio/speech` (answered or refused): its JSON body in OpenAI's words, the status answered, and the audio's format and length. */
  received: { body: Record<string, unknown>; status: number; format?: string; seconds?: number; sse?: boolean; audio?: Buffer }[];
  /**
   * `serverError`: the next creates answer 500 server_error; `rateLimited`: the next creates answer 429
   * rate_limit_exceeded; `insufficientQuota`: 429 insufficient_quota (the account's credit); `refusal`: creates
   * refused by its safety system (400 moderation_blocked); `notAudio`: the next creates answer 200 with a JSON
   * body instead of audio (what a misconfigured proxy does); `damaged`: the next creates answer 200 with the
   * audio's first 200 bytes (its header whole) and garbage after them (a stream cut and garbled on its way: an
   * encoded format's, as the tests ask; garbage after a WAV's header is PCM, which decodes);
   * `released`: model ids the account has besides the ones above (models OpenAI released later), each served as
   * gpt-4o-mini-tts is (its voices, instructions, sse).
   */
  knobs: { serverError?: number; rateLimited?: number; insufficientQuota?: boolean; refusal?: boolean; notAudio?: number; damaged?: number; released?: string[] };
  /** The custom voices (`{id}`) the account has. */
  customVoices: Set<string>;
  authFailures: string[];
  close(): Promise<void>;
}

/**
 * OpenAI's Speech API, from openai-node's `src/resources/audio/speech.ts` and OpenAI's text-to-speech guide:
 * `POST /v1/audio/speech` (JSON: `model`, `input` up to 4,096 characters, `voice` — a name the model speaks, or
 * `{id}` of a custom voice for gpt-4o-mini-tts —, `instructions` (not for tts-1 and tts-1-hd: refused here, where
 * OpenAI ignores them, so that a test sees them sent), `response_format` mp3 (default), opus, aac, flac, wav or
 * pcm (raw 16-bit little-endian, 24 kHz), `speed` 0.25-4, `stream_format` audio (default) or sse (not for
 * tts-1/-hd: `speech.audio.delta` events with Base64 audio, then `speech.audio.done` with its usage)), answered
 * with the audio's bytes at 24 kHz; `GET /v1/models`. Errors as `{error: {message, type, param, code}}` with an
 * `x-request-id`.
 */
export async function startFakeOpenAISpeech(apiKey: string): Promise<FakeOpenAISpeech> {
  const received: FakeOpenAISpeech['received'] = [];
  const authFailures: string[] = [];
  const knobs: FakeOpenAISpeech['knobs'] = {};
  const customVoices = new Set<string>(['voice_1234']);
  const fail = (res: ServerResponse, status: number, message: string, type: string, code: string | null, param: string | null = null) => {
    res.setHeader('x-request-id', `req_${randomBytes(16).toString('hex')}`);
    sendJson(res, status, { error: { message, type, param, code } });
  };
  const invalid = (res: ServerResponse, param: string, message: string, code: string | null = 'invalid_value') => fail(res, 400, message, 'invalid_request_error', code, param);

  const server = await startServer(async (req, res) => {
    const url = new URL(req.url ?? '/', 'http://x');
    const bearer = String(req.headers.authorization ?? '');
    if (bearer !== `Bearer ${apiKey}`) {
      authFailures.push(bearer);
      return fail(res, 401, `Incorrect API key provided: ${bearer.replace(/^Bearer /, '').slice(0, 6)}****. You can find your API key at https://platform.openai.com/account/api-keys.`, 'invalid_request_error', 'invalid_api_key');
    }
    if (req.method === 'GET' && url.pathname === '/v1/models') {
      const data = [...Object.keys(MODELS), 'gpt-image-1', 'gpt-4o'].map((id) => ({ id, object: 'model', created: 1_745_000_000, owned_by: 'system' }));
      return sendJson(res, 200, { object: 'list', data });
    }
    if (req.method !== 'POST' || url.pathname !== '/v1/audio/speech') return fail(res, 404, `Invalid URL (${req.method} ${url.pathname})`, 'invalid_request_error', null);

    let body: Record<string, unknown>;
    try {
      const parsed: unknown = JSON.parse(req.body.toString('utf8'));
      if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) throw new Error('not an object');
      body = parsed as Record<string, unknown>;
    } catch {
      return invalid(res, 'body', 'We could not parse the JSON body of your request.', null);
    }
    const entry: FakeOpenAISpeech['received'][number] = { body, status: 0 };
    received.push(entry);
    const answer = (status: number, send: () => void) => {
      entry.status = status;
      send();
    };

    if (knobs.serverError && knobs.serverError > 0) {
      knobs.serverError--;
      return answer(500, () => fail(res, 500, 'The server had an error while processing your request. Sorry about that!', 'server_error', null));
    }
    if (knobs.rateLimited && knobs.rateLimited > 0) {
      knobs.rateLimited--;
      res.setHeader('retry-after', '1');
      return answer(429, () => fail(res, 429, 'Rate limit reached for tts-1 in organization org-fake on requests per min (RPM): Limit 3, Used 3, Requested 1.', 'requests', 'rate_limit_exceeded'));
    }
    if (knobs.insufficientQuota) return answer(429, () => fail(res, 429, 'You exceeded your current quota, please check your plan and billing details.', 'insufficient_quota', 'insufficient_quota'));

    const model = typeof body.model === 'string' ? (MODELS[body.model] ?? (knobs.released?.includes(body.model) ? MODELS['gpt-4o-mini-tts'] : undefined)) : undefined;
    const refuse = (param: string, message: string, code?: string | null) => answer(400, () => invalid(res, param, message, code));
    if (body.model === undefined) return refuse('model', "Missing required parameter: 'model'.", 'missing_required_parameter');
    if (!model) return answer(404, () => fail(res, 404, `The model \`${String(body.model)}\` does not exist or you do not have access to it.`, 'invalid_request_error', 'model_not_found', 'model'));
    const input = body.input;
    if (typeof input !== 'string') return refuse('input', "Missing required parameter: 'input'.", 'missing_required_parameter');
    if (input.length === 0) return refuse('input', "Invalid 'input': empty string. Expected a string with minimum length 1, but got an empty string instead.", 'empty_string');
    if (input.length > 4096) return refuse('input', `Invalid 'input': string too long. Expected a string with maximum length 4096, but got a string with length ${input.length} instead.`, 'string_above_max_length');
    const voice = body.voice;
    if (voice === undefined) return refuse('voice', "Missing required parameter: 'voice'.", 'missing_required_parameter');
    if (typeof voice === 'object' && voice !== null && !Array.isArray(voice)) {
      const id = (voice as { id?: unknown }).id;
      if (!model.steerable) return refuse('voice', `Custom voices are not supported for ${String(body.model)}.`);
      if (typeof id !== 'string' || !customVoices.has(id)) return refuse('voice.id', `Voice '${String(id)}' not found.`);
    } else if (typeof voice !== 'string' || !model.voices.includes(voice)) {
      return refuse('voice', `Invalid value: '${String(voice)}'. Supported values are: ${model.voices.map((v) => `'${v}'`).join(', ')}.`);
    }
    if (body.instructions !== undefined) {
      if (typeof body.instructions !== 'string') return refuse('instructions', "Invalid type for 'instructions': expected a string.", 'invalid_type');
      if (!model.steerable) return refuse('instructions', `Instructions are not supported for ${String(body.model)}.`);
      if (body.instructions.length > 4096) return refuse('instructions', `Invalid 'instructions': string too long. Expected a string with maximum length 4096, but got a string with length ${body.instructions.length} instead.`, 'string_above_max_length');
    }
    const format = body.response_format === undefined ? 'mp3' : String(body.response_format);
    if (!FORMATS.includes(format)) return refuse('response_format', `Invalid value: '${format}'. Supported values are: 'mp3', 'opus', 'aac', 'flac', 'wav', and 'pcm'.`);
    const speed = body.speed === undefined ? 1 : body.speed;
    if (typeof speed !== 'number') return refuse('speed', "Invalid type for 'speed': expected a decimal, but got a string instead.", 'invalid_type');
    if (speed < 0.25) return refuse('speed', `Invalid 'speed': decimal below minimum value. Expected a value >= 0.25, but got ${speed} instead.`, 'decimal_below_min_value');
    if (speed > 4) return refuse('speed', `Invalid 'speed': decimal above maximum value. Expected a value <= 4, but got ${speed} instead.`, 'decimal_above_max_value');
    const streamFormat = body.stream_format === undefined ? 'audio' : String(body.stream_format);
    if (!['audio', 'sse'].includes(streamFormat)) return refuse('stream_format', `Invalid value: '${streamFormat}'. Supported values are: 'sse' and 'audio'.`);
    if (streamFormat === 'sse' && !model.steerable) return refuse('stream_format', `stream_format 'sse' is not supported for ${String(body.model)}.`);
    if (knobs.refusal) return refuse('input', 'Your request was rejected by the safety system.', 'moderation_blocked');

    const seconds = spokenSeconds(input, speed);
    // OpenAI streams its WAV as it is made: a 44-byte header whose RIFF and data sizes say "unknown" (0xFFFFFFFF)
    let audio = format === 'wav' ? streamedWav(await speechLike('pcm', seconds)) : await speechLike(format as SpeechEncoding, seconds);
    if (knobs.damaged && knobs.damaged > 0) {
      knobs.damaged--;
      audio = Buffer.concat([audio.subarray(0, 200), Buffer.alloc(4000, 0x5a)]);
    }
    Object.assign(entry, { format, seconds, audio, ...(streamFormat === 'sse' ? { sse: true } : {}) });
    res.setHeader('x-request-id', `req_${randomBytes(16).toString('hex')}`);
    res.setHeader('openai-processing-ms', '412');
    if (knobs.notAudio && knobs.notAudio > 0) {
      knobs.notAudio--;
      return answer(200, () => sendJson(res, 200, { object: 'audio.speech', note: 'not audio' }));
    }
    if (streamFormat === 'sse') {
      entry.status = 200;
      res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
      // the audio in pieces of 16 kB, as it is made
      for (let at = 0; at < audio.length; at += 16_384) res.write(`data: ${JSON.stringify({ type: 'speech.audio.delta', audio: audio.subarray(at, at + 16_384).toString('base64') })}\n\n`);
      const inputTokens = Math.ceil(input.length / 4);
      const outputTokens = Math.ceil(seconds * 20);
      res.end(`data: ${JSON.stringify({ type: 'speech.audio.done', usage: { input_tokens: inputTokens, output_tokens: outputTokens, total_tokens: inputTokens + outputTokens } })}\n\n`);
      return;
    }
    answer(200, () => {
      res.writeHead(200, { 'content-type': CONTENT_TYPES[format], 'content-length': audio.length });
      res.end(audio);
    });
  });
  return { server, url: `${server.url}/v1`, received, knobs, customVoices, authFailures, close: () => server.close() };
}

/** 24 kHz mono 16-bit PCM as OpenAI's `wav` comes (seen from api.openai.com: RIFF and data sizes 0xFFFFFFFF, as streamed). */
export function streamedWav(pcm: Buffer): Buffer {
  const h = Buffer.alloc(44);
  h.write('RIFF', 0, 'ascii');
  h.writeUInt32LE(0xffffffff, 4);
  h.write('WAVEfmt ', 8, 'ascii');
  h.writeUInt32LE(16, 16);
  h.writeUInt16LE(1, 20);
  h.writeUInt16LE(1, 22);
  h.writeUInt32LE(24_000, 24);
  h.writeUInt32LE(48_000, 28);
  h.writeUInt16LE(2, 32);
  h.writeUInt16LE(16, 34);
  h.write('data', 36, 'ascii');
  h.writeUInt32LE(0xffffffff, 40);
  return Buffer.concat([h, pcm]);
}
