import { Injectable } from '@nestjs/common';
import { z } from 'zod';
import { SYNC_GENERATION_TIMEOUT_MS, UpstreamClient, UpstreamRefused } from '../../infra/relay/upstream-client.js';
import { type ImageModelSpec, type ImageRequest, resolutionOf, shapeOf, sidesOf } from '../contracts/image-request.js';
import type { ImageAnswer, ImageCreate, ImageInput, ImageVendor, VendorImage } from '../contracts/image-vendor.js';
import { failedGenerations } from '../contracts/sync-generation.js';
import { UnusableAnswer, type VendorAccount } from '../contracts/vendor.js';
import { readAnswer } from '../contracts/vendor-answer.js';
import { GOOGLE, googleRefusal } from './google.vendor.js';

/** The shapes all of them make (the image generation guide); gemini-3.1-flash-image-preview adds the long ones. */
const RATIOS = ['1:1', '2:3', '3:2', '3:4', '4:3', '4:5', '5:4', '9:16', '16:9', '21:9'];

function gemini(id: string, over: Partial<ImageModelSpec>): ImageModelSpec {
  return {
    id,
    // no sizes: it makes shapes at sizes of its own (1264x848 for 3:2 at 1K), which the gateway fits to an asked size
    aspectRatios: RATIOS,
    resolutions: ['1k', '2k', '4k'],
    qualities: [],
    // one image a call: the adapter calls n times
    maxN: 4,
    // "The model does not support generating a transparent background"
    transparent: false,
    maxReferences: 14,
    maxEditImages: 14,
    // an edit is the images as input parts with the prompt; no mask ("semantic masking" is in words)
    mask: false,
    // generationConfig.seed ("mostly deterministic")
    seed: true,
    negativePrompt: false,
    partials: false,
    maxPromptChars: 30_000,
    ...over,
  };
}

/**
 * Google's Gemini image models ("Nano Banana"), as the Gemini API's image generation guide gives them:
 * gemini-2.5-flash-image makes 1K only and works best with up to 3 input images; gemini-3-pro-image-preview
 * 1K, 2K and 4K with up to 14; gemini-3.1-flash-image-preview the same and the shapes 1:4, 4:1, 1:8 and 8:1 (its
 * 512 px size is no class of ours). The prompt's limit is the input tokens' less its images, a token a
 * character at worst (Chinese, Japanese): 32,768 tokens for 2.5 Flash Image (its model card), of which three
 * images take ~3,900; 3 Pro and 3.1 Flash take 65,536 and more, 30,000 characters is left well within them.
 * Imagen (`:predict`) is not used: Google is retiring it from the Gemini API.
 */
export const GEMINI_IMAGE_MODELS: readonly ImageModelSpec[] = [
  gemini('gemini-2.5-flash-image', { resolutions: ['1k'], maxReferences: 3, maxEditImages: 3, maxPromptChars: 28_000 }),
  gemini('gemini-3-pro-image-preview', {}),
  gemini('gemini-3.1-flash-image-preview', { aspectRatios: [...RATIOS, '1:4', '4:1', '1:8', '8:1'] }),
];

/** A 4K PNG as Base64 in JSON is up to some 30 MB. */
const RESULT_MAX_BYTES = 64 * 1024 * 1024;

/**
 * The finish reasons of a candidate without an image that say Google's filters blocked it (js-genai's
 * FinishReason): a content refusal. The others (STOP with words only, NO_IMAGE, IMAGE_OTHER, OTHER, MAX_TOKENS)
 * are failures. Any blockReason of the prompt (BlockedReason: SAFETY, OTHER, BLOCKLIST, PROHIBITED_CONTENT,
 * IMAGE_SAFETY, MODEL_ARMOR, JAILBREAK) is a refusal of it.
 */
const REFUSED = /^(IMAGE_)?(SAFETY|PROHIBITED_CONTENT|RECITATION)$|^(BLOCKLIST|SPII)$/;

/** A part of a candidate's content: its text, whether it is a thought, its inline data (camelCase, or snake_case from a relay). */
const PART = z.object({
  text: z.string().optional().catch(undefined),
  thought: z.boolean().optional().catch(undefined),
  inlineData: z.object({ data: z.string().optional() }).optional().catch(undefined),
  inline_data: z.object({ data: z.string().optional() }).optional().catch(undefined),
});

/** The part of `GenerateContentResponse` (js-genai) the gateway reads: the first candidate's parts and finish, the prompt's feedback. */
const GENERATE_CONTENT_RESPONSE = z.object({
  candidates: z
    .array(
      z.object({
        content: z.object({ parts: z.array(PART.nullable()).nullish() }).nullish(),
        finishReason: z.string().nullish(),
        finishMessage: z.string().nullish(),
      }),
    )
    .nullish(),
  promptFeedback: z.object({ blockReason: z.string().nullish(), blockReasonMessage: z.string().nullish() }).nullish(),
});

/**
 * The Gemini API's `POST /models/{model}:generateContent`, synchronous: the prompt as a text part and each input
 * image as an `inlineData` part of one user turn (a generation's references and an edit's images alike),
 * `generationConfig: {responseModalities: ['IMAGE'], imageConfig: {aspectRatio, imageSize}, seed}`; the answer's
 * first candidate holds the image as an `inlineData` part, after up to two interim "thought" images of the 3.x
 * models (skipped). One image a call: n images are n calls (each seed the next one up, so that they differ).
 * No image: a content refusal where its finishReason or the prompt's blockReason says its filters blocked it
 * (HTTP 200), else a failure. Errors (`googleRefusal`): a key not valid is a 400, a free-tier key's `limit: 0`
 * a 429 of the account's, other 429s and 503 busy, 5xx a failed generation (another channel may take the task).
 * It keeps no id of ours: a create whose answer was lost is never sent there again.
 */
@Injectable()
export class GeminiImageVendor implements ImageVendor {
  static readonly protocol = GOOGLE.protocol;
  static readonly models = GEMINI_IMAGE_MODELS;
  readonly protocol = GeminiImageVendor.protocol;
  readonly models = GEMINI_IMAGE_MODELS;
  /** It answers at once: nothing is polled. */
  readonly minPollS = GOOGLE.pollFloorS;

  constructor(private readonly client: UpstreamClient) {}

  async create(account: VendorAccount, create: ImageCreate): Promise<ImageAnswer> {
    const { model, request } = create;
    const images = request.images > 0 ? await create.images() : [];
    const url = `${account.baseUrl}/models/${encodeURIComponent(model.id)}:generateContent`;
    const made: VendorImage[] = [];
    for (let i = 0; i < request.n; i++) {
      const body = geminiImageBody(model, request, images, i);
      made.push(
        await failedGenerations(async () => {
          const answer = await this.client.call('POST', url, { body, auth: account.auth, failFast: true, refusal: googleRefusal, maxBytes: RESULT_MAX_BYTES, timeoutMs: SYNC_GENERATION_TIMEOUT_MS });
          return geminiImageOf(answer.json, answer.status);
        }),
      );
    }
    return { made };
  }
}

/**
 * The body of the `i`th call (of n): the prompt as a text part and each input image as an `inlineData` part of
 * one user turn, `generationConfig: {responseModalities: ['IMAGE'], imageConfig: {aspectRatio, imageSize}, seed}`
 * (each call's seed the next one up, so that the images differ).
 */
export function geminiImageBody(model: ImageModelSpec, request: ImageRequest, images: ImageInput[], i: number): Record<string, unknown> {
  const imageConfig = { ...optional('aspectRatio', aspectRatioOf(model, request)), ...optional('imageSize', imageSizeOf(model, request)) };
  return {
    contents: [{ role: 'user', parts: [{ text: request.prompt }, ...images.map(inlinePart)] }],
    generationConfig: {
      responseModalities: ['IMAGE'],
      ...(Object.keys(imageConfig).length > 0 ? { imageConfig } : {}),
      ...(request.seed !== undefined ? { seed: (request.seed + i) % 2 ** 31 } : {}),
    },
  };
}

/** The shape asked: `aspectRatio`, or the asked size's (one of the model's, the gateway fits the image to the size); none: 1:1, or an edit's first image's. */
export function aspectRatioOf(model: ImageModelSpec, request: ImageRequest): string | undefined {
  if (request.size) {
    const { width, height } = sidesOf(request.size);
    return shapeOf(width, height, model.aspectRatios);
  }
  return request.aspectRatio;
}

/** `1K`, `2K` or `4K` (upper case: "lowercase parameters will be rejected"), from the class asked or the asked size's; none for a model of 1K only (it takes no imageSize). */
export function imageSizeOf(model: ImageModelSpec, request: ImageRequest): string | undefined {
  if (model.resolutions.length <= 1) return undefined;
  const resolution = request.size ? resolutionOf(sidesOf(request.size).width, sidesOf(request.size).height) : request.resolution;
  return resolution?.toUpperCase();
}

function inlinePart(image: ImageInput): { inlineData: { mimeType: string; data: string } } {
  return { inlineData: { mimeType: `image/${image.format}`, data: image.bytes.toString('base64') } };
}

/** The first candidate's image (past its thoughts), or why there is none: a refusal of its filters, else an unusable answer. */
export function geminiImageOf(json: unknown, status: number): VendorImage {
  const answer = readAnswer(GENERATE_CONTENT_RESPONSE, json, 'the generation');
  const candidate = answer.candidates?.[0];
  const parts = (candidate?.content?.parts ?? []).filter((part) => part !== null && part.thought !== true);
  for (const part of parts) {
    const data = part?.inlineData?.data ?? part?.inline_data?.data;
    if (data) return { bytes: Buffer.from(data, 'base64') };
  }
  const blockReason = answer.promptFeedback?.blockReason;
  const blocked = blockReason && blockReason !== 'BLOCKED_REASON_UNSPECIFIED' ? blockReason : undefined;
  const finish = candidate?.finishReason ?? undefined;
  const words = answer.promptFeedback?.blockReasonMessage || candidate?.finishMessage || undefined;
  if (blocked) throw new UpstreamRefused(`the upstream's safety filters blocked the prompt (blockReason ${blocked})${words ? `: ${words}` : ''}`, status, 'request');
  if (finish && REFUSED.test(finish)) throw new UpstreamRefused(`the upstream's safety filters refused the image (finishReason ${finish})${words ? `: ${words}` : ''}`, status, 'request');
  const text = parts.find((p) => p?.text)?.text;
  throw new UnusableAnswer(`the upstream answered without an image (finishReason ${finish ?? 'none'})${text ? `: ${text.slice(0, 200)}` : words ? `: ${words}` : ''}`);
}

function optional<K extends string, V>(key: K, value: V | undefined): Partial<Record<K, V>> {
  return value === undefined ? {} : ({ [key]: value } as Record<K, V>);
}
