import { randomBytes } from 'node:crypto';
import type { ServerResponse } from 'node:http';
import { sendJson, startServer, type TestServer } from '../../http-server.js';
import { speechLike, spokenSeconds } from '../speech-audio.js';

/** Its text-to-speech models (the Gemini API's speech generation guide). */
const MODELS = ['gemini-2.5-flash-preview-tts', 'gemini-2.5-pro-preview-tts'];
/** Its 30 prebuilt voices. */
const VOICES = ['Zephyr', 'Puck', 'Charon', 'Kore', 'Fenrir', 'Leda', 'Orus', 'Aoede', 'Callirrhoe', 'Autonoe', 'Enceladus', 'Iapetus', 'Umbriel', 'Algieba', 'Despina', 'Erinome', 'Algenib', 'Rasalgethi', 'Laomedeia', 'Achernar', 'Alnilam', 'Schedar', 'Gacrux', 'Pulcherrima', 'Achird', 'Zubenelgenubi', 'Vindemiatrix', 'Sadachbia', 'Sadaltager', 'Sulafat'];
const RATE = 24_000;

export interface FakeGeminiSpeech {
  server: TestServer;
  /** The base a client or a channel names: `…/v1beta`. */
  url: string;
  /** Each generateContent request (answered or refused): the model in its path, its JSON body in Google's words, the voice(s) read from it, and what was answered. */
  received: { model: string; body: Record<string, unknown>; voices: string[]; text: string; status: number; seconds?: number }[];
  /**
   * `serverError`: the next creates answer 500 INTERNAL; `rateLimited`: the next creates answer 429
   * RESOURCE_EXHAUSTED; `blocked`: the prompt is blocked (200, `promptFeedback.blockReason` PROHIBITED_CONTENT,
   * no candidate); `finishOther`: the next creates answer 200 with a candidate that has no content
   * (`finishReason: OTHER`, what its preview TTS models do now and then).
   */
  knobs: { serverError?: number; rateLimited?: number; blocked?: boolean; finishOther?: number };
  authFailures: string[];
  close(): Promise<void>;
}

/**
 * The Gemini API's speech generation, from @google/genai's types and Google's speech generation guide:
 * `POST /v1beta/models/{model}:generateContent` with `contents` (the text, steered in words: "Say cheerfully:
 * …"), `generationConfig.responseModalities: ["AUDIO"]` (any other is refused: these models speak only) and
 * `speechConfig` — `voiceConfig.prebuiltVoiceConfig.voiceName` (one of 30) or `multiSpeakerVoiceConfig`
 * (two speakers) —, answered with `candidates[0].content.parts[0].inlineData` `{mimeType:
 * "audio/L16;codec=pcm;rate=24000", data}` (Base64 16-bit PCM, mono) and its `usageMetadata`; `GET
 * /v1beta/models`. Auth by `x-goog-api-key` (or `?key=`). Errors as `{error: {code, message, status}}`.
 */
export async function startFakeGeminiSpeech(apiKey: string): Promise<FakeGeminiSpeech> {
  const received: FakeGeminiSpeech['received'] = [];
  const authFailures: string[] = [];
  const knobs: FakeGeminiSpeech['knobs'] = {};
  const fail = (res: ServerResponse, code: number, status: string, message: string, details?: unknown[]) => sendJson(res, code, { error: { code, message, status, ...(details ? { details } : {}) } });

  const server = await startServer(async (req, res) => {
    const url = new URL(req.url ?? '/', 'http://x');
    const key = String(req.headers['x-goog-api-key'] ?? url.searchParams.get('key') ?? '');
    if (key !== apiKey) {
      authFailures.push(key);
      return fail(res, 400, 'INVALID_ARGUMENT', 'API key not valid. Please pass a valid API key.', [{ '@type': 'type.googleapis.com/google.rpc.ErrorInfo', reason: 'API_KEY_INVALID', domain: 'googleapis.com' }]);
    }
    if (req.method === 'GET' && url.pathname === '/v1beta/models') {
      return sendJson(res, 200, { models: MODELS.map((m) => ({ name: `models/${m}`, displayName: m, supportedGenerationMethods: ['countTokens', 'generateContent'], inputTokenLimit: 8192, outputTokenLimit: 16384 })) });
    }
    const route = /^\/v1beta\/models\/([^/:]+):generateContent$/.exec(url.pathname);
    if (req.method !== 'POST' || !route) return fail(res, 404, 'NOT_FOUND', `Method not found: ${req.method} ${url.pathname}`);
    const model = decodeURIComponent(route[1]);

    let body: Record<string, unknown>;
    try {
      const parsed: unknown = JSON.parse(req.body.toString('utf8'));
      if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) throw new Error('not an object');
      body = parsed as Record<string, unknown>;
    } catch {
      return fail(res, 400, 'INVALID_ARGUMENT', 'Invalid JSON payload received.');
    }
    const entry: FakeGeminiSpeech['received'][number] = { model, body, voices: [], text: '', status: 0 };
    received.push(entry);
    const answer = (code: number, send: () => void) => {
      entry.status = code;
      send();
    };
    const invalid = (message: string) => answer(400, () => fail(res, 400, 'INVALID_ARGUMENT', message));

    if (knobs.serverError && knobs.serverError > 0) {
      knobs.serverError--;
      return answer(500, () => fail(res, 500, 'INTERNAL', 'An internal error has occurred. Please retry or report in https://developers.generativeai.google/guide/troubleshooting'));
    }
    if (knobs.rateLimited && knobs.rateLimited > 0) {
      knobs.rateLimited--;
      return answer(429, () => fail(res, 429, 'RESOURCE_EXHAUSTED', 'You exceeded your current quota, please check your plan and billing details. Quota exceeded for metric: generativelanguage.googleapis.com/generate_requests_per_model, limit: 10', [{ '@type': 'type.googleapis.com/google.rpc.RetryInfo', retryDelay: '1s' }]));
    }
    if (!MODELS.includes(model)) return answer(404, () => fail(res, 404, 'NOT_FOUND', `models/${model} is not found for API version v1beta, or is not supported for generateContent. Call ListModels to see the list of available models and their supported methods.`));

    const contents = body.contents;
    if (!Array.isArray(contents) || contents.length === 0) return invalid('* GenerateContentRequest.contents: contents is not specified');
    const texts: string[] = [];
    for (const [i, content] of contents.entries()) {
      const parts = (content as { parts?: unknown })?.parts;
      if (!Array.isArray(parts) || parts.length === 0) return invalid(`* GenerateContentRequest.contents[${i}].parts: contents.parts must not be empty.`);
      for (const part of parts) if (typeof (part as { text?: unknown })?.text === 'string') texts.push((part as { text: string }).text);
    }
    const text = texts.join('\n');
    entry.text = text;
    if (text.trim().length === 0) return invalid('* GenerateContentRequest.contents: the text to speak is empty');
    const config = (body.generationConfig ?? {}) as { responseModalities?: unknown; speechConfig?: Record<string, unknown> };
    const modalities = config.responseModalities;
    if (!Array.isArray(modalities) || modalities.length !== 1 || modalities[0] !== 'AUDIO') return invalid(`The requested combination of response modalities (${Array.isArray(modalities) ? modalities.join(', ') : 'TEXT'}) is not supported by the model. models/${model} accepts the following combination of response modalities:\n* AUDIO\n`);
    const speech = config.speechConfig ?? {};
    const single = (speech.voiceConfig as { prebuiltVoiceConfig?: { voiceName?: unknown } } | undefined)?.prebuiltVoiceConfig?.voiceName;
    const multi = (speech.multiSpeakerVoiceConfig as { speakerVoiceConfigs?: { speaker?: unknown; voiceConfig?: { prebuiltVoiceConfig?: { voiceName?: unknown } } }[] } | undefined)?.speakerVoiceConfigs;
    if (single !== undefined && multi !== undefined) return invalid('* GenerateContentRequest.generation_config.speech_config: voice_config and multi_speaker_voice_config are mutually exclusive.');
    const asked = multi ? multi.map((s) => s.voiceConfig?.prebuiltVoiceConfig?.voiceName) : single === undefined ? [] : [single];
    if (multi && multi.length !== 2) return invalid('* GenerateContentRequest.generation_config.speech_config.multi_speaker_voice_config.speaker_voice_configs: exactly 2 speakers are supported.');
    for (const voice of asked) {
      const known = VOICES.find((v) => typeof voice === 'string' && v.toLowerCase() === voice.toLowerCase());
      if (!known) return invalid(`* GenerateContentRequest.generation_config.speech_config.voice_config.prebuilt_voice_config.voice_name: Voice ${String(voice)} is not supported.`);
    }
    entry.voices = asked.map(String);
    if (knobs.blocked) return answer(200, () => sendJson(res, 200, { promptFeedback: { blockReason: 'PROHIBITED_CONTENT' }, usageMetadata: { promptTokenCount: Math.ceil(text.length / 4), totalTokenCount: Math.ceil(text.length / 4) }, modelVersion: model }));
    if (knobs.finishOther && knobs.finishOther > 0) {
      knobs.finishOther--;
      return answer(200, () => sendJson(res, 200, { candidates: [{ finishReason: 'OTHER', index: 0 }], modelVersion: model, responseId: randomBytes(8).toString('base64url') }));
    }

    const seconds = spokenSeconds(text);
    entry.seconds = seconds;
    const pcm = await speechLike('pcm', seconds, RATE);
    const promptTokens = Math.ceil(text.length / 4);
    const audioTokens = Math.ceil(seconds * 25);
    answer(200, () =>
      sendJson(res, 200, {
        candidates: [{ content: { role: 'model', parts: [{ inlineData: { mimeType: `audio/L16;codec=pcm;rate=${RATE}`, data: pcm.toString('base64') } }] }, finishReason: 'STOP', index: 0 }],
        usageMetadata: {
          promptTokenCount: promptTokens,
          candidatesTokenCount: audioTokens,
          totalTokenCount: promptTokens + audioTokens,
          promptTokensDetails: [{ modality: 'TEXT', tokenCount: promptTokens }],
          candidatesTokensDetails: [{ modality: 'AUDIO', tokenCount: audioTokens }],
        },
        modelVersion: model,
        responseId: randomBytes(8).toString('base64url'),
      }),
    );
  });
  return { server, url: `${server.url}/v1beta`, received, knobs, authFailures, close: () => server.close() };
}
