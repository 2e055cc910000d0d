import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { SuccessEnvelopeDto } from '../../../common/swagger/success-envelope.dto.js';

export const EXPAND_TASK_STATUSES = ['submitted', 'processing', 'succeed', 'failed'] as const;
export type ExpandTaskStatusValue = (typeof EXPAND_TASK_STATUSES)[number];

export class ExpandTaskInfoDto {
  @ApiProperty({ type: String, nullable: true, example: 'order-1234-expand' })
  external_task_id!: string | null;
}

export class ExpandTaskDto {
  @ApiProperty({ description: 'System-generated task id.', example: '8d3c1e2f-6b7a-4c9d-9e0f-1a2b3c4d5e6f' })
  task_id!: string;

  @ApiProperty({ enum: EXPAND_TASK_STATUSES, example: 'submitted' })
  task_status!: ExpandTaskStatusValue;

  @ApiProperty({ type: ExpandTaskInfoDto })
  task_info!: ExpandTaskInfoDto;

  @ApiProperty({ description: 'Creation time, Unix milliseconds.', example: 1763683200000 })
  created_at!: number;

  @ApiProperty({ description: 'Last update time, Unix milliseconds.', example: 1763683200000 })
  updated_at!: number;
}

export class ExpandTaskEnvelopeDto extends SuccessEnvelopeDto {
  @ApiProperty({ type: ExpandTaskDto })
  data!: ExpandTaskDto;

  @ApiProperty({ description: 'The image as sent (the spec\'s response schema requires it): Base64 or URL.', example: 'https://example.com/photo.png' })
  image!: string;
}

export class ExpandResultImageDto {
  @ApiProperty({ example: 0 })
  index!: number;

  @ApiProperty({ description: 'Absolute, signed link to the PNG; works without the API key until it expires (RESULT_URL_TTL_S).', example: 'http://localhost:3000/media/1f2e3d4c-5b6a-4978-8695-a4b3c2d1e0f9?expires=1796000000&signature=…' })
  url!: string;

  @ApiPropertyOptional({ description: 'The watermarked copy, when the task asked for watermark_info.enabled.', example: 'http://localhost:3000/media/…?expires=…&signature=…' })
  watermark_url?: string;
}

export class ExpandTaskResultDto {
  @ApiProperty({ type: ExpandResultImageDto, isArray: true })
  images!: ExpandResultImageDto[];

  @ApiProperty({ description: 'True when the result files were deleted after RESULT_RETENTION_DAYS.', example: false })
  media_expired!: boolean;
}

export class WatermarkInfoRecordDto {
  @ApiProperty({ example: false })
  enabled!: boolean;
}

/** The task as the query and list endpoints show it, and as its callbacks carry it (Kling's task record). */
export class ExpandTaskDetailDto extends ExpandTaskDto {
  @ApiProperty({ type: WatermarkInfoRecordDto })
  watermark_info!: WatermarkInfoRecordDto;

  @ApiProperty({ description: 'Why the task failed; empty otherwise.', example: '' })
  task_status_msg!: string;

  @ApiProperty({ type: ExpandTaskResultDto })
  task_result!: ExpandTaskResultDto;

  @ApiPropertyOptional({
    description: "As Kling: the credits the task finally cost, once it is final (its price when it succeeded, `0` when it failed: a failure's credits are given back). Absent while it runs.",
    example: '1',
  })
  final_unit_deduction?: string;
}

export class ExpandTaskDetailEnvelopeDto extends SuccessEnvelopeDto {
  @ApiProperty({ type: ExpandTaskDetailDto })
  data!: ExpandTaskDetailDto;
}

export class ExpandTaskListEnvelopeDto extends SuccessEnvelopeDto {
  @ApiProperty({ type: ExpandTaskDetailDto, isArray: true, description: "The owner's tasks, newest first." })
  data!: ExpandTaskDetailDto[];
}
