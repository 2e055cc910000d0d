import { randomBytes } from 'node:crypto';
import type { ServerResponse } from 'node:http';
import { sendBytes, sendJson, startServer, type TestServer } from '../../http-server.js';
import { sizedMp4 as clip } from '../../media.js';

/** Each model's resolutions and whether it takes a last frame (interpolation): the Gemini API's Veo guide. */
const MODELS: Record<string, { resolutions: string[]; lastFrame: boolean; references?: number }> = {
  'veo-3.1-generate-preview': { resolutions: ['720p', '1080p', '4k'], lastFrame: true, references: 3 },
  'veo-3.1-fast-generate-preview': { resolutions: ['720p', '1080p', '4k'], lastFrame: true, references: 3 },
  'veo-3.0-generate-001': { resolutions: ['720p', '1080p'], lastFrame: false },
  'veo-3.0-fast-generate-001': { resolutions: ['720p', '1080p'], lastFrame: false },
};
/** Frame sizes by resolution and shape. */
const SIZES: Record<string, Record<string, string>> = {
  '720p': { '16:9': '1280x720', '9:16': '720x1280' },
  '1080p': { '16:9': '1920x1080', '9:16': '1080x1920' },
  '4k': { '16:9': '3840x2160', '9:16': '2160x3840' },
};
/** The parameters the Gemini API (not Vertex AI) takes for Veo: js-genai's generateVideosConfigToMldev. */
const PARAMETERS = ['aspectRatio', 'durationSeconds', 'resolution', 'negativePrompt', 'personGeneration', 'sampleCount', 'enhancePrompt'];
const INSTANCE = ['prompt', 'image', 'lastFrame', 'referenceImages', 'video'];

export interface FakeVeo {
  server: TestServer;
  /** Its origin: what Google's SDKs take as `httpOptions.baseUrl` (they add the API version). */
  url: string;
  /** What a channel names: the origin with its API version, `…/v1beta`. */
  baseUrl: string;
  /** Each predictLongRunning received, in Veo's vocabulary: the model of its path, how the key came, its JSON body, and the operation made (none: refused). */
  received: { model: string; key: 'header' | 'query'; body: Record<string, any>; operation?: string }[];
  /** The operations made, by name: what they make (size `WxH`, seconds) and how often they were asked about. */
  operations: Map<string, { model: string; size: string; seconds: number; polls: number; file: string }>;
  /** Each video downloaded: its file and how the key came. */
  downloads: { file: string; key: 'header' | 'query' }[];
  /**
   * `pollsUntilDone`: the poll that finds an operation done; `filter`: done with its samples removed by the
   * safety filters (raiMediaFilteredCount, no generatedSamples); `failWith`: done with an `error`; `busy`: the
   * next creates answer 429 RESOURCE_EXHAUSTED.
   */
  knobs: { pollsUntilDone: number; filter?: boolean; failWith?: string; busy?: number };
  authFailures: string[];
  close(): Promise<void>;
}

/**
 * Google's Veo on the Gemini API (v1beta), from js-genai's Gemini Developer API converters (generateVideos,
 * getVideosOperation, files.download) and the Gemini API's Veo guide: `POST /v1beta/models/{model}:predictLongRunning`
 * with `{instances: [{prompt, image?: {bytesBase64Encoded, mimeType}, lastFrame?}], parameters: {aspectRatio
 * (16:9, 9:16), durationSeconds (4, 6, 8; 8 at 1080p and 4k, and between two frames), resolution, negativePrompt,
 * personGeneration (allow_all for text, allow_adult with images), sampleCount}}` → `{name:
 * "models/{model}/operations/{id}"}`; `GET /v1beta/{name}` → `{name}` while it works, then `{name, done: true,
 * response: {@type, generateVideoResponse: {generatedSamples: [{video: {uri}}]}}}` (or `raiMediaFilteredCount`
 * and `raiMediaFilteredReasons` without samples, or `error`); the `uri` is `/v1beta/files/{id}:download?alt=media`,
 * fetched with the key. No seed or generateAudio (Vertex AI only). The key in `x-goog-api-key` or `?key=`;
 * errors `{error: {code, message, status}}`. The video is a real MP4 of the size and length asked.
 */
export async function startFakeVeo(apiKey: string): Promise<FakeVeo> {
  const received: FakeVeo['received'] = [];
  const operations: FakeVeo['operations'] = new Map();
  const downloads: FakeVeo['downloads'] = [];
  const authFailures: string[] = [];
  const knobs: FakeVeo['knobs'] = { pollsUntilDone: 2 };
  const fail = (res: ServerResponse, code: number, status: string, message: string) => sendJson(res, code, { error: { code, message, status } });
  const invalid = (res: ServerResponse, message: string) => fail(res, 400, 'INVALID_ARGUMENT', message);

  const server = await startServer(async (req, res) => {
    const url = new URL(req.url ?? '/', 'http://x');
    const headerKey = req.headers['x-goog-api-key'];
    const key: 'header' | 'query' = typeof headerKey === 'string' ? 'header' : 'query';
    const given = typeof headerKey === 'string' ? headerKey : (url.searchParams.get('key') ?? '');
    if (given !== apiKey) {
      authFailures.push(given);
      if (!given) return fail(res, 403, 'PERMISSION_DENIED', "Method doesn't allow unregistered callers (callers without established identity). Please use API Key or other form of API consumer identity to call this API.");
      return fail(res, 400, 'INVALID_ARGUMENT', 'API key not valid. Please pass a valid API key.');
    }
    if (req.method === 'GET' && url.pathname === '/v1beta/models') {
      const models = Object.keys(MODELS).map((id) => ({ name: `models/${id}`, version: '3.0', displayName: id, supportedGenerationMethods: ['predictLongRunning'] }));
      const size = Math.max(1, Number(url.searchParams.get('pageSize') ?? 50));
      return sendJson(res, 200, { models: models.slice(0, size), ...(size < models.length ? { nextPageToken: 'next' } : {}) });
    }
    const file = req.method === 'GET' ? /^\/v1beta\/files\/([a-z0-9]+):download$/.exec(url.pathname) : null;
    if (file) {
      const made = [...operations.values()].find((o) => o.file === file[1]);
      if (!made || url.searchParams.get('alt') !== 'media') return fail(res, 404, 'NOT_FOUND', `Requested entity was not found.`);
      downloads.push({ file: file[1], key });
      return sendBytes(res, 'video/mp4', clip(made.size, made.seconds));
    }
    const poll = req.method === 'GET' ? /^\/v1beta\/(models\/[^/]+\/operations\/[^/]+)$/.exec(url.pathname) : null;
    if (poll) {
      const name = decodeURIComponent(poll[1]);
      const operation = operations.get(name);
      if (!operation) return fail(res, 404, 'NOT_FOUND', 'Requested entity was not found.');
      operation.polls++;
      if (operation.polls < knobs.pollsUntilDone) return sendJson(res, 200, { name });
      const type = 'type.googleapis.com/google.ai.generativelanguage.v1beta.PredictLongRunningResponse';
      if (knobs.failWith) return sendJson(res, 200, { name, done: true, error: { code: 13, message: knobs.failWith, status: 'INTERNAL' } });
      if (knobs.filter) {
        const reasons = ["We encountered an issue with your prompt. Veo could not generate videos because the prompt may violate Google's Generative AI Prohibited Use policy. Support codes: 29310472"];
        return sendJson(res, 200, { name, done: true, response: { '@type': type, generateVideoResponse: { raiMediaFilteredCount: 1, raiMediaFilteredReasons: reasons } } });
      }
      const uri = `${server.url}/v1beta/files/${operation.file}:download?alt=media`;
      return sendJson(res, 200, { name, done: true, response: { '@type': type, generateVideoResponse: { generatedSamples: [{ video: { uri } }] } } });
    }
    const call = req.method === 'POST' ? /^\/v1beta\/models\/([^/:]+):predictLongRunning$/.exec(url.pathname) : null;
    if (!call) return fail(res, 404, 'NOT_FOUND', `Requested entity was not found: ${req.method} ${url.pathname}`);
    const modelId = decodeURIComponent(call[1]);
    let body: Record<string, any>;
    try {
      body = JSON.parse(req.body.toString('utf8')) as Record<string, any>;
    } catch {
      return invalid(res, 'Invalid JSON payload received.');
    }
    const entry: FakeVeo['received'][number] = { model: modelId, key, body };
    received.push(entry);
    const model = MODELS[modelId];
    if (!model) return fail(res, 404, 'NOT_FOUND', `models/${modelId} is not found for API version v1beta, or is not supported for predictLongRunning. Call ListModels to see the list of available models and their supported methods.`);
    if ((knobs.busy ?? 0) > 0) {
      knobs.busy!--;
      return fail(res, 429, 'RESOURCE_EXHAUSTED', 'Resource has been exhausted (e.g. check quota).');
    }

    // instances: one, with its prompt and inline images
    if (!Array.isArray(body.instances) || body.instances.length !== 1) return invalid(res, 'instances must hold exactly one instance.');
    const instance = (body.instances[0] ?? {}) as Record<string, any>;
    const stray = Object.keys(instance).find((k) => !INSTANCE.includes(k));
    if (stray) return invalid(res, `Invalid JSON payload received. Unknown name "${stray}" at 'instances[0]': Cannot find field.`);
    if (typeof instance.prompt !== 'string' || !instance.prompt.trim()) return invalid(res, 'A prompt is required.');
    for (const field of ['image', 'lastFrame'] as const) {
      const image = instance[field] as Record<string, unknown> | undefined;
      if (image === undefined) continue;
      if (image.gcsUri !== undefined) return invalid(res, `${field}.gcsUri isn't supported by the Gemini API: send the image's bytes.`);
      if (!['image/png', 'image/jpeg', 'image/webp'].includes(String(image.mimeType))) return invalid(res, `Unsupported MIME type for ${field}: ${String(image.mimeType)}`);
      if (typeof image.bytesBase64Encoded !== 'string' || !/^[A-Za-z0-9+/]+=*$/.test(image.bytesBase64Encoded)) return invalid(res, `Invalid value at 'instances[0].${field}.bytes_base64_encoded' (TYPE_BYTES), Base64 decoding failed`);
    }
    const references = instance.referenceImages as Record<string, any>[] | undefined;
    if (references !== undefined) {
      if (!Array.isArray(references) || references.length === 0 || references.length > (model.references ?? 0)) return invalid(res, `\`referenceImages\` isn't supported by this model, or holds more than ${model.references ?? 0} images.`);
      for (const [i, r] of references.entries()) {
        if (!['asset', 'ASSET', 'style', 'STYLE'].includes(String(r?.referenceType))) return invalid(res, `Invalid value at 'instances[0].reference_images[${i}].reference_type'`);
        if (!['image/png', 'image/jpeg', 'image/webp'].includes(String(r?.image?.mimeType)) || typeof r?.image?.bytesBase64Encoded !== 'string') return invalid(res, `instances[0].referenceImages[${i}].image must be inline bytes with a mimeType`);
      }
      if (instance.image !== undefined || instance.lastFrame !== undefined) return invalid(res, '`referenceImages` cannot be used with `image` or `lastFrame`.');
    }
    if (instance.lastFrame !== undefined && !model.lastFrame) return invalid(res, `\`lastFrame\` isn't supported by this model. Please remove it or refer to the Gemini API documentation for supported usage.`);
    if (instance.lastFrame !== undefined && instance.image === undefined) return invalid(res, '`lastFrame` needs `image`: a video between two frames starts at its first one.');

    // parameters
    const parameters = (body.parameters ?? {}) as Record<string, any>;
    for (const name of Object.keys(parameters)) {
      if (!PARAMETERS.includes(name)) return invalid(res, `\`${name}\` isn't supported by this model. Please remove it or refer to the Gemini API documentation for supported usage.`);
    }
    const ratio = String(parameters.aspectRatio ?? '16:9');
    if (!SIZES['720p'][ratio]) return invalid(res, `Aspect ratio ${ratio} is not supported: use 16:9 or 9:16.`);
    const resolution = String(parameters.resolution ?? '720p');
    if (!model.resolutions.includes(resolution)) return invalid(res, `Resolution ${resolution} is not supported by ${modelId}.`);
    const seconds = parameters.durationSeconds === undefined ? 8 : Number(parameters.durationSeconds);
    if (![4, 6, 8].includes(seconds)) return invalid(res, `The duration ${String(parameters.durationSeconds)} is out of bounds: use 4, 6 or 8 seconds.`);
    if (resolution !== '720p' && seconds !== 8) return invalid(res, `${resolution} videos are 8 seconds long only.`);
    if (instance.lastFrame !== undefined && seconds !== 8) return invalid(res, 'A video between a first and a last frame is 8 seconds long only.');
    if (references !== undefined && seconds !== 8) return invalid(res, 'A video from reference images is 8 seconds long only.');
    const images = instance.image !== undefined || instance.lastFrame !== undefined || instance.referenceImages !== undefined;
    if (parameters.personGeneration !== undefined && parameters.personGeneration !== (images ? 'allow_adult' : 'allow_all')) return invalid(res, `personGeneration ${String(parameters.personGeneration)} is not supported here: ${images ? 'allow_adult' : 'allow_all'} only.`);
    if (parameters.negativePrompt !== undefined && typeof parameters.negativePrompt !== 'string') return invalid(res, "Invalid value at 'parameters.negative_prompt' (TYPE_STRING)");

    const name = `models/${modelId}/operations/${randomBytes(6).toString('hex')}`;
    operations.set(name, { model: modelId, size: SIZES[resolution][ratio], seconds, polls: 0, file: randomBytes(6).toString('hex') });
    entry.operation = name;
    return sendJson(res, 200, { name });
  });
  return { server, url: server.url, baseUrl: `${server.url}/v1beta`, received, operations, downloads, knobs, authFailures, close: () => server.close() };
}
