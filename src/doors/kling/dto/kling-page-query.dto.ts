import { ApiPropertyOptional } from '@nestjs/swagger';
import { QueryInteger } from '../../../common/validation/validators.js';
import { IsInt, IsOptional, IsString, Length, Max, Min } from 'class-validator';

export class ListExpandTasksQueryDto {
  @ApiPropertyOptional({ type: 'integer', minimum: 1, maximum: 1000, default: 1, description: 'Page number, from 1.' })
  @IsOptional()
  @QueryInteger()
  @IsInt({ message: 'pageNum must be a whole number from 1 to 1000' })
  @Min(1, { message: 'pageNum must be a whole number from 1 to 1000' })
  @Max(1000, { message: 'pageNum must be a whole number from 1 to 1000' })
  pageNum: number = 1;

  @ApiPropertyOptional({ type: 'integer', minimum: 1, maximum: 500, default: 30, description: 'Tasks per page.' })
  @IsOptional()
  @QueryInteger()
  @IsInt({ message: 'pageSize must be a whole number from 1 to 500' })
  @Min(1, { message: 'pageSize must be a whole number from 1 to 500' })
  @Max(500, { message: 'pageSize must be a whole number from 1 to 500' })
  pageSize: number = 30;

  @ApiPropertyOptional({ description: 'Only the task with this external_task_id.' })
  @IsOptional()
  @IsString({ message: 'external_task_id must be a string' })
  @Length(1, 256, { message: 'external_task_id must be 1 to 256 characters long' })
  external_task_id?: string;
}
