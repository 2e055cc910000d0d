import { Injectable } from '@nestjs/common';
import { z } from 'zod';
import { sniffRaster } from '../../infra/images/image-bounds.js';
import { UpstreamClient, UpstreamRefused } from '../../infra/relay/upstream-client.js';
import type { RelayVendor } from '../contracts/relay.js';
import { sentDurationS, sentResolution, type VideoModelSpec, type VideoRequest } from '../contracts/video-request.js';
import { type VendorCreate, type VendorStatus, type VideoVendor } from '../contracts/video-vendor.js';
import { UnusableAnswer, type VendorAccount } from '../contracts/vendor.js';
import { readAnswer } from '../contracts/vendor-answer.js';
import { GOOGLE, googleRefusal } from './google.vendor.js';

function veo(id: string, over: Partial<VideoModelSpec>): VideoModelSpec {
  return {
    id,
    durations: [4, 6, 8],
    // its API's default: a request that names no duration is made, priced and sent at it
    defaultDurationS: 8,
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

/** An operation's name as the Gemini API gives it (`models/{model}/operations/{id}`): path segments, nothing that climbs. */
const OPERATION_NAME = /^(?!.*(^|\/)\.\.?(\/|$))[A-Za-z0-9._-]+(\/[A-Za-z0-9._-]+)*$/;

/**
 * A long-running operation (`google.longrunning.Operation`) as the Gemini API answers it, as far as it is read:
 * `done`, `error` {code, message, status}, and `response.generateVideoResponse` with `generatedSamples[{video:
 * {uri}}]`, `raiMediaFilteredCount` and `raiMediaFilteredReasons` (its safety filters' count and words).
 */
const OPERATION = z.object({
  done: z.boolean().nullish(),
  error: z.object({ code: z.number().nullish(), message: z.string().nullish(), status: z.string().nullish() }).nullish(),
  response: z
    .object({
      generateVideoResponse: z
        .object({
          generatedSamples: z.array(z.object({ video: z.object({ uri: z.string().nullish() }).nullish() }).nullable()).nullish(),
          raiMediaFilteredCount: z.number().nullish(),
          raiMediaFilteredReasons: z.array(z.string()).nullish(),
        })
        .nullish(),
    })
    .nullish(),
});
/** A create's answer: the operation, named. */
const CREATED = OPERATION.extend({ name: z.string().regex(OPERATION_NAME, 'not an operation name (models/…/operations/…)') });

/** A frame or reference image as Veo takes it: Base64 with its type. */
interface VeoImage {
  bytesBase64Encoded: string;
  mimeType: string;
}

/** The images of a create as they go out, inline. */
export interface VeoImages {
  first?: VeoImage;
  last?: VeoImage;
  references: VeoImage[];
}

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
export class VeoVideoVendor implements VideoVendor, RelayVendor<VendorStatus> {
  static readonly protocol = GOOGLE.protocol;
  static readonly models = VEO_MODELS;
  readonly protocol = VeoVideoVendor.protocol;
  readonly models = VEO_MODELS;
  readonly minPollS = GOOGLE.pollFloorS;

  constructor(private readonly client: UpstreamClient) {}

  async create(account: VendorAccount, { model, request, frameImage, referenceImage }: VendorCreate): Promise<{ upstreamId: string; status: VendorStatus }> {
    veoUnmet(model, request);
    const images = {
      references: await Promise.all((request.referenceImages ?? []).map(async (_r, i) => veoInline(await referenceImage(i), 'reference'))),
      first: request.firstFrame ? veoInline(await frameImage('first'), 'first') : undefined,
      last: request.lastFrame ? veoInline(await frameImage('last'), 'last') : undefined,
    };
    const url = `${account.baseUrl}/models/${encodeURIComponent(model.id)}:predictLongRunning`;
    const answer = await this.client.call('POST', url, { body: veoBody(model, request, images), auth: account.auth, failFast: true, refusal: googleRefusal });
    const operation = readAnswer(CREATED, answer.json, 'the create request');
    return { upstreamId: operation.name, status: await this.keyed(account, veoStatus(operation)) };
  }

  async query(account: VendorAccount, upstreamId: string, once: boolean): Promise<VendorStatus> {
    if (!OPERATION_NAME.test(upstreamId)) throw new UnusableAnswer('the upstream operation name is not one the gateway can ask about');
    const operation = await this.client.call('GET', `${account.baseUrl}/${upstreamId}`, { auth: account.auth, idempotent: true, once, refusal: googleRefusal });
    return this.keyed(account, veoStatus(operation.json));
  }

  /** A success's link with the account's key (`veoVideoUrl`). */
  private async keyed(account: VendorAccount, status: VendorStatus): Promise<VendorStatus> {
    if (status.state !== 'succeeded') return status;
    const headers = await account.auth.headers();
    const key = Object.entries(headers).find(([name]) => name.toLowerCase() === 'x-goog-api-key')?.[1];
    return { ...status, videoUrl: veoVideoUrl(status.videoUrl, account.baseUrl, key) };
  }
}

/** What the spec cannot say, refused before anything is read or sent: its sound cannot be turned off, and a video between two frames or from references is 8 s. */
export function veoUnmet(model: VideoModelSpec, request: VideoRequest): void {
  if (request.audio === false) throw new UpstreamRefused(`${model.id} always makes sound on the Gemini API: a video without sound cannot be made`, 400, 'request');
  if (request.lastFrame && request.durationS !== undefined && request.durationS !== 8) throw new UpstreamRefused(`${model.id} makes a video between a first and a last frame 8 s long only`, 400, 'request');
  if (request.referenceImages?.length && request.durationS !== undefined && request.durationS !== 8) throw new UpstreamRefused(`${model.id} makes a video from reference images 8 s long only`, 400, 'request');
}

/**
 * The create's body: one instance (the prompt, `image` and `lastFrame` inline, `referenceImages` of type asset)
 * and its parameters (aspect ratio, `durationSeconds` — 8 from reference images whether asked or not, as the
 * guide says; else the asked or stated one, sentDurationS — resolution, negative prompt).
 */
export function veoBody(model: VideoModelSpec, request: VideoRequest, images: VeoImages): Record<string, unknown> {
  const references = images.references.map((image) => ({ image, referenceType: 'asset' }));
  const resolution = sentResolution(model, request);
  // between two frames, from references or at 1080p Veo makes 8 s only (veoUnmet, the catalog's durationsAt):
  // sent 8 there whatever a declared model states
  const duration = request.durationS ?? (references.length || images.last || resolution === '1080p' ? 8 : sentDurationS(model, request));
  return {
    instances: [{ prompt: request.prompt, ...(images.first ? { image: images.first } : {}), ...(images.last ? { lastFrame: images.last } : {}), ...(references.length ? { referenceImages: references } : {}) }],
    parameters: {
      ...(request.aspectRatio ? { aspectRatio: request.aspectRatio } : {}),
      ...(duration !== undefined ? { durationSeconds: duration } : {}),
      ...(resolution ? { resolution } : {}),
      ...(request.negativePrompt !== undefined ? { negativePrompt: request.negativePrompt } : {}),
    },
  };
}

/** A frame's bytes as Veo takes an image: Base64 with its type (PNG, JPEG or WebP); anything else refused. */
export function veoInline(bytes: Buffer | undefined, position: 'first' | 'last' | 'reference'): VeoImage {
  const format = bytes ? sniffRaster(bytes) : null;
  if (!bytes || !format) throw new UpstreamRefused(`the ${position === 'reference' ? 'reference' : `${position} frame's`} image could not be read as PNG, JPEG or WebP`, 400, 'request');
  return { bytesBase64Encoded: bytes.toString('base64'), mimeType: `image/${format}` };
}

/**
 * An operation's state: working until done; done, its error's words, its first sample's video (its link as
 * the answer gives it: `veoVideoUrl` adds the key), or its safety filters' refusal with their reasons.
 */
export function veoStatus(answer: unknown): VendorStatus {
  const operation = readAnswer(OPERATION, answer, 'the poll');
  if (operation.done !== true) return { state: 'working' };
  if (operation.error) return { state: 'failed', reason: operation.error.message || String(operation.error.status ?? operation.error.code ?? 'no reason given') };
  const answered = operation.response?.generateVideoResponse;
  const uri = answered?.generatedSamples?.find((s) => s?.video?.uri)?.video?.uri;
  if (uri) return { state: 'succeeded', videoUrl: uri };
  const reasons = (answered?.raiMediaFilteredReasons ?? []).filter((r) => r.length > 0);
  if ((answered?.raiMediaFilteredCount ?? 0) > 0 || reasons.length > 0) return { state: 'failed', reason: `the upstream's safety filters removed the video${reasons.length > 0 ? `: ${reasons.join(' ')}` : ''}` };
  return { state: 'failed', reason: 'the upstream finished the operation without a video' };
}

/** The video's link with the account's key as `?key=`, where it is on the account's origin (elsewhere, or without a key, it goes as it came). */
export function veoVideoUrl(uri: string, baseUrl: string, key: string | undefined): string {
  if (!key || !URL.canParse(uri) || !URL.canParse(baseUrl)) return uri;
  const link = new URL(uri);
  if (link.origin !== new URL(baseUrl).origin) return uri;
  link.searchParams.set('key', key);
  return link.toString();
}
