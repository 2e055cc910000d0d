import { randomUUID } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import type { Principal } from '../../common/auth/credential.js';
import { AppError } from '../../common/errors/app-error.js';
import { successEnvelope } from '../../common/http/envelope.js';
import { TaskEngine } from '../../common/tasks/task-engine.js';
import { TaskRepository } from '../../common/tasks/task.repository.js';
import type { ImageField } from '../../vendors/contracts/image-request.js';
import { KlingImageVendor } from '../../vendors/kling/kling-image.vendor.js';
import { CallbacksService } from '../../modules/callbacks/callbacks.service.js';
import type { CallbackListEnvelopeDto } from '../../modules/callbacks/dto/callback.dto.js';
import type { ListExpandTasksQueryDto } from './dto/kling-page-query.dto.js';
import type { NewMedia } from '../../modules/media/media.repository.js';
import { CallerUrls } from '../../modules/samples/caller-urls.service.js';
import type { CreateKlingImageDto } from './dto/create-kling-image.dto.js';
import type { KlingImageTaskDetailEnvelopeDto, KlingImageTaskEnvelopeDto, KlingImageTaskListEnvelopeDto } from './dto/kling-image-task.dto.js';
import { ImageKind } from '../../modules/image/image.kind.js';
import { ImageInputs } from '../../modules/image/image-inputs.js';
import { ImageModels, type NativeVendor } from '../../modules/image/image-models.js';
import { imageRequestOf, type ImageInputParams, type ImageParams, type ImageResult, type ImageTask } from '../../modules/image/image-task.js';
import { KlingImageRecords, toKlingImageTask } from './kling-image.records.js';
import { KLING_DOOR } from './kling.door.js';

const KIND = ImageKind.definition.name;

/** The Kling door's names of the normalized fields, for its 400s. */
const KLING_FIELDS: Record<ImageField, string> = {
  model: 'model_name',
  mode: 'image',
  prompt: 'prompt',
  negativePrompt: 'negative_prompt',
  n: 'n',
  size: 'aspect_ratio',
  aspectRatio: 'aspect_ratio',
  resolution: 'resolution',
  quality: 'resolution',
  background: 'background',
  seed: 'seed',
  images: 'image',
  mask: 'image',
  imageReference: 'image_reference',
  imageFidelity: 'image_fidelity',
  humanFidelity: 'human_fidelity',
};

/** This door is Kling's image API: a request naming no model takes what Kling's configured models make. */
const KLING_VENDOR: NativeVendor = { protocol: KlingImageVendor.protocol, title: 'Kling' };

/**
 * Kling's image API over the image kind (`/video-a/v1/images/generations`): Kling's envelope, states and
 * records, its callbacks at each change of state; any vendor behind the image channels may make the images.
 */
@Injectable()
export class KlingImagesService {
  constructor(
    private readonly engine: TaskEngine,
    private readonly tasks: TaskRepository,
    private readonly kind: ImageKind,
    private readonly records: KlingImageRecords,
    private readonly models: ImageModels,
    private readonly inputs: ImageInputs,
    private readonly callbacks: CallbacksService,
    private readonly callerUrls: CallerUrls,
  ) {}

  async create(principal: Principal, requestId: string, dto: CreateKlingImageDto, base?: string): Promise<KlingImageTaskEnvelopeDto> {
    if (dto.watermark_info?.enabled) throw new AppError('INVALID_PARAMETER', 'watermark_info.enabled: no configured model makes a watermarked copy of an image');
    this.callerUrls.check('callback_url', dto.callback_url, base);
    if (dto.image?.kind === 'url') this.callerUrls.check('image', dto.image.url, base);
    if (dto.human_fidelity !== undefined && dto.image_reference !== 'subject') throw new AppError('INVALID_PARAMETER', 'human_fidelity: only with image_reference subject');
    if ((dto.image_reference ?? dto.image_fidelity) !== undefined && !dto.image) throw new AppError('INVALID_PARAMETER', `${dto.image_reference !== undefined ? 'image_reference' : 'image_fidelity'}: only with an image`);
    const id = randomUUID();
    const stored: NewMedia[] = [];
    let input: ImageInputParams | undefined;
    if (dto.image?.kind === 'url') input = { url: dto.image.url };
    else if (dto.image?.kind === 'base64') {
      const kept = await this.inputs.store(principal.owner, id, 'input', 0, dto.image.bytes, 'image');
      stored.push(kept.media);
      input = kept.facts;
    }
    const params: ImageParams = {
      door: KLING_DOOR,
      mode: 'generate',
      prompt: dto.prompt,
      ...(dto.negative_prompt !== undefined ? { negativePrompt: dto.negative_prompt } : {}),
      n: dto.n ?? 1,
      ...(dto.aspect_ratio ? { aspectRatio: dto.aspect_ratio } : {}),
      ...(dto.resolution ? { resolution: dto.resolution } : {}),
      outputFormat: 'png',
      images: input ? 1 : 0,
      mask: false,
      ...(dto.image_reference ? { imageReference: dto.image_reference } : {}),
      ...(dto.image_fidelity !== undefined ? { imageFidelity: dto.image_fidelity } : {}),
      ...(dto.human_fidelity !== undefined ? { humanFidelity: dto.human_fidelity } : {}),
      ...(dto.model_name ? { model: dto.model_name } : {}),
      inputs: input ? [input] : [],
    };
    let task: ImageTask;
    try {
      await this.models.check(imageRequestOf(params), KLING_FIELDS, KLING_VENDOR);
      task = await this.engine.submit(this.kind, {
        id,
        owner: principal.owner,
        params,
        externalId: dto.external_task_id ? { value: dto.external_task_id, field: 'external_task_id' } : null,
        callbackUrl: dto.callback_url,
        baseUrl: base,
        details: this.inputs.rows(stored),
      });
    } catch (err) {
      await this.inputs.discard(stored);
      throw err;
    }
    return successEnvelope(requestId, { data: toKlingImageTask(task) });
  }

  async get(principal: Principal, requestId: string, idOrExternalId: string): Promise<KlingImageTaskDetailEnvelopeDto> {
    const [detail] = await this.records.records([await this.findOwn(principal, idOrExternalId)]);
    return successEnvelope(requestId, { data: detail });
  }

  /** The caller's image tasks (whichever door made them), newest first; `external_task_id` picks one. */
  async list(principal: Principal, requestId: string, query: ListExpandTasksQueryDto): Promise<KlingImageTaskListEnvelopeDto> {
    const page = { skip: (query.pageNum - 1) * query.pageSize, take: query.pageSize, externalId: query.external_task_id };
    const tasks = await this.tasks.listForOwner<ImageParams, ImageResult>(KIND, principal.owner, page);
    return successEnvelope(requestId, { data: await this.records.records(tasks) });
  }

  async listCallbacks(principal: Principal, requestId: string, idOrExternalId: string): Promise<CallbackListEnvelopeDto> {
    return successEnvelope(requestId, { data: await this.callbacks.listForTask((await this.findOwn(principal, idOrExternalId)).id) });
  }

  /** By task_id or, as in Kling, by the owner's external_task_id. */
  private async findOwn(principal: Principal, idOrExternalId: string): Promise<ImageTask> {
    const task = await this.tasks.findForOwnerByIdOrExternalId<ImageParams, ImageResult>(KIND, principal.owner, idOrExternalId);
    if (!task) throw new AppError('NOT_FOUND', `No image task ${idOrExternalId} (by task_id or external_task_id) among yours`);
    return task;
  }
}
