import { ApiPropertyOptional } from '@nestjs/swagger';
import { QueryInteger } from '../../../common/validation/validators.js';
import { IsInt, IsOptional, Max, Min } from 'class-validator';

export class ListGenerationsQueryDto {
  @ApiPropertyOptional({ type: 'integer', minimum: 1, maximum: 100, default: 10 })
  @IsOptional()
  @QueryInteger()
  @IsInt({ message: 'limit must be a whole number from 1 to 100' })
  @Min(1, { message: 'limit must be a whole number from 1 to 100' })
  @Max(100, { message: 'limit must be a whole number from 1 to 100' })
  limit: number = 10;

  @ApiPropertyOptional({ type: 'integer', minimum: 0, maximum: 1_000_000, default: 0 })
  @IsOptional()
  @QueryInteger()
  @IsInt({ message: 'offset must be a whole number, 0 or more' })
  @Min(0, { message: 'offset must be a whole number, 0 or more' })
  @Max(1_000_000, { message: 'offset must be at most 1000000' })
  offset: number = 0;
}
