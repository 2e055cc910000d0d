import { randomUUID } from 'node:crypto';
import { pipeline } from 'node:stream/promises';
import { Injectable } from '@nestjs/common';
import type { Response } from 'express';
import { withArticle } from '../../common/words.js';
import type { Principal } from '../../common/auth/credential.js';
import { AppError } from '../../common/errors/app-error.js';
import { openAiError } from '../../common/errors/openai-error.js';
import { Base64Bytes, Base64Json } from '../../common/http/base64-json.js';
import { describeError } from '../../common/errors/error-catalog.js';
import { TaskEngine } from '../../common/tasks/task-engine.js';
import { OpenAIImageVendor } from '../../vendors/openai/openai-image.vendor.js';
import { IMAGE_DEFINITION } from '../../modules/image/image.definition.js';
import type { ImageField } from '../../vendors/contracts/image-request.js';
import { shapeOf } from '../../vendors/contracts/image-request.js';
import type { MediaRow, NewMedia } from '../../modules/media/media.repository.js';
import { MediaService } from '../../modules/media/media.service.js';
import type { CreateOpenAiImageDto, EditOpenAiImageDto, OpenAiImageDataDto, OpenAiImagesResponseDto, OpenAiImageFieldsDto } from './dto/openai-image.dto.js';
import { ImageKind, type MadeImages } from '../../modules/image/image.kind.js';
import { ImageInputs } from '../../modules/image/image-inputs.js';
import { ImageModels, type NativeVendor } from '../../modules/image/image-models.js';
import { OPENAI_DOOR } from './openai.door.js';
import { failedTaskError } from '../../modules/channels/task-failure.js';
import { imageRequestOf, type ImageInputParams, type ImageParams, type ImageTask } from '../../modules/image/image-task.js';

/** The OpenAI door's names of the normalized fields, for its 400s. */
const OPENAI_FIELDS: Record<ImageField, string> = {
  model: 'model',
  mode: 'image',
  prompt: 'prompt',
  negativePrompt: 'negative_prompt',
  n: 'n',
  size: 'size',
  aspectRatio: 'size',
  resolution: 'size',
  quality: 'quality',
  background: 'background',
  seed: 'seed',
  images: 'image',
  mask: 'mask',
  imageReference: 'image_reference',
  imageFidelity: 'image_fidelity',
  humanFidelity: 'human_fidelity',
};

/** This door is OpenAI's Images API: a request naming no model takes what OpenAI's configured models make (every OpenAI model's in the sandbox). */
const OPENAI_VENDOR: NativeVendor = { protocol: OpenAIImageVendor.protocol, title: 'OpenAI' };

/** An edit's files as multer hands them over (in memory), by part name. */
export type ImageParts = Partial<Record<'image' | 'image[]' | 'mask', { buffer: Buffer }[]>>;

/** How often a streamed request looks for the partial images its task has kept while it waits for the end. */
const PARTIALS_EVERY_MS = 200;

/**
 * OpenAI's Images API over the image kind (`/openai/v1/images/…`): a request becomes a task (in GET /tasks
 * like any other) and is held open until the task ends, then answered as OpenAI answers (the images as
 * Base64, or signed links to the stored copies), or as server-sent events with partial images first. A
 * client that goes away loses nothing: the task runs on and its images stay.
 */
@Injectable()
export class OpenAiImagesService {
  constructor(
    private readonly engine: TaskEngine,
    private readonly kind: ImageKind,
    private readonly media: MediaService,
    private readonly models: ImageModels,
    private readonly inputs: ImageInputs,
  ) {}

  generate(principal: Principal, dto: CreateOpenAiImageDto, res: Response, base?: string): Promise<void> {
    if (dto.style !== undefined && dto.style !== null) throw new AppError('INVALID_PARAMETER', "style: no configured model takes a style (it was dall-e-3's, which OpenAI has shut down)");
    return this.submitAndAnswer(principal, dto, 'generate', {}, res, base);
  }

  edit(principal: Principal, dto: EditOpenAiImageDto, parts: ImageParts | undefined, res: Response, base?: string): Promise<void> {
    return this.submitAndAnswer(principal, dto, 'edit', parts ?? {}, res, base);
  }

  private async submitAndAnswer(principal: Principal, dto: OpenAiImageFieldsDto, mode: 'generate' | 'edit', parts: ImageParts, res: Response, base?: string): Promise<void> {
    const images = [...(parts.image ?? []), ...(parts['image[]'] ?? [])];
    if (mode === 'edit' && images.length === 0) throw AppError.invalidParameter('image: an edit needs one or more image files (multipart parts named image or image[])', { param: 'image', rule: 'missing' });
    if (images.length > 16) throw AppError.invalidParameter(`image: at most 16 images (not ${images.length})`, { param: 'image', rule: 'too_many' });
    const format = dto.output_format ?? 'png';
    const background = dto.background === 'auto' ? undefined : (dto.background as 'transparent' | 'opaque' | undefined);
    if (background === 'transparent' && format === 'jpeg') throw new AppError('INVALID_PARAMETER', 'background: transparent needs output_format png or webp (not jpeg)');
    if (dto.output_compression !== undefined && format === 'png') throw new AppError('INVALID_PARAMETER', 'output_compression: only jpeg and webp take one (output_format is png)');
    if (dto.partial_images && !dto.stream) throw new AppError('INVALID_PARAMETER', 'partial_images: only a streamed request (stream: true) has partial images');
    const id = randomUUID();
    const stored: NewMedia[] = [];
    let submitted: ImageTask;
    try {
      const facts: ImageInputParams[] = [];
      for (const [index, part] of images.entries()) {
        const input = await this.inputs.store(principal.owner, id, 'input', index, part.buffer, `image[${index}]`);
        stored.push(input.media);
        facts.push(input.facts);
      }
      const maskPart = parts.mask?.[0];
      let maskFacts: ImageInputParams | undefined;
      if (maskPart) {
        const mask = await this.inputs.store(principal.owner, id, 'mask', 0, maskPart.buffer, 'mask');
        stored.push(mask.media);
        if (mask.facts.format !== 'png' || mask.facts.width !== facts[0].width || mask.facts.height !== facts[0].height) {
          throw new AppError('INVALID_PARAMETER', `mask must be a PNG of the first image's size (${facts[0].width}x${facts[0].height}); it is ${withArticle(mask.facts.format ?? 'image')} of ${mask.facts.width}x${mask.facts.height}`);
        }
        // OpenAI's edits read where to paint from the mask's transparent pixels: one without alpha is refused, in its words
        if (!(await this.inputs.hasAlpha(maskPart.buffer))) throw AppError.invalidParameter('mask: Invalid mask image format - mask image missing alpha channel (its transparent pixels say where to edit)', { param: 'mask', rule: 'value' });
        maskFacts = mask.facts;
      }
      const size = dto.size === 'auto' ? undefined : dto.size;
      const [w, h] = size ? size.split('x').map(Number) : [];
      const params: ImageParams = {
        door: OPENAI_DOOR,
        mode,
        prompt: dto.prompt,
        n: dto.n ?? 1,
        ...(size ? { size, aspectRatio: shapeOf(w, h) } : {}),
        ...(dto.quality && dto.quality !== 'auto' ? { quality: dto.quality as 'low' | 'medium' | 'high' } : {}),
        ...(background ? { background } : {}),
        outputFormat: format,
        ...(dto.output_compression !== undefined ? { outputCompression: dto.output_compression } : {}),
        ...(dto.seed !== undefined ? { seed: dto.seed } : {}),
        ...(dto.negative_prompt !== undefined ? { negativePrompt: dto.negative_prompt } : {}),
        images: images.length,
        mask: maskFacts !== undefined,
        ...(dto.model ? { model: dto.model } : {}),
        inputs: facts,
        ...(maskFacts ? { mask_facts: maskFacts } : {}),
        ...(dto.user ? { user: dto.user } : {}),
        ...(dto.stream && dto.partial_images ? { partial_images: dto.partial_images } : {}),
        ...(mode === 'edit' && !size ? { target_size: `${facts[0].width}x${facts[0].height}` } : {}),
      };
      await this.models.check(imageRequestOf(params), OPENAI_FIELDS, OPENAI_VENDOR);
      submitted = await this.engine.submit(this.kind, { id, owner: principal.owner, params, baseUrl: base, details: this.inputs.rows(stored), held: true });
    } catch (err) {
      await this.inputs.discard(stored);
      throw err;
    }
    // the task is accepted: what follows never refuses it, and a client that leaves loses nothing; a retry
    // of a 5xx from here on would be a second (billed) task, so OpenAI's SDKs are told not to
    res.setHeader('x-should-retry', 'false');
    if (dto.stream) return this.stream(principal, submitted, mode, dto, res, base);
    const { task, made } = await this.held(principal, submitted, res);
    const answer = new Base64Json(await this.answer(task, dto.response_format ?? 'b64_json', made));
    res.status(200).setHeader('content-type', answer.getHeaders().type!);
    res.setHeader('content-length', String(answer.getHeaders().length));
    // a client gone mid-answer loses nothing: its images stay (GET /tasks/{id})
    await pipeline(answer.getStream(), res).catch(() => undefined);
  }

  /** Waits for the task's end (woken by it), up to its hold; `onWait` (a stream's partial images) runs every PARTIALS_EVERY_MS meanwhile. */
  private async held(principal: Principal, submitted: ImageTask, res: Response, onWait?: () => Promise<void>): Promise<{ task: ImageTask; made?: MadeImages }> {
    const id = submitted.id;
    const held = await this.engine.holdUntilEnded<ImageParams, ImageTask['result']>(this.kind, principal.owner, id, res, onWait ? { everyMs: PARTIALS_EVERY_MS, run: onWait } : undefined, submitted);
    if ('deleted' in held) throw new AppError('NOT_FOUND', `image task ${id} was deleted while the request was held`);
    if ('timedOut' in held) throw new AppError('TIMEOUT', `the image task ${id} did not end within ${held.holdS} s; it goes on: GET /tasks/${id} shows its end and its images`);
    return { task: held.ended, made: held.output as MadeImages | undefined };
  }

  /**
   * OpenAI's ImagesResponse of an ended task; a failed one is thrown as OpenAI's error (moderation_blocked
   * for the vendor's refusal). Its images as Base64 from `made` (what the step made on this instance, already
   * stored: the bytes in hand), else read back from storage; as links, from their stored rows.
   */
  private async answer(task: ImageTask, responseFormat: 'b64_json' | 'url', made?: MadeImages): Promise<Omit<OpenAiImagesResponseDto, 'data'> & { data: (OpenAiImageDataDto | { b64_json: Base64Bytes; revised_prompt?: string })[] }> {
    const revised = task.result?.revised_prompt ? { revised_prompt: task.result.revised_prompt } : {};
    const created = Math.floor(task.createdAt.getTime() / 1000);
    if (task.state === 'succeeded' && responseFormat === 'b64_json' && made && made.images.length > 0) {
      const data = made.images.map((image) => ({ b64_json: new Base64Bytes(image.body), ...revised }));
      return { created, data, ...this.made(task, made.images[0]), usage: NO_USAGE, task_id: task.id };
    }
    const images = await this.images(task, responseFormat === 'b64_json');
    const data = images.map(({ row, bytes }) => (bytes ? { b64_json: new Base64Bytes(bytes), ...revised } : { url: this.media.signedUrl(row, this.media.linkBase(task.baseUrl)), ...revised }));
    return { created, data, ...this.made(task, images[0]?.row), usage: NO_USAGE, task_id: task.id };
  }

  /** The stored images of a succeeded task, in order, with their bytes where `withBytes` (a link needs only the row); a failed task thrown as its error. */
  private async images(task: ImageTask, withBytes: boolean): Promise<{ row: MediaRow; bytes?: Buffer }[]> {
    if (task.state === 'failed') throw failureOf(task);
    const rows = (await this.media.listForTasks([task.id])).filter((m) => m.role === 'image').sort((a, b) => a.index - b.index);
    const out: { row: MediaRow; bytes?: Buffer }[] = [];
    for (const row of rows) {
      if (!withBytes) out.push({ row });
      else {
        const bytes = await this.media.readBytes(row);
        if (bytes) out.push({ row, bytes });
      }
    }
    if (out.length === 0) throw new AppError('UPSTREAM_FAILED', `the image task ${task.id} ended without images`);
    return out;
  }

  /** What was made, in OpenAI's words: never `auto`. */
  private made(task: ImageTask, first?: { width: number | null; height: number | null }) {
    const p = task.params;
    return {
      size: first?.width && first.height ? `${first.width}x${first.height}` : (p.size ?? '1024x1024'),
      quality: p.quality ?? 'medium',
      background: p.background === 'transparent' ? 'transparent' : 'opaque',
      output_format: p.outputFormat,
    };
  }

  /**
   * Server-sent events as OpenAI's SDKs read them: each partial image as it is kept (where the vendor or the
   * sandbox makes them), then one completed event per image; a failure as an `error` event. `event:` names
   * the type (OpenAI's own wire does); no [DONE] (OpenAI's image streams end by closing).
   */
  private async stream(principal: Principal, submitted: ImageTask, mode: 'generate' | 'edit', dto: OpenAiImageFieldsDto, res: Response, base?: string): Promise<void> {
    const id = submitted.id;
    const prefix = mode === 'edit' ? 'image_edit' : 'image_generation';
    res.status(200).setHeader('content-type', 'text/event-stream; charset=utf-8');
    res.setHeader('cache-control', 'no-cache');
    res.setHeader('x-accel-buffering', 'no');
    res.flushHeaders();
    const send = (type: string, body: Record<string, unknown>) => res.write(`event: ${type}\ndata: ${JSON.stringify({ type, ...body })}\n\n`);
    const asked = { size: dto.size ?? 'auto', quality: dto.quality ?? 'auto', background: dto.background ?? 'auto', output_format: dto.output_format ?? 'png' };
    const sent = new Set<number>();
    const sendPartials = async () => {
      const perImage = dto.partial_images ?? 0;
      for (let image = 0; image < (dto.n ?? 1); image++) {
        for (let k = 0; k < perImage; k++) {
          const index = image * 3 + k;
          if (sent.has(index)) continue;
          const row = await this.media.findForTask(id, 'partial', index);
          const bytes = row ? await this.media.readBytes(row) : null;
          if (!bytes) return; // in order: the next one is not kept yet
          sent.add(index);
          send(`${prefix}.partial_image`, { b64_json: bytes.toString('base64'), created_at: Math.floor(Date.now() / 1000), ...asked, partial_image_index: k });
        }
      }
    };
    try {
      const { task } = await this.held(principal, submitted, res, sendPartials);
      await sendPartials();
      const images = await this.images(task, true);
      const made = this.made(task, images[0]?.row);
      for (const { bytes } of images) send(`${prefix}.completed`, { b64_json: bytes!.toString('base64'), created_at: Math.floor(Date.now() / 1000), ...made, usage: NO_USAGE });
    } catch (err) {
      const code = err instanceof AppError ? err.code : 'INTERNAL';
      const wire = describeError(code);
      const message = err instanceof AppError ? err.message : 'Internal server error';
      res.write(`event: error\ndata: ${JSON.stringify({ type: 'error', error: openAiError(wire.status, wire.name, message, err instanceof AppError ? err.fault : undefined, 'images') })}\n\n`);
    }
    void base;
    res.end();
  }
}

/** Tokens are not what this gateway's vendors price by: OpenAI's usage shape, all zeros. */
const NO_USAGE = { input_tokens: 0, output_tokens: 0, total_tokens: 0, input_tokens_details: { text_tokens: 0, image_tokens: 0 } };

/** A failed image task as OpenAI's error (failedTaskError). */
function failureOf(task: Pick<ImageTask, 'id' | 'message'>): AppError {
  return failedTaskError(task, { what: 'image', noun: IMAGE_DEFINITION.noun });
}
