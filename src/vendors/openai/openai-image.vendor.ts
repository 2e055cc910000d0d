import { StringDecoder } from 'node:string_decoder';
import { Injectable } from '@nestjs/common';
import { z } from 'zod';
import { SYNC_GENERATION_TIMEOUT_MS, UpstreamBusy, UpstreamClient, UpstreamRefused, UpstreamUnavailable } from '../../infra/relay/upstream-client.js';
import { COMMON_IMAGE_RATIOS, type ImageModelSpec, type ImageRequest, shapeOf, sidesOf } from '../contracts/image-request.js';
import type { ImageAnswer, ImageCreate, ImageInput, ImageVendor, VendorImage } from '../contracts/image-vendor.js';
import { failedGenerations } from '../contracts/sync-generation.js';
import { UnusableAnswer, type VendorAccount } from '../contracts/vendor.js';
import { readAnswer } from '../contracts/vendor-answer.js';
import { OPENAI, openaiRefusal } from './openai.vendor.js';

/** The three sizes of the GPT image models before gpt-image-2 (`auto` is left out: not asking is asking for it). */
const FIXED_SIZES = ['1024x1024', '1536x1024', '1024x1536'] as const;

/** gpt-image-2's free sizes (OpenAI's image generation guide): sides multiples of 16, at most 3840, 655,360 to 8,294,400 pixels, shapes up to 3:1. */
const FREE = { multipleOf: 16, maxSide: 3840, minPixels: 655_360, maxPixels: 8_294_400, maxShape: 3 };
/** The longer side gpt-image-2 is asked for when only a shape and a class are (the contract's classes; 4k is its 3840). */
const FREE_LONG_SIDE: Record<string, number> = { '1k': 1024, '2k': 2048, '4k': 3840 };

function gptImage(id: string, over: Partial<ImageModelSpec> = {}): ImageModelSpec {
  return {
    id,
    sizes: FIXED_SIZES,
    aspectRatios: ['1:1', '3:2', '2:3'],
    resolutions: ['1k'],
    qualities: ['low', 'medium', 'high'],
    maxN: 10,
    transparent: true,
    // a generation with reference images goes to /images/edits without a mask, as OpenAI's own guide does
    maxReferences: 16,
    maxEditImages: 16,
    mask: true,
    seed: false,
    negativePrompt: false,
    // streamed as they are made (see the class); gpt-image-2 says otherwise below
    partials: true,
    maxPromptChars: 32_000,
    ...over,
  };
}

/**
 * OpenAI's GPT image models (openai-node `src/resources/images.ts`, OpenAI's image generation guide):
 * gpt-image-1, gpt-image-1-mini and gpt-image-1.5 make three sizes, transparent where asked; gpt-image-2 makes
 * any size within its rule (the rule's bounds the contract cannot say, the fewest pixels and the 3:1 shape, are
 * met here by asking for the nearest size it makes: the gateway fits its images to the asked size) and no
 * transparent background (the guide: "doesn't currently support transparent backgrounds"; openai-node's HEAD
 * says "preview": the guide is followed). dall-e-2 and dall-e-3 are left out: OpenAI shut them down on
 * 2026-05-12 (the SDK's types still name them).
 */
export const OPENAI_IMAGE_MODELS: readonly ImageModelSpec[] = [
  gptImage('gpt-image-1'),
  gptImage('gpt-image-1-mini'),
  gptImage('gpt-image-1.5'),
  gptImage('gpt-image-2', {
    sizes: 'any',
    sizeRule: { multipleOf: FREE.multipleOf, minSide: FREE.multipleOf, maxSide: FREE.maxSide, maxPixels: FREE.maxPixels },
    aspectRatios: [...COMMON_IMAGE_RATIOS],
    resolutions: ['1k', '2k', '4k'],
    transparent: false,
    // the research notes (OpenAI's guide, openai-node) say nothing of it streaming: a stream refused would fail
    // the task, where not asking loses only the previews
    partials: false,
  }),
];

/** An answer of up to 10 images as Base64 PNG in JSON (a high-quality 1536x1024 PNG is a few MB). */
const RESULT_MAX_BYTES = 96 * 1024 * 1024;
/** OpenAI's most partial images per image (`partial_images`, 0-3). */
const MAX_PARTIALS = 3;

/** The part of OpenAI's `ImagesResponse` (openai-node `resources/images.ts`) the gateway uses: each image as `b64_json` or `url`, and a `revised_prompt`. */
const IMAGES_RESPONSE = z.object({
  data: z.array(z.object({ b64_json: z.string().nullish(), url: z.string().nullish(), revised_prompt: z.string().nullish() }).nullable()),
});

/**
 * An event of OpenAI's image stream (`image_generation.partial_image`, `.completed`, `image_edit.…`, `error`): what
 * is read of it; a field of another type is read as absent (the event is then skipped, as one of a kind it does not know).
 */
const STREAM_EVENT = z.looseObject({ type: z.string().optional().catch(undefined), b64_json: z.string().optional().catch(undefined), error: z.unknown().optional() });
/** A stream's error (`{error: {message, type, code}}`, or those fields at the top): each field read as empty when it is not a string. */
const STREAM_ERROR = z.object({ message: z.string().catch(''), type: z.string().catch(''), code: z.string().catch('') });

/** A file part of an edit: the name of its part, the image and its file name. */
export interface OpenAIImageFile {
  name: 'image[]' | 'mask';
  image: ImageInput;
  filename: string;
}

/** A request mapped out for OpenAI's Images API: a generation's JSON body, or an edit's multipart fields and files. */
export type OpenAIImageCall = { path: '/images/generations'; body: Record<string, unknown> } | { path: '/images/edits'; fields: Record<string, string>; files: OpenAIImageFile[] };

/** The partial images per image asked of OpenAI: those a streaming caller asked for (0-3), of a model that streams them; else none. */
export function partialsFor(model: ImageModelSpec, asked: number | undefined): number {
  return model.partials ? Math.min(Math.max(Math.floor(asked ?? 0), 0), MAX_PARTIALS) : 0;
}

/**
 * The normalized request as OpenAI's Images API takes it: `POST /images/generations` (JSON) without input images,
 * else `POST /images/edits` (multipart: the same fields as strings, each image an `image[]` part, the mask an
 * edit's `mask`); PNG always, streamed (`stream`, `partial_images`) where partial images are asked.
 */
export function openaiImageCall(model: ImageModelSpec, request: ImageRequest, images: ImageInput[], mask: ImageInput | undefined, partials: number): OpenAIImageCall {
  const fields = {
    model: model.id,
    prompt: request.prompt,
    n: request.n,
    ...optional('size', sizeFor(model, request, images[0])),
    ...optional('quality', request.quality),
    ...optional('background', request.background),
    output_format: 'png',
    ...(partials > 0 ? { stream: true, partial_images: partials } : {}),
  };
  if (images.length === 0) return { path: '/images/generations', body: fields };
  const files: OpenAIImageFile[] = images.map((image, i) => ({ name: 'image[]', image, filename: `image-${i}.${extension(image)}` }));
  if (request.mode === 'edit' && mask) files.push({ name: 'mask', image: mask, filename: `mask.${extension(mask)}` });
  return { path: '/images/edits', fields: Object.fromEntries(Object.entries(fields).map(([name, value]) => [name, String(value)])), files };
}

/** OpenAI's unstreamed answer: its images (Base64 or links) and the first revised prompt; none is an unusable answer. */
export function readOpenAIImages(json: unknown): { made: VendorImage[]; revisedPrompt?: string } {
  const { data } = readAnswer(IMAGES_RESPONSE, json, 'the generation');
  const made = data.flatMap((image): VendorImage[] => (image?.b64_json ? [{ bytes: Buffer.from(image.b64_json, 'base64') }] : image?.url ? [{ url: image.url }] : []));
  if (made.length === 0) throw new UnusableAnswer('the upstream answered without an image (data has no b64_json or url)');
  const revised = data.find((image) => image?.revised_prompt)?.revised_prompt;
  return { made, ...(revised ? { revisedPrompt: revised } : {}) };
}

/**
 * OpenAI's Images API, synchronous: `POST /images/generations` (JSON: model, prompt, n, size, quality,
 * background, output_format) answers `{data: [{b64_json}]}`; `POST /images/edits` (multipart: `image[]` parts,
 * `mask`, the same fields as strings) changes the input images, the mask applying to the first. A generation
 * with reference images is sent as an edit without a mask, as OpenAI's guide does. Its images are always asked
 * for as PNG: lossless (a transparent background kept), the gateway converts them once into the asked format.
 * Where a streaming caller asked for partial images (`create.partials`) of a model that streams them, it asks
 * for them too (`stream: true, partial_images`: 100 output tokens each) and reads the server-sent events as they
 * arrive (StreamedImages): each partial image is kept at once, for the caller's stream to show while the task
 * runs; the `*.completed` events are the images; an `error` event is what the same failure answered unstreamed
 * would be. Otherwise it is not streamed: partial images nobody shows are not paid for. Answers: 400
 * `moderation_blocked` its safety system (a content refusal), 401 credentials, 403 an organization not verified
 * (the account's), 429 `insufficient_quota` the account's credit and other 429s its rate limits (busy), 5xx a
 * failed generation (not charged: another channel may take the task); the same in a stream's error event. It keeps no id of ours: a create whose answer was lost is never sent there again.
 */
@Injectable()
export class OpenAIImageVendor implements ImageVendor {
  static readonly protocol = OPENAI.protocol;
  static readonly models = OPENAI_IMAGE_MODELS;
  readonly protocol = OpenAIImageVendor.protocol;
  readonly models = OPENAI_IMAGE_MODELS;
  /** It answers at once: nothing is polled. */
  readonly minPollS = OPENAI.pollFloorS;

  constructor(private readonly client: UpstreamClient) {}

  async create(account: VendorAccount, create: ImageCreate): Promise<ImageAnswer> {
    const { model, request } = create;
    const images = request.images > 0 ? await create.images() : [];
    const mask = images.length > 0 && request.mode === 'edit' && request.mask ? await create.mask() : undefined;
    const partials = partialsFor(model, create.partials);
    const asked = openaiImageCall(model, request, images, mask, partials);
    const streamed = partials > 0 ? new StreamedImages(partials, request.n, create.partial) : undefined;
    // a streamed answer carries each image's partial images besides it
    const call = { auth: account.auth, failFast: true, refusal: openaiRefusal, maxBytes: RESULT_MAX_BYTES * (1 + partials), timeoutMs: SYNC_GENERATION_TIMEOUT_MS, onChunk: streamed && ((chunk: Buffer) => streamed.push(chunk)) };
    return failedGenerations(async () => {
      const answered = await this.client.call('POST', `${account.baseUrl}${asked.path}`, asked.path === '/images/generations' ? { ...call, body: asked.body } : { ...call, form: formOf(asked.fields, asked.files) });
      // the partial images are kept before the task can end (a failure to keep one fails the step, as the sandbox's)
      await streamed?.finish();
      return streamed && streamed.made.length > 0 ? { made: streamed.made } : readOpenAIImages(answered.json);
    });
  }
}

/**
 * The `size` sent: the asked one (gpt-image-2: the nearest it makes); else, where a shape or a class was asked,
 * the model's size of that shape (a generation's default shape is square, an edit's its first image's);
 * else none (OpenAI's `auto`).
 */
export function sizeFor(model: ImageModelSpec, request: ImageRequest, first: ImageInput | undefined): string | undefined {
  if (request.size) return model.sizes === 'any' ? freeSize(sidesOf(request.size)) : request.size;
  if (request.aspectRatio === undefined && request.resolution === undefined) return undefined;
  const shape = request.aspectRatio ?? (request.mode === 'edit' && first ? shapeOf(first.width, first.height, model.aspectRatios) : '1:1');
  if (Array.isArray(model.sizes)) return model.sizes.find((size) => shapeOf(sidesOf(size).width, sidesOf(size).height, model.aspectRatios) === shape);
  const [w, h] = shape.split(':').map(Number);
  const long = FREE_LONG_SIDE[request.resolution ?? '1k'] ?? FREE_LONG_SIDE['1k'];
  return freeSize(w >= h ? { width: long, height: (long * h) / w } : { width: (long * w) / h, height: long });
}

/** The size gpt-image-2 makes nearest to `width` x `height`: the shape within 3:1, the pixels within its bounds, the sides multiples of 16. */
export function freeSize({ width, height }: { width: number; height: number }): string {
  const step = FREE.multipleOf;
  let [w, h] = [width, height];
  if (w > FREE.maxShape * h) h = w / FREE.maxShape;
  else if (h > FREE.maxShape * w) w = h / FREE.maxShape;
  const scale = Math.min(Math.max(1, Math.sqrt(FREE.minPixels / (w * h))), FREE.maxSide / Math.max(w, h), Math.sqrt(FREE.maxPixels / (w * h)));
  w = Math.max(step, Math.round((w * scale) / step) * step);
  h = Math.max(step, Math.round((h * scale) / step) * step);
  // the rounding may have left it a step outside its bounds
  while (w * h < FREE.minPixels) [w, h] = w <= h ? [w + step, h] : [w, h + step];
  while (w * h > FREE.maxPixels || Math.max(w, h) > FREE.maxSide) [w, h] = w >= h ? [w - step, h] : [w, h - step];
  while (w > FREE.maxShape * h) h += step;
  while (h > FREE.maxShape * w) w += step;
  return `${w}x${h}`;
}

/**
 * OpenAI's image stream read as it arrives (server-sent events, OpenAI's wire as its SDKs read it: lines end with
 * `\n`, `\r\n` or `\r`, a blank line ends an event, `data:` lines are joined, `:` lines are comments, the
 * `event:` line is optional: the JSON's `type` says what it is; no `[DONE]`, the stream ends by closing).
 * `*.partial_image` events are kept as they come, in order; `*.completed` events are the images; an `error`
 * event (or any JSON with an `error`) is thrown by `finish` as its unstreamed answer would be. The events name no
 * image, so partial images are numbered by a running count j (image j / partials, the k = j % partials of it,
 * kept at image * 3 + k as the door reads them, in order): all are shown even when an image ends early or the
 * images' events interleave.
 */
export class StreamedImages {
  readonly made: VendorImage[] = [];
  private readonly decoder = new StringDecoder('utf8');
  private rest = '';
  private event: string | undefined;
  private data: string[] = [];
  private partialsSeen = 0;
  private error: Record<string, unknown> | undefined;
  /** The partial images kept so far, one after the other (the door shows them in order). */
  private kept: Promise<void> = Promise.resolve();

  constructor(
    private readonly perImage: number,
    private readonly n: number,
    private readonly keep: (index: number, image: Buffer) => Promise<void>,
  ) {}

  push(chunk: Buffer): void {
    this.lines(this.decoder.write(chunk));
  }

  /** After the answer: its last event read, the partial images kept; throws the stream's error. */
  async finish(): Promise<void> {
    this.lines(this.decoder.end());
    // a last line without its end, then the last event without its blank line: the stream ended by closing
    if (this.rest) this.line(this.rest.replace(/\r$/, ''));
    this.rest = '';
    this.dispatch();
    await this.kept;
    if (this.error) throw streamFailure(this.error);
  }

  private lines(text: string): void {
    // only the new text is searched (a data line of a few MB comes in many chunks), from a `\r` held back before it
    const ends = /\r\n|\r|\n/g;
    ends.lastIndex = Math.max(0, this.rest.length - 1);
    this.rest += text;
    let start = 0;
    for (let m = ends.exec(this.rest); m; m = ends.exec(this.rest)) {
      // a `\r` last may be the first half of a `\r\n` still to come
      if (m[0] === '\r' && m.index === this.rest.length - 1) break;
      this.line(this.rest.slice(start, m.index));
      start = m.index + m[0].length;
    }
    this.rest = this.rest.slice(start);
  }

  private line(line: string): void {
    if (line === '') return this.dispatch();
    if (line.startsWith(':')) return;
    const colon = line.indexOf(':');
    const field = colon < 0 ? line : line.slice(0, colon);
    const value = colon < 0 ? '' : line.slice(colon + 1).replace(/^ /, '');
    if (field === 'event') this.event = value;
    else if (field === 'data') this.data.push(value);
  }

  private dispatch(): void {
    const [name, data] = [this.event, this.data.join('\n')];
    this.event = undefined;
    this.data = [];
    if (!data || data === '[DONE]') return;
    let event: z.infer<typeof STREAM_EVENT>;
    try {
      const parsed = STREAM_EVENT.safeParse(JSON.parse(data));
      if (!parsed.success) return;
      event = parsed.data;
    } catch {
      return; // not an event of OpenAI's: the images are judged at the end (none made is an unusable answer)
    }
    const type = event.type ?? name ?? '';
    if (name === 'error' || type === 'error' || event.error) {
      this.error ??= event;
      return;
    }
    const b64 = event.b64_json || undefined;
    if (!b64) return;
    if (type.endsWith('.completed')) this.made.push({ bytes: Buffer.from(b64, 'base64') });
    else if (type.endsWith('.partial_image')) {
      const j = this.partialsSeen++;
      if (j >= this.perImage * this.n) return;
      const index = Math.floor(j / this.perImage) * MAX_PARTIALS + (j % this.perImage);
      const bytes = Buffer.from(b64, 'base64');
      this.kept = this.kept.then(() => this.keep(index, bytes));
      // awaited by finish; until then a failure is not unhandled
      this.kept.catch(() => undefined);
    }
  }
}

/**
 * A stream's error event as the same failure answered unstreamed (`{error: {message, type, code}}`): its safety
 * system's refusal and an account out of credit as `openaiRefusal` reads them, a rate limit as busy, a request
 * refused as refused, anything else as a failed generation (a 5xx: `failedGenerations` makes it an `UpstreamGenerationFailed`).
 */
export function streamFailure(json: Record<string, unknown>): Error {
  const { code, type, message: said } = STREAM_ERROR.parse(typeof json.error === 'object' && json.error ? json.error : json);
  const message = said || (typeof json.error === 'string' && json.error ? json.error : code || type || 'an error event');
  const status = code === 'moderation_blocked' || code === 'content_policy_violation' || type === 'invalid_request_error' || type === 'image_generation_user_error' ? 400 : code === 'insufficient_quota' || code === 'rate_limit_exceeded' || type === 'insufficient_quota' ? 429 : 500;
  const refused = openaiRefusal(status, { error: { code, type, message } });
  if (refused) return refused;
  if (status === 429) return new UpstreamBusy(`the upstream is busy (in its stream): ${message}`, undefined, { status });
  if (status === 400) return new UpstreamRefused(message, status, 'request');
  return new UpstreamUnavailable(`the upstream failed (in its stream): ${message}`, true, { status });
}

function optional<K extends string, V>(key: K, value: V | undefined): Partial<Record<K, V>> {
  return value === undefined ? {} : ({ [key]: value } as Record<K, V>);
}

/** An edit's multipart body; each file part of its own image type (OpenAI refuses application/octet-stream). */
function formOf(fields: Record<string, string>, files: OpenAIImageFile[]): FormData {
  const form = new FormData();
  for (const [name, value] of Object.entries(fields)) form.set(name, value);
  for (const file of files) form.append(file.name, new Blob([new Uint8Array(file.image.bytes)], { type: `image/${file.image.format}` }), file.filename);
  return form;
}

function extension(image: ImageInput): string {
  return image.format === 'jpeg' ? 'jpg' : image.format;
}
