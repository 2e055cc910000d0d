import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { SuccessEnvelopeDto } from '../../../common/swagger/success-envelope.dto.js';

export const KLING_IMAGE_STATUSES = ['submitted', 'processing', 'succeed', 'failed'] as const;
export type KlingImageStatusValue = (typeof KLING_IMAGE_STATUSES)[number];

export class KlingImageTaskInfoDto {
  @ApiProperty({ type: String, nullable: true, example: 'order-1234-image' })
  external_task_id!: string | null;
}

/** The short record (the create answer). */
export class KlingImageTaskDto {
  @ApiProperty({ description: 'System-generated task id.', example: '8d3c1e2f-6b7a-4c9d-9e0f-1a2b3c4d5e6f' })
  task_id!: string;

  @ApiProperty({ enum: KLING_IMAGE_STATUSES, example: 'submitted' })
  task_status!: KlingImageStatusValue;

  @ApiProperty({ type: KlingImageTaskInfoDto })
  task_info!: KlingImageTaskInfoDto;

  @ApiProperty({ description: 'Creation time, Unix milliseconds.', example: 1763683200000 })
  created_at!: number;

  @ApiProperty({ description: 'Last update time, Unix milliseconds.', example: 1763683200000 })
  updated_at!: number;
}

export class KlingImageResultImageDto {
  @ApiProperty({ example: 0 })
  index!: number;

  @ApiProperty({ description: "Absolute, signed link to the gateway's stored copy; works without the API key until it expires (RESULT_URL_TTL_S).", example: 'http://localhost:3000/media/1f2e3d4c-5b6a-4978-8695-a4b3c2d1e0f9?expires=1796000000&signature=…' })
  url!: string;
}

export class KlingImageTaskResultDto {
  @ApiProperty({ type: KlingImageResultImageDto, isArray: true })
  images!: KlingImageResultImageDto[];

  @ApiProperty({ description: 'True when the result files were deleted after RESULT_RETENTION_DAYS.', example: false })
  media_expired!: boolean;
}

/** The task as the query and list endpoints show it, and as its callbacks carry it (Kling's image task record). */
export class KlingImageTaskDetailDto extends KlingImageTaskDto {
  @ApiProperty({ description: 'Why the task failed; empty otherwise.', example: '' })
  task_status_msg!: string;

  @ApiProperty({ type: KlingImageTaskResultDto })
  task_result!: KlingImageTaskResultDto;

  @ApiPropertyOptional({ description: 'As Kling: the credits the task finally cost, once it is final (`0` when it failed). Absent while it runs.', example: '1' })
  final_unit_deduction?: string;
}

export class KlingImageTaskEnvelopeDto extends SuccessEnvelopeDto {
  @ApiProperty({ type: KlingImageTaskDto })
  data!: KlingImageTaskDto;
}

export class KlingImageTaskDetailEnvelopeDto extends SuccessEnvelopeDto {
  @ApiProperty({ type: KlingImageTaskDetailDto })
  data!: KlingImageTaskDetailDto;
}

export class KlingImageTaskListEnvelopeDto extends SuccessEnvelopeDto {
  @ApiProperty({ type: KlingImageTaskDetailDto, isArray: true, description: "The owner's image tasks, newest first." })
  data!: KlingImageTaskDetailDto[];
}
