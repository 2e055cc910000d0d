import { randomUUID } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import type { Principal } from '../../common/auth/credential.js';
import { AppError } from '../../common/errors/app-error.js';
import { Base64Bytes, Base64Json } from '../../common/http/base64-json.js';
import { successEnvelope } from '../../common/http/envelope.js';
import { TaskEngine } from '../../common/tasks/task-engine.js';
import { TaskRepository } from '../../common/tasks/task.repository.js';
import { CallbacksService } from '../../modules/callbacks/callbacks.service.js';
import type { CallbackListEnvelopeDto } from '../../modules/callbacks/dto/callback.dto.js';
import { type NewMedia, snakeMedia } from '../../modules/media/media.repository.js';
import { MediaService } from '../../modules/media/media.service.js';
import { CallerUrls } from '../../modules/samples/caller-urls.service.js';
import type { CreateExpandTaskDto } from './dto/create-expand-task.dto.js';
import { parseImageCount } from './dto/expand-validators.js';
import type { ExpandTaskDetailEnvelopeDto, ExpandTaskEnvelopeDto, ExpandTaskListEnvelopeDto } from './dto/expand-task.dto.js';
import type { ListExpandTasksQueryDto } from './dto/kling-page-query.dto.js';
import { ExpandCapability } from '../../modules/expand/expand-capability.js';
import { ExpandKind } from '../../modules/expand/expand.kind.js';
import { ExpandRecords, toTaskDto } from './kling-expand.records.js';
import { ExpandRepository } from '../../modules/expand/expand.repository.js';
import type { ExpandParams, ExpandTask } from '../../modules/expand/expand-task.js';

@Injectable()
export class ExpandService {
  constructor(
    private readonly engine: TaskEngine,
    private readonly tasks: TaskRepository,
    private readonly kind: ExpandKind,
    private readonly records: ExpandRecords,
    private readonly media: MediaService,
    private readonly callbacks: CallbacksService,
    private readonly capability: ExpandCapability,
    private readonly callerUrls: CallerUrls,
  ) {}

  /**
   * Accepts the task: it, its decoded image and its job are stored in one statement (see TaskEngine.submit).
   * The reply echoes the image; one that was decoded while it streamed in is encoded back as the reply streams out.
   */
  async createTask(principal: Principal, requestId: string, dto: CreateExpandTaskDto, requestBase?: string): Promise<ExpandTaskEnvelopeDto | Base64Json> {
    const image = dto.image;
    if (image.kind === 'url') this.callerUrls.check('image', image.url, requestBase);
    this.callerUrls.check('callback_url', dto.callback_url, requestBase);
    const facts = image.kind === 'base64' ? image.facts : undefined;
    const params: ExpandParams = {
      ...(image.kind === 'url' ? { image_url: image.url } : {}),
      ...(facts ? { image_format: facts.format, image_width: facts.width, image_height: facts.height } : {}),
      up_ratio: dto.up_expansion_ratio,
      bottom_ratio: (dto.bottom_expansion_ratio ?? dto.down_expansion_ratio)!,
      left_ratio: dto.left_expansion_ratio,
      right_ratio: dto.right_expansion_ratio,
      ...(dto.prompt !== undefined ? { prompt: dto.prompt } : {}),
      n: parseImageCount(dto.n)!,
      watermark: dto.watermark_info?.enabled ?? false,
    };
    // the image's size and the expanded size, known here for Base64 (a URL's are checked when the task runs)
    const outOfBounds = facts ? this.kind.boundsProblem(params, facts.width, facts.height) : null;
    if (outOfBounds) throw new AppError('INVALID_PARAMETER', outOfBounds);
    await this.capability.check(params);
    const id = randomUUID();
    let input: NewMedia | undefined;
    if (image.kind === 'base64' && facts && this.media.storesInputs) {
      // an object store holds the input; the task then holds only its key and facts
      input = await this.media.putObject({ owner: principal.owner, taskId: id, role: 'input', index: 0, body: image.bytes, contentType: `image/${facts.format}`, width: facts.width, height: facts.height });
    }
    const details = input ? [{ table: 'media', rows: [snakeMedia(input)] }] : image.kind === 'base64' ? [ExpandRepository.inputRows(id, image.bytes)] : [];
    let task: ExpandTask;
    try {
      task = await this.engine.submit(this.kind, {
        id,
        owner: principal.owner,
        params,
        externalId: dto.external_task_id ? { value: dto.external_task_id, field: 'external_task_id' } : null,
        callbackUrl: dto.callback_url,
        baseUrl: requestBase,
        details,
      });
    } catch (err) {
      if (input) await this.media.discardObjects([input]);
      throw err;
    }
    if (image.original === undefined) return new Base64Json({ ...successEnvelope(requestId, { data: toTaskDto(task) }), image: new Base64Bytes((image as { bytes: Buffer }).bytes) });
    return successEnvelope(requestId, { data: toTaskDto(task), image: image.original });
  }

  async getTask(principal: Principal, requestId: string, idOrExternalId: string): Promise<ExpandTaskDetailEnvelopeDto> {
    const [detail] = await this.records.records([await this.findOwn(principal, idOrExternalId)]);
    return successEnvelope(requestId, { data: detail });
  }

  async listTasks(principal: Principal, requestId: string, query: ListExpandTasksQueryDto): Promise<ExpandTaskListEnvelopeDto> {
    const page = { skip: (query.pageNum - 1) * query.pageSize, take: query.pageSize, externalId: query.external_task_id };
    const tasks = await this.tasks.listForOwner<ExpandParams, Record<string, never>>(ExpandKind.definition.name, principal.owner, page);
    return successEnvelope(requestId, { data: await this.records.records(tasks) });
  }

  /** The notifications sent for one of the caller's tasks, with every attempt. */
  async listCallbacks(principal: Principal, requestId: string, idOrExternalId: string): Promise<CallbackListEnvelopeDto> {
    return successEnvelope(requestId, { data: await this.callbacks.listForTask((await this.findOwn(principal, idOrExternalId)).id) });
  }

  /** By task_id or, as in Kling, by the owner's external_task_id. */
  private async findOwn(principal: Principal, idOrExternalId: string): Promise<ExpandTask> {
    const task = await this.tasks.findForOwnerByIdOrExternalId<ExpandParams, Record<string, never>>(ExpandKind.definition.name, principal.owner, idOrExternalId);
    if (!task) throw new AppError('NOT_FOUND', `No expand task ${idOrExternalId} (by task_id or external_task_id) among yours`);
    return task;
  }
}
