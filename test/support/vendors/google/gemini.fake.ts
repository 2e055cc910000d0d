import { createHash, randomBytes } from 'node:crypto';
import type { ServerResponse } from 'node:http';
import sharp from 'sharp';
import { sendJson, startServer, type TestServer } from '../../http-server.js';
import { LYRIA, lyriaText, proSeconds, songLike } from './lyria-song.js';

/** The sizes each shape is made at, 1K (2K and 4K: twice and four times a side): the image generation guide's table of the 3.x models. */
const SIZES_3: Record<string, [number, number]> = {
  '1:1': [1024, 1024],
  '2:3': [848, 1264],
  '3:2': [1264, 848],
  '3:4': [896, 1200],
  '4:3': [1200, 896],
  '4:5': [928, 1152],
  '5:4': [1152, 928],
  '9:16': [768, 1376],
  '16:9': [1376, 768],
  '21:9': [1584, 672],
};
/** gemini-3.1-flash-image-preview's long shapes, 1K. */
const LONG_3_1: Record<string, [number, number]> = { '1:4': [512, 2048], '4:1': [2048, 512], '1:8': [384, 3072], '8:1': [3072, 384] };
/** gemini-2.5-flash-image's (1K only). */
const SIZES_2_5: Record<string, [number, number]> = {
  '1:1': [1024, 1024],
  '2:3': [832, 1248],
  '3:2': [1248, 832],
  '3:4': [864, 1184],
  '4:3': [1184, 864],
  '4:5': [896, 1152],
  '5:4': [1152, 896],
  '9:16': [768, 1344],
  '16:9': [1344, 768],
  '21:9': [1536, 672],
};
const MODELS: Record<string, { sizes: Record<string, [number, number]>; imageSizes: string[]; maxImages: number; thinks: boolean }> = {
  'gemini-2.5-flash-image': { sizes: SIZES_2_5, imageSizes: ['1K'], maxImages: 3, thinks: false },
  'gemini-3-pro-image-preview': { sizes: SIZES_3, imageSizes: ['1K', '2K', '4K'], maxImages: 14, thinks: true },
  'gemini-3.1-flash-image-preview': { sizes: { ...SIZES_3, ...LONG_3_1 }, imageSizes: ['512', '1K', '2K', '4K'], maxImages: 14, thinks: true },
};
const SCALE: Record<string, number> = { '512': 0.5, '1K': 1, '2K': 2, '4K': 4 };

export interface FakeGemini {
  server: TestServer;
  /** Its origin: what Google's SDKs take as `httpOptions.baseUrl` (they add the API version). */
  url: string;
  /** What a channel names: the origin with its API version, `…/v1beta`. */
  baseUrl: string;
  /**
   * Each generateContent received, in Google's vocabulary: the model of its path, how the key came (`header`:
   * x-goog-api-key, `query`: ?key=), its JSON body, and what was answered (the image's shape and size; Lyria's
   * song: its length, audio type and the text beside it).
   */
  received: {
    path: string;
    model: string;
    key: 'header' | 'query';
    body: Record<string, any>;
    status?: number;
    made?: { aspectRatio: string; width: number; height: number; mimeType: string };
    song?: { seconds: number; mimeType: string; text: string | null };
  }[];
  /**
   * `refuse`: the candidate comes without an image, finishReason IMAGE_SAFETY (Lyria's without a song, SAFETY;
   * HTTP 200); `blockPrompt`: the prompt is blocked (promptFeedback.blockReason PROHIBITED_CONTENT, no
   * candidate); `textOnly`: the model answers in words only (STOP); `busy`: the next calls answer 429
   * RESOURCE_EXHAUSTED (a rate limit); `noQuota`: 429 with `limit: 0` (a free-tier key: no image quota at all);
   * `overloaded`: the next calls answer 503 UNAVAILABLE; `serverError`: the next calls answer 500 INTERNAL.
   */
  knobs: { refuse?: boolean; blockPrompt?: boolean; textOnly?: boolean; busy?: number; noQuota?: boolean; overloaded?: number; serverError?: number };
  authFailures: string[];
  close(): Promise<void>;
}

/**
 * Google's Gemini API (v1beta) for its image models, from js-genai's types and converters and the Gemini API's
 * image generation guide: `POST /v1beta/models/{model}:generateContent` with `contents` (text and
 * `inlineData`/`inline_data` parts) and `generationConfig` (`responseModalities`, `imageConfig: {aspectRatio,
 * imageSize}` — upper-case K, `seed`), answered at once with `candidates[0].content.parts`: for the 3.x models a
 * thought (words and an interim image, `thought: true`) first, then the image as `inlineData` (PNG) with a
 * `thoughtSignature`; `finishReason`, `usageMetadata`, `modelVersion`, `responseId`. The shape asked (none: the
 * first input image's nearest, else 1:1) at the model's size for it. `GET /v1beta/models`. The key in
 * `x-goog-api-key` or `?key=`; errors `{error: {code, message, status, details}}` (a bad key: 400
 * INVALID_ARGUMENT with ErrorInfo API_KEY_INVALID).
 *
 * Lyria 3's music models on the same route (its music generation guide): text and up to 10 images in one user
 * turn (a conversation is refused: a song is made in one turn), `generationConfig.responseModalities` AUDIO or
 * AUDIO and TEXT (none: both), `responseMimeType` audio/mpeg (the pro model also audio/wav), answered with the
 * lyrics and structure as a text part then the song as `inlineData` (48 kHz stereo MP3 made by ffmpeg; the clip
 * model 30 s, the pro model the length its prompt asks in words, else two minutes).
 */
export async function startFakeGemini(apiKey: string): Promise<FakeGemini> {
  const received: FakeGemini['received'] = [];
  const authFailures: string[] = [];
  const knobs: FakeGemini['knobs'] = {};
  const fail = (res: ServerResponse, code: number, status: string, message: string, details: unknown[] = []) => sendJson(res, code, { error: { code, message, status, ...(details.length > 0 ? { details } : {}) } });
  const invalid = (res: ServerResponse, message: string) => fail(res, 400, 'INVALID_ARGUMENT', message);

  const server = await startServer(async (req, res) => {
    const url = new URL(req.url ?? '/', 'http://x');
    const headerKey = req.headers['x-goog-api-key'];
    const given = typeof headerKey === 'string' ? headerKey : (url.searchParams.get('key') ?? '');
    if (given !== apiKey) {
      authFailures.push(given);
      const message = given ? 'API key not valid. Please pass a valid API key.' : 'Method doesn\'t allow unregistered callers (callers without established identity). Please use API Key or other form of API consumer identity to call this API.';
      if (!given) return fail(res, 403, 'PERMISSION_DENIED', message);
      return fail(res, 400, 'INVALID_ARGUMENT', message, [
        { '@type': 'type.googleapis.com/google.rpc.ErrorInfo', reason: 'API_KEY_INVALID', domain: 'googleapis.com', metadata: { service: 'generativelanguage.googleapis.com' } },
        { '@type': 'type.googleapis.com/google.rpc.LocalizedMessage', locale: 'en-US', message: 'API key not valid. Please pass a valid API key.' },
      ]);
    }
    if (req.method === 'GET' && url.pathname === '/v1beta/models') {
      const size = Math.max(1, Number(url.searchParams.get('pageSize') ?? 50));
      const models = [
        ...Object.keys(MODELS).map((id) => ({ name: `models/${id}`, version: '1', displayName: id, inputTokenLimit: 32_768, outputTokenLimit: 32_768, supportedGenerationMethods: ['generateContent', 'countTokens', 'batchGenerateContent'] })),
        ...Object.keys(LYRIA).map((id) => ({ name: `models/${id}`, version: '3', displayName: id, inputTokenLimit: 131_072, outputTokenLimit: 65_536, supportedGenerationMethods: ['generateContent'] })),
      ];
      return sendJson(res, 200, { models: models.slice(0, size), ...(size < models.length ? { nextPageToken: 'next' } : {}) });
    }
    const call = req.method === 'POST' ? /^\/v1beta\/models\/([^/:]+):generateContent$/.exec(url.pathname) : null;
    if (!call) return fail(res, 404, 'NOT_FOUND', `Requested entity was not found: ${req.method} ${url.pathname}`);
    const modelId = decodeURIComponent(call[1]);
    let body: Record<string, any>;
    try {
      body = JSON.parse(req.body.toString('utf8')) as Record<string, any>;
    } catch {
      return invalid(res, 'Invalid JSON payload received.');
    }
    const entry: FakeGemini['received'][number] = { path: url.pathname, model: modelId, key: typeof headerKey === 'string' ? 'header' : 'query', body };
    received.push(entry);
    const model = MODELS[modelId];
    const lyria = LYRIA[modelId];
    if (!model && !lyria) return fail(res, 404, 'NOT_FOUND', `models/${modelId} is not found for API version v1beta, or is not supported for generateContent. Call ListModels to see the list of available models and their supported methods.`);

    // contents: one user turn (or more) of text and inline images
    if (!Array.isArray(body.contents) || body.contents.length === 0) return invalid(res, '* GenerateContentRequest.contents: contents is not specified');
    const parts = (body.contents as Record<string, any>[]).flatMap((c) => (Array.isArray(c?.parts) ? (c.parts as Record<string, any>[]) : []));
    if (parts.length === 0) return invalid(res, '* GenerateContentRequest.contents[0].parts: contents.parts must not be empty.');
    const inputs: Buffer[] = [];
    for (const part of parts) {
      const inline = part.inlineData ?? part.inline_data;
      if (inline) {
        const mimeType = inline.mimeType ?? inline.mime_type;
        if (!['image/png', 'image/jpeg', 'image/webp', 'image/heic', 'image/heif'].includes(mimeType)) return invalid(res, `Unsupported MIME type: ${String(mimeType)}`);
        if (typeof inline.data !== 'string' || !/^[A-Za-z0-9+/]+=*$/.test(inline.data)) return invalid(res, "Invalid value at 'contents[0].parts[1].inline_data.data' (TYPE_BYTES), Base64 decoding failed");
        inputs.push(Buffer.from(inline.data, 'base64'));
      } else if (typeof part.text !== 'string') {
        return invalid(res, '* GenerateContentRequest.contents[0].parts: a part must hold text or inline_data');
      }
    }
    const maxImages = model?.maxImages ?? lyria.maxImages;
    if (inputs.length > maxImages) return invalid(res, `Too many images in the request: at most ${maxImages} for ${modelId}.`);
    const config = (body.generationConfig ?? {}) as Record<string, any>;
    const textTokens = parts.reduce((sum, p) => sum + (typeof p.text === 'string' ? Math.ceil(p.text.length / 4) : 0), 0);
    const usage = (modality: 'IMAGE' | 'AUDIO', outTokens: number) => ({
      promptTokenCount: textTokens + inputs.length * 1290,
      candidatesTokenCount: outTokens,
      totalTokenCount: textTokens + inputs.length * 1290 + outTokens,
      promptTokensDetails: [{ modality: 'TEXT', tokenCount: textTokens }, ...(inputs.length > 0 ? [{ modality: 'IMAGE', tokenCount: inputs.length * 1290 }] : [])],
      ...(outTokens > 0 ? { candidatesTokensDetails: [{ modality, tokenCount: outTokens }] } : {}),
    });
    /** The knobs that make any call fail before it is made (HTTP errors); true when one did. */
    const misbehaved = (): boolean => {
      if ((knobs.overloaded ?? 0) > 0) {
        knobs.overloaded!--;
        fail(res, 503, 'UNAVAILABLE', 'The model is overloaded. Please try again later.');
        return true;
      }
      if ((knobs.serverError ?? 0) > 0) {
        knobs.serverError!--;
        fail(res, 500, 'INTERNAL', 'An internal error has occurred. Please retry or report in https://developers.generativeai.google/guide/troubleshooting');
        return true;
      }
      if (knobs.noQuota) {
        fail(res, 429, 'RESOURCE_EXHAUSTED', `You exceeded your current quota, please check your plan and billing details. For more information on this error, head to: https://ai.google.dev/gemini-api/docs/rate-limits. To monitor your current usage, head to: https://ai.dev/rate-limit. \n* Quota exceeded for metric: generativelanguage.googleapis.com/generate_content_free_tier_requests, limit: 0, model: ${modelId}\nPlease retry in 54.2s.`, [
          { '@type': 'type.googleapis.com/google.rpc.QuotaFailure', violations: [{ quotaMetric: 'generativelanguage.googleapis.com/generate_content_free_tier_requests', quotaId: 'GenerateRequestsPerDayPerProjectPerModel-FreeTier', quotaDimensions: { location: 'global', model: modelId } }] },
          { '@type': 'type.googleapis.com/google.rpc.RetryInfo', retryDelay: '54s' },
        ]);
        return true;
      }
      if ((knobs.busy ?? 0) > 0) {
        knobs.busy!--;
        fail(res, 429, 'RESOURCE_EXHAUSTED', 'Resource has been exhausted (e.g. check quota).', [{ '@type': 'type.googleapis.com/google.rpc.RetryInfo', retryDelay: '2s' }]);
        return true;
      }
      return false;
    };
    if (lyria) {
      // a song is made in one turn: no conversation
      if ((body.contents as Record<string, any>[]).some((c) => c?.role === 'model')) return invalid(res, `Multi-turn conversations are not supported by models/${modelId}: send the whole request in one user turn.`);
      const modalities = (config.responseModalities ?? ['AUDIO', 'TEXT']) as unknown[];
      const known = Array.isArray(modalities) && modalities.every((m) => m === 'AUDIO' || m === 'TEXT');
      if (!known || !modalities.includes('AUDIO') || new Set(modalities).size !== modalities.length) {
        return invalid(res, `The requested combination of response modalities (${Array.isArray(modalities) ? modalities.join(', ') : String(modalities)}) is not supported by the model. models/${modelId} accepts the following combination of response modalities:\n* AUDIO\n* AUDIO, TEXT\n`);
      }
      const mimeType = String(config.responseMimeType ?? config.response_mime_type ?? 'audio/mpeg');
      if (!lyria.mimeTypes.includes(mimeType)) return invalid(res, `* GenerateContentRequest.generation_config.response_mime_type: unsupported MIME type ${mimeType} for models/${modelId}; allowed: ${lyria.mimeTypes.join(', ')}.`);
      const prompt = parts.map((p) => (typeof p.text === 'string' ? p.text : '')).join('\n').trim();
      if (!prompt && inputs.length === 0) return invalid(res, '* GenerateContentRequest.contents: the prompt is empty');
      if (misbehaved()) return;
      const responseId = randomBytes(12).toString('base64url');
      entry.status = 200;
      if (knobs.blockPrompt) return sendJson(res, 200, { promptFeedback: { blockReason: 'PROHIBITED_CONTENT' }, usageMetadata: usage('AUDIO', 0), modelVersion: modelId, responseId });
      if (knobs.refuse) return sendJson(res, 200, { candidates: [{ finishReason: 'SAFETY', index: 0 }], usageMetadata: usage('AUDIO', 0), modelVersion: modelId, responseId });
      if (knobs.textOnly) {
        return sendJson(res, 200, { candidates: [{ content: { role: 'model', parts: [{ text: "I can't create music that imitates a specific artist's voice, but I can make something in a similar genre." }] }, finishReason: 'STOP', index: 0 }], usageMetadata: usage('AUDIO', 0), modelVersion: modelId, responseId });
      }
      const seconds = lyria.fixedS ?? proSeconds(prompt);
      const audio = await songLike(mimeType === 'audio/wav' ? 'wav' : 'mp3', seconds, `${modelId}:${prompt}`);
      const text = modalities.includes('TEXT') ? lyriaText(prompt, seconds) : null;
      entry.song = { seconds, mimeType, text };
      return sendJson(res, 200, {
        candidates: [{ content: { role: 'model', parts: [...(text ? [{ text }] : []), { inlineData: { mimeType, data: audio.toString('base64') } }] }, finishReason: 'STOP', index: 0 }],
        usageMetadata: usage('AUDIO', Math.ceil(seconds * 25)),
        modelVersion: modelId,
        responseId,
      });
    }

    // generationConfig
    const modalities = (config.responseModalities ?? ['TEXT', 'IMAGE']) as unknown[];
    if (!Array.isArray(modalities) || modalities.some((m) => m !== 'TEXT' && m !== 'IMAGE')) return invalid(res, "Invalid value at 'generation_config.response_modalities'");
    const imageConfig = (config.imageConfig ?? config.image_config ?? {}) as Record<string, unknown>;
    const imageSize = imageConfig.imageSize ?? imageConfig.image_size;
    if (imageSize !== undefined && !model.imageSizes.includes(String(imageSize))) return invalid(res, `Invalid image size '${String(imageSize)}': ${modelId} takes ${model.imageSizes.join(', ')} (upper case).`);
    const askedRatio = imageConfig.aspectRatio ?? imageConfig.aspect_ratio;
    if (askedRatio !== undefined && !model.sizes[String(askedRatio)]) return invalid(res, `Unsupported aspect ratio: ${String(askedRatio)}.`);
    if (config.seed !== undefined && !Number.isInteger(config.seed)) return invalid(res, "Invalid value at 'generation_config.seed' (TYPE_INT32)");

    if (misbehaved()) return;

    const responseId = randomBytes(12).toString('base64url');
    entry.status = 200;
    if (knobs.blockPrompt) return sendJson(res, 200, { promptFeedback: { blockReason: 'PROHIBITED_CONTENT' }, usageMetadata: usage('IMAGE', 0), modelVersion: modelId, responseId });
    if (knobs.refuse) return sendJson(res, 200, { candidates: [{ finishReason: 'IMAGE_SAFETY', index: 0 }], usageMetadata: usage('IMAGE', 0), modelVersion: modelId, responseId });
    if (knobs.textOnly || !modalities.includes('IMAGE')) {
      return sendJson(res, 200, { candidates: [{ content: { role: 'model', parts: [{ text: 'I can describe the picture, but here it is in words: a quiet harbour at dusk.' }] }, finishReason: 'STOP', index: 0 }], usageMetadata: usage('IMAGE', 0), modelVersion: modelId, responseId });
    }

    // the image: the shape asked, or the first input's nearest, or 1:1; at the size class asked
    let ratio = askedRatio === undefined ? '1:1' : String(askedRatio);
    if (askedRatio === undefined && inputs.length > 0) {
      const meta = await sharp(inputs[0]).metadata();
      ratio = nearestRatio((meta.width ?? 1) / (meta.height ?? 1), Object.keys(model.sizes));
    }
    const scale = SCALE[String(imageSize ?? '1K')];
    const [width, height] = model.sizes[ratio].map((side) => Math.round(side * scale));
    const words = `${parts.map((p) => p.text ?? '').join(' ')}:${String(config.seed ?? Math.random())}`;
    const image = await picture(width, height, words);
    entry.made = { aspectRatio: ratio, width, height, mimeType: 'image/png' };
    const thought = model.thinks
      ? [
          { text: '**Composing the scene**\n\nI am placing the subject in the centre and choosing the palette.', thought: true },
          { inlineData: { mimeType: 'image/png', data: (await picture(64, 64, `${words}:draft`)).toString('base64') }, thought: true },
        ]
      : [];
    return sendJson(res, 200, {
      candidates: [{ content: { role: 'model', parts: [...thought, { inlineData: { mimeType: 'image/png', data: image.toString('base64') }, ...(model.thinks ? { thoughtSignature: randomBytes(24).toString('base64') } : {}) }] }, finishReason: 'STOP', index: 0 }],
      usageMetadata: usage('IMAGE', 1290 * scale * scale),
      modelVersion: modelId,
      responseId,
    });
  });
  return { server, url: server.url, baseUrl: `${server.url}/v1beta`, received, knobs, authFailures, close: () => server.close() };
}

function nearestRatio(shape: number, ratios: string[]): string {
  const of = (r: string) => {
    const [w, h] = r.split(':').map(Number);
    return Math.abs(Math.log(w / h / shape));
  };
  return ratios.reduce((best, r) => (of(r) < of(best) ? r : best));
}

/** A real PNG (opaque: Gemini makes no transparent backgrounds), a colour of its words with a block in its middle. */
async function picture(width: number, height: number, words: string): Promise<Buffer> {
  const hash = createHash('sha256').update(words).digest();
  const block = await sharp({ create: { width: Math.max(1, Math.round(width / 3)), height: Math.max(1, Math.round(height / 3)), channels: 3, background: { r: hash[3], g: hash[4], b: hash[5] } } })
    .png()
    .toBuffer();
  return sharp({ create: { width, height, channels: 3, background: { r: hash[0], g: hash[1], b: hash[2] } } })
    .composite([{ input: block, gravity: 'centre' }])
    .removeAlpha()
    .png()
    .toBuffer();
}
