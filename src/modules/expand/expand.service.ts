import { randomUUID } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import type { Principal } from '../../common/auth/credential.js';
import { AppError } from '../../common/errors/app-error.js';
import { Base64Json } from '../../common/http/base64-json.js';
import { successEnvelope } from '../../common/http/envelope.js';
import type { Prisma } from '../../generated/prisma/client.js';
import { AppConfig } from '../../infra/config/app-config.js';
import { type CallbackSubject, CallbacksService } from '../callbacks/callbacks.service.js';
import type { CallbackListEnvelopeDto } from '../callbacks/dto/callback.dto.js';
import { QueueService } from '../../infra/queue/queue.service.js';
import type { MediaRow } from '../media/media.repository.js';
import { LimitsService } from '../limits/limits.service.js';
import { MediaService } from '../media/media.service.js';
import type { CreateExpandTaskDto } from './dto/create-expand-task.dto.js';
import { parseImageCount } from './dto/expand-validators.js';
import type { ExpandTaskDetailDto, ExpandTaskDetailEnvelopeDto, ExpandTaskDto, ExpandTaskEnvelopeDto, ExpandTaskListEnvelopeDto } from './dto/expand-task.dto.js';
import type { ListExpandTasksQueryDto } from './dto/list-expand-tasks.dto.js';
import { ExpandRepository, type ExpandTaskRecordRow, type ExpandTaskRow, type NewExpandTask } from './expand.repository.js';

@Injectable()
export class ExpandService {
  constructor(
    private readonly tasks: ExpandRepository,
    private readonly media: MediaService,
    private readonly config: AppConfig,
    private readonly queue: QueueService,
    private readonly callbacks: CallbacksService,
    private readonly limits: LimitsService,
  ) {}

  /**
   * Stores the task and enqueues its job in one statement: neither exists without the other. The reply
   * echoes the image; one that was decoded while it streamed in is encoded back as the reply streams out.
   */
  async createTask(principal: Principal, dto: CreateExpandTaskDto, requestBase?: string): Promise<ExpandTaskEnvelopeDto | Base64Json> {
    const image = dto.image;
    const facts = image.kind === 'base64' ? image.facts : undefined;
    const createdAt = new Date();
    const n = parseImageCount(dto.n)!;
    const price = this.limits.price('expand', { images: n });
    const [id, jobId] = [randomUUID(), randomUUID()];
    const task: NewExpandTask = {
      id,
      jobId,
      owner: principal.owner,
      ...price,
      externalTaskId: dto.external_task_id ?? null,
      imageUrl: image.kind === 'url' ? image.url : null,
      imageBytes: image.kind === 'base64' ? image.bytes : null,
      imageFormat: facts?.format ?? null,
      imageWidth: facts?.width ?? null,
      imageHeight: facts?.height ?? null,
      upRatio: dto.up_expansion_ratio,
      bottomRatio: (dto.bottom_expansion_ratio ?? dto.down_expansion_ratio)!,
      leftRatio: dto.left_expansion_ratio,
      rightRatio: dto.right_expansion_ratio,
      prompt: dto.prompt ?? null,
      n,
      callbackUrl: dto.callback_url ?? null,
      watermark: dto.watermark_info?.enabled ?? false,
      baseUrl: requestBase ?? null,
      createdAt,
      deadlineAt: new Date(createdAt.getTime() + this.config.taskTimeoutS.expand * 1000),
    };
    if (task.imageBytes && facts && this.media.storesInputs) {
      // an object store holds the input; the task row then holds only its key and facts
      task.imageObject = await this.media.putObject({ owner: principal.owner, taskId: id, role: 'input', index: 0, body: task.imageBytes, contentType: `image/${facts.format}`, width: facts.width, height: facts.height });
      task.imageBytes = null;
    }
    let row: ExpandTaskRecordRow;
    try {
      row = await this.limits.admit(principal.owner, 'expand', price, (admission) => this.tasks.createTask(task, admission, QueueService.jobSql('expand.run', jobId, { taskId: id })));
    } catch (err) {
      if (task.imageObject) await this.media.discardObjects([task.imageObject]);
      throw err;
    }
    this.queue.jobsAdded('expand.run');
    const original = image.original;
    if (original === undefined) return new Base64Json(successEnvelope({ data: toTaskDto(row) }), 'image', (image as { bytes: Buffer }).bytes);
    return successEnvelope({ data: toTaskDto(row), image: original });
  }

  async getTask(principal: Principal, idOrExternalId: string): Promise<ExpandTaskDetailEnvelopeDto> {
    const row = await this.tasks.findForOwner(principal.owner, idOrExternalId);
    if (!row) {
      throw new AppError('NOT_FOUND', `No expand task ${idOrExternalId} (by task_id or external_task_id) among yours`);
    }
    const [detail] = await this.withMedia([row]);
    return successEnvelope({ data: detail });
  }

  async listTasks(principal: Principal, query: ListExpandTasksQueryDto): Promise<ExpandTaskListEnvelopeDto> {
    const rows = await this.tasks.listForOwner(principal.owner, { skip: (query.pageNum - 1) * query.pageSize, take: query.pageSize }, query.external_task_id);
    return successEnvelope({ data: await this.withMedia(rows) });
  }

  /** The tasks' notifications: as Kling's callbacks, the bare task record (the query answer's `data`), fixed at the status change. */
  async callbackSubjects(tx: Prisma.TransactionClient, taskIds: string[]): Promise<CallbackSubject[]> {
    const rows = await this.tasks.findWithCallback(taskIds, tx);
    const details = await this.withMedia(rows, tx);
    return rows.map((row, i) => ({ taskId: row.id, owner: row.owner, url: row.callbackUrl!, body: () => details[i] }));
  }

  /** The notifications sent for one of the caller's tasks, with every attempt. */
  async listCallbacks(principal: Principal, idOrExternalId: string): Promise<CallbackListEnvelopeDto> {
    const row = await this.tasks.findForOwner(principal.owner, idOrExternalId);
    if (!row) {
      throw new AppError('NOT_FOUND', `No expand task ${idOrExternalId} (by task_id or external_task_id) among yours`);
    }
    return successEnvelope({ data: await this.callbacks.listForTask(row.id) });
  }

  private async withMedia(rows: ExpandTaskRow[], tx?: Prisma.TransactionClient): Promise<ExpandTaskDetailDto[]> {
    const media = await this.media.listForTasks(rows.filter((r) => r.status === 'succeed').map((r) => r.id), tx);
    return rows.map((row) => {
      const base = this.media.linkBase(row.baseUrl);
      return toTaskDetailDto(row, media.filter((m) => m.taskId === row.id), (m) => this.media.signedUrl(m, base));
    });
  }
}

export function toTaskDto(row: ExpandTaskRecordRow): ExpandTaskDto {
  return {
    task_id: row.id,
    task_status: row.status,
    task_info: { external_task_id: row.externalTaskId },
    created_at: row.createdAt.getTime(),
    updated_at: row.updatedAt.getTime(),
  };
}

/** Kling's task record: what the query answer carries as `data`, and each callback as its whole body. */
function toTaskDetailDto(row: ExpandTaskRow, media: MediaRow[], urlOf: (m: MediaRow) => string): ExpandTaskDetailDto {
  const { task_id, task_status, task_info, created_at, updated_at } = toTaskDto(row);
  const watermarks = new Map(media.filter((m) => m.role === 'watermark').map((m) => [m.index, m]));
  const images = media
    .filter((m) => m.role === 'image')
    .map((m) => {
      const watermark = watermarks.get(m.index);
      return { index: m.index, url: urlOf(m), ...(watermark ? { watermark_url: urlOf(watermark) } : {}) };
    });
  return {
    task_id,
    task_status,
    task_status_msg: row.statusMessage ?? '',
    task_info,
    watermark_info: { enabled: row.watermark },
    task_result: { images, media_expired: row.mediaExpiredAt !== null },
    created_at,
    updated_at,
    ...(row.status === 'succeed' || row.status === 'failed' ? { final_unit_deduction: String(row.status === 'succeed' ? row.credits : 0) } : {}),
  };
}
