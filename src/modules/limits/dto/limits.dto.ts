import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsInt, IsOptional, Max, Min } from 'class-validator';
import { RefusesUnknownFields } from '../../../common/validation/body-fields.js';

const LIMIT_DOC = (what: string) => ({ type: 'integer', nullable: true, minimum: 0, description: `${what}. null: unlimited; left out: the default (DEFAULT_* setting).` }) as const;

/** PUT /admin/owners/{owner}/limits: each field an integer, null (unlimited), or left out (the default). */
@RefusesUnknownFields()
export class SetLimitsDto {
  @ApiPropertyOptional({ ...LIMIT_DOC('Requests per minute, on every keyed route, across every instance'), example: 60 })
  @IsOptional()
  @IsInt({ message: 'requests_per_minute must be a whole number (or null for unlimited)' })
  @Min(0, { message: 'requests_per_minute must be 0 or more' })
  @Max(10_000_000, { message: 'requests_per_minute must be at most 10000000' })
  requests_per_minute?: number | null;

  @ApiPropertyOptional({ ...LIMIT_DOC('Slots unfinished tasks may hold at once (an expand task holds n, a video or audio task 1)'), example: 4 })
  @IsOptional()
  @IsInt({ message: 'max_concurrent_tasks must be a whole number (or null for unlimited)' })
  @Min(0, { message: 'max_concurrent_tasks must be 0 or more' })
  @Max(1_000_000, { message: 'max_concurrent_tasks must be at most 1000000' })
  max_concurrent_tasks?: number | null;

  @ApiPropertyOptional({ ...LIMIT_DOC('Credits per calendar month (UTC)'), example: 1000 })
  @IsOptional()
  @IsInt({ message: 'monthly_credits must be a whole number (or null for unlimited)' })
  @Min(0, { message: 'monthly_credits must be 0 or more' })
  @Max(2_000_000_000, { message: 'monthly_credits must be at most 2000000000' })
  monthly_credits?: number | null;
}

export class CurrentUsageDto {
  @ApiProperty({ description: 'The calendar month (UTC) of the credit figures.', example: '2026-11' })
  month!: string;

  @ApiProperty({ type: 'integer', description: "Requests counted in the owner's current one-minute window.", example: 12 })
  requests_this_minute!: number;

  @ApiProperty({ type: 'integer', nullable: true, description: 'Seconds until that window ends; null when none is open.', example: 41 })
  window_resets_in_s!: number | null;

  @ApiProperty({ type: 'integer', description: "Slots held by the owner's unfinished tasks.", example: 2 })
  active_slots!: number;

  @ApiProperty({ type: 'integer', description: 'Credits charged this month, refunds deducted.', example: 17 })
  credits_used!: number;

  @ApiProperty({ type: 'integer', nullable: true, description: 'Credits left this month; null when unlimited.', example: 983 })
  credits_remaining!: number | null;
}

export class OwnerLimitsDto {
  @ApiProperty({ example: 'team-video' })
  owner!: string;

  @ApiProperty({ type: 'integer', nullable: true, example: 60 })
  requests_per_minute!: number | null;

  @ApiProperty({ type: 'integer', nullable: true, example: 4 })
  max_concurrent_tasks!: number | null;

  @ApiProperty({ type: 'integer', nullable: true, example: null })
  monthly_credits!: number | null;

  @ApiProperty({ enum: ['requests_per_minute', 'max_concurrent_tasks', 'monthly_credits'], isArray: true, description: 'The limits that are the defaults (no admin set them).', example: ['monthly_credits'] })
  defaults!: string[];

  @ApiProperty({ type: CurrentUsageDto })
  usage!: CurrentUsageDto;
}
