import { Injectable } from '@nestjs/common';
import { sniffRaster } from '../../infra/images/image-bounds.js';
import { UpstreamClient, UpstreamRefused } from '../../infra/relay/upstream-client.js';
import type { VideoModelSpec } from '../contracts/video-request.js';
import { type VendorCreate, type VendorStatus, type VideoVendor } from '../contracts/video-vendor.js';
import { UnusableAnswer, type VendorAccount } from '../contracts/vendor.js';
import { GOOGLE, googleRefusal } from './google.vendor.js';

function veo(id: string, over: Partial<VideoModelSpec>): VideoModelSpec {
  return {
    id,
    // its default (8 s) first: a request that names no duration is made, and priced, at it
    durations: [8, 6, 4],
    aspectRatios: ['16:9', '9:16'],
    // its 4k (Veo 3.1, 8 s only) is left out for now
    resolutions: ['720p', '1080p'],
    // "1080p: 8s duration only"
    durationsAt: { '1080p': [8] },
    textToVideo: true,
    firstFrame: true,
    // interpolation: a last frame with a first one (Veo 3.1 only)
    lastFrame: false,
    continues: false,
    loop: false,
    // the Gemini API takes no seed (js-genai: "seed parameter is only supported in Vertex AI"; Vertex's Veo does)
    seed: false,
    // Veo 3's sound is always on on the Gemini API (no generateAudio there): asked for, it is made; asked off, refused at create
    audio: true,
    negativePrompt: true,
    concepts: false,
    // its limit is 1,024 tokens; 2,000 characters stays within it for any script
    maxPromptChars: 2000,
    ...over,
  };
}

/**
 * Google's Veo models on the Gemini API as its Veo guide (ai.google.dev/gemini-api/docs/video) gives them:
 * Veo 3.1 and 3.1 Fast (previews) and Veo 3 and 3 Fast (stable), 4, 6 or 8 s, 16:9 or 9:16, 720p or 1080p (8 s
 * only), always with sound, from a prompt or a first frame; the 3.1 models also between a first and a last frame
 * (8 s only). Where sources disagreed (older pages' "Veo 3: 8 s, 16:9 only at 1080p"), the current guide and
 * Vertex AI's model pages are followed.
 */
/**
 * Veo 3.1's reference images ("asset" images the video keeps to): up to 3, with a prompt and without a first or
 * last frame (js-genai's GenerateVideosConfig.referenceImages: "The image, video, or last_frame field are not
 * supported"), 8 s long (the Veo guide); sent as `instances[0].referenceImages[{image, referenceType: "asset"}]`.
 */
const REFERENCES: Partial<VideoModelSpec> = { referenceImages: 3, referencesWithFrames: false };

export const VEO_MODELS: readonly VideoModelSpec[] = [
  veo('veo-3.1-generate-preview', { lastFrame: true, ...REFERENCES }),
  veo('veo-3.1-fast-generate-preview', { lastFrame: true, ...REFERENCES }),
  veo('veo-3.0-generate-001', {}),
  veo('veo-3.0-fast-generate-001', {}),
];

/** A long-running operation (`google.longrunning.Operation`) as the Gemini API answers it. */
interface VeoOperation {
  name?: unknown;
  done?: unknown;
  error?: { code?: unknown; message?: unknown; status?: unknown } | null;
  response?: {
    generateVideoResponse?: {
      generatedSamples?: { video?: { uri?: unknown } | null }[] | null;
      raiMediaFilteredCount?: unknown;
      raiMediaFilteredReasons?: unknown;
    } | null;
  } | null;
}

/** An operation's name as the Gemini API gives it (`models/{model}/operations/{id}`): path segments, nothing that climbs. */
const OPERATION_NAME = /^(?!.*(^|\/)\.\.?(\/|$))[A-Za-z0-9._-]+(\/[A-Za-z0-9._-]+)*$/;

/**
 * Veo through the Gemini API (js-genai's `generateVideos` and `getVideosOperation`, Gemini Developer API
 * converters): `POST {base}/models/{model}:predictLongRunning` with `{instances: [{prompt, image?, lastFrame?}],
 * parameters: {aspectRatio, durationSeconds, resolution, negativePrompt}}` (an image inline only, as
 * `{bytesBase64Encoded, mimeType}`: a frame given by URL is fetched by the gateway and sent as its bytes) →
 * `{name: "models/…/operations/…"}`; `GET {base}/{name}` → `{name, done, response: {generateVideoResponse:
 * {generatedSamples: [{video: {uri}}], raiMediaFilteredCount, raiMediaFilteredReasons}}, error}`. Done without a
 * sample and with filtered ones is its safety filters' refusal (a content refusal); `error` its failure. The
 * key goes in `x-goog-api-key`; errors are Google's (`googleRefusal`). No callbacks: polled. It keeps no id of
 * ours: a create whose answer was lost is never sent there again.
 *
 * The video's `uri` (`{base}/files/{id}:download?alt=media`, kept 2 days) needs the key too, which the relay's
 * download does not send: it is handed on with the key as `?key=` (Google's standard API-key parameter) when it
 * is on the account's own origin, never to another host. The URL is only downloaded at once, never stored, and
 * the outbound layer keeps query strings out of traces and errors.
 */
@Injectable()
export class VeoVideoVendor implements VideoVendor {
  static readonly protocol = 'gemini';
  static readonly models = VEO_MODELS;
  readonly protocol = VeoVideoVendor.protocol;
  readonly models = VEO_MODELS;
  readonly minPollS = GOOGLE.pollFloorS;

  constructor(private readonly client: UpstreamClient) {}

  async create(account: VendorAccount, { model, request, frameImage, referenceImage }: VendorCreate): Promise<{ upstreamId: string; status: VendorStatus }> {
    // what the spec cannot say: its sound cannot be turned off, and a video between two frames is 8 s
    if (request.audio === false) throw new UpstreamRefused(`${model.id} always makes sound on the Gemini API: a video without sound cannot be made`, 400, 'request');
    if (request.lastFrame && request.durationS !== undefined && request.durationS !== 8) throw new UpstreamRefused(`${model.id} makes a video between a first and a last frame 8 s long only`, 400, 'request');
    if (request.referenceImages?.length && request.durationS !== undefined && request.durationS !== 8) throw new UpstreamRefused(`${model.id} makes a video from reference images 8 s long only`, 400, 'request');
    const references = await Promise.all((request.referenceImages ?? []).map(async (_r, i) => ({ image: inline(await referenceImage(i), 'reference'), referenceType: 'asset' })));
    const first = request.firstFrame ? inline(await frameImage('first'), 'first') : undefined;
    const last = request.lastFrame ? inline(await frameImage('last'), 'last') : undefined;
    const body = {
      instances: [{ prompt: request.prompt, ...(first ? { image: first } : {}), ...(last ? { lastFrame: last } : {}), ...(references.length ? { referenceImages: references } : {}) }],
      parameters: {
        ...(request.aspectRatio ? { aspectRatio: request.aspectRatio } : {}),
        // from reference images: 8 s, whether asked or not (its default is 8 too; said, as the guide does)
        ...(request.durationS !== undefined ? { durationSeconds: request.durationS } : references.length ? { durationSeconds: 8 } : {}),
        ...(request.resolution ? { resolution: request.resolution } : {}),
        ...(request.negativePrompt !== undefined ? { negativePrompt: request.negativePrompt } : {}),
      },
    };
    const url = `${account.baseUrl}/models/${encodeURIComponent(model.id)}:predictLongRunning`;
    const answer = (await this.client.call('POST', url, { body, auth: account.auth, failFast: true, refusal: googleRefusal })).json as VeoOperation;
    if (typeof answer.name !== 'string' || !OPERATION_NAME.test(answer.name)) throw new UnusableAnswer('the upstream answered the create request without an operation name');
    return { upstreamId: answer.name, status: answer.done === true ? await this.statusOf(account, answer) : { state: 'working' } };
  }

  async query(account: VendorAccount, upstreamId: string, once: boolean): Promise<VendorStatus> {
    if (!OPERATION_NAME.test(upstreamId)) throw new UnusableAnswer('the upstream operation name is not one the gateway can ask about');
    const operation = (await this.client.call('GET', `${account.baseUrl}/${upstreamId}`, { auth: account.auth, idempotent: true, once, refusal: googleRefusal })).json as VeoOperation;
    return this.statusOf(account, operation);
  }

  private async statusOf(account: VendorAccount, operation: VeoOperation): Promise<VendorStatus> {
    if (operation.done !== true) return { state: 'working' };
    if (operation.error) {
      const words = typeof operation.error.message === 'string' && operation.error.message ? operation.error.message : String(operation.error.status ?? operation.error.code ?? 'no reason given');
      return { state: 'failed', reason: words };
    }
    const answer = operation.response?.generateVideoResponse;
    const uri = answer?.generatedSamples?.find((s) => typeof s?.video?.uri === 'string' && s.video.uri)?.video?.uri as string | undefined;
    if (uri) return { state: 'succeeded', videoUrl: await withKey(account, uri) };
    const filtered = typeof answer?.raiMediaFilteredCount === 'number' ? answer.raiMediaFilteredCount : 0;
    const reasons = Array.isArray(answer?.raiMediaFilteredReasons) ? answer.raiMediaFilteredReasons.filter((r): r is string => typeof r === 'string' && r.length > 0) : [];
    if (filtered > 0 || reasons.length > 0) return { state: 'failed', reason: `the upstream's safety filters removed the video${reasons.length > 0 ? `: ${reasons.join(' ')}` : ''}` };
    return { state: 'failed', reason: 'the upstream finished the operation without a video' };
  }
}

/** A frame's bytes as Veo takes an image: Base64 with its type (PNG, JPEG or WebP). */
function inline(bytes: Buffer | undefined, position: 'first' | 'last' | 'reference'): { bytesBase64Encoded: string; mimeType: string } {
  const format = bytes ? sniffRaster(bytes) : null;
  if (!bytes || !format) throw new UpstreamRefused(`the ${position === 'reference' ? 'reference' : `${position} frame's`} image could not be read as PNG, JPEG or WebP`, 400, 'request');
  return { bytesBase64Encoded: bytes.toString('base64'), mimeType: `image/${format}` };
}

/** The video's link with the account's key as `?key=`, where it is on the account's origin (elsewhere it goes as it came). */
async function withKey(account: VendorAccount, uri: string): Promise<string> {
  if (!URL.canParse(uri) || !URL.canParse(account.baseUrl)) return uri;
  const link = new URL(uri);
  if (link.origin !== new URL(account.baseUrl).origin) return uri;
  const headers = await account.auth.headers();
  const key = Object.entries(headers).find(([name]) => name.toLowerCase() === 'x-goog-api-key')?.[1];
  if (key) link.searchParams.set('key', key);
  return link.toString();
}
