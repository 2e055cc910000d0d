import { randomUUID } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import type { Principal } from '../../common/auth/credential.js';
import { successEnvelope } from '../../common/http/envelope.js';
import type { CreateExpandTaskDto } from './dto/create-expand-task.dto.js';
import { parseImageCount } from './dto/expand-validators.js';
import type { ExpandTaskDto, ExpandTaskEnvelopeDto } from './dto/expand-task.dto.js';
import { ExpandRepository, type ExpandTaskRow } from './expand.repository.js';

@Injectable()
export class ExpandService {
  constructor(private readonly tasks: ExpandRepository) {}

  async createTask(principal: Principal, dto: CreateExpandTaskDto): Promise<ExpandTaskEnvelopeDto> {
    const image = dto.image;
    const facts = image.kind === 'base64' ? image.facts : undefined;
    const row = await this.tasks.createTask({
      id: randomUUID(),
      owner: principal.owner,
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
      n: parseImageCount(dto.n)!,
      callbackUrl: dto.callback_url ?? null,
      createdAt: new Date(),
    });
    return successEnvelope({ data: toTaskDto(row), image: image.original });
  }
}

export function toTaskDto(row: ExpandTaskRow): ExpandTaskDto {
  return {
    task_id: row.id,
    task_status: row.status,
    task_info: { external_task_id: row.externalTaskId },
    created_at: row.createdAt.getTime(),
    updated_at: row.updatedAt.getTime(),
  };
}
