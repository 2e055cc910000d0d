import { ApiProperty, ApiPropertyOptional, getSchemaPath } from '@nestjs/swagger';
import { IsOptional, Matches } from 'class-validator';
import { OwnerQueryDto } from '../../../common/validation/owner.js';
import { BILLED_UNITS, type BilledUnit } from '../../../vendors/contracts/vendor-billing.js';

export class OperationUsageDto {
  @ApiProperty({ type: 'integer', description: 'Tasks accepted.', example: 12 })
  accepted!: number;

  @ApiProperty({ type: 'integer', description: 'Of those, finished successfully.', example: 10 })
  succeeded!: number;

  @ApiProperty({ type: 'integer', description: 'Of those, failed.', example: 1 })
  failed!: number;

  @ApiProperty({ type: 'integer', description: 'Credits charged at acceptance.', example: 24 })
  credits_charged!: number;

  @ApiProperty({ type: 'integer', description: 'Credits given back for failed tasks.', example: 2 })
  credits_refunded!: number;
}

export class CreditsDto {
  @ApiProperty({ type: 'integer', nullable: true, description: 'The monthly allowance; null when unlimited.', example: 1000 })
  monthly_credits!: number | null;

  @ApiProperty({ type: 'integer', description: 'Charged this month, refunds deducted.', example: 22 })
  used!: number;

  @ApiProperty({ type: 'integer', nullable: true, description: 'Left this month; null when unlimited.', example: 978 })
  remaining!: number | null;
}

/** Refusals of one code: how many requests or tasks a limit refused. */
export class RefusalCountDto {
  @ApiProperty({ type: 'integer', enum: [1302, 1303, 1102], description: '1302: requests per minute; 1303: concurrent tasks; 1102: monthly credits.', example: 1302 })
  code!: number;

  @ApiProperty({ enum: ['rate_limited', 'concurrency_limited', 'resource_pack_exhausted'], description: "The code's name (the string code of the error envelope).", example: 'rate_limited' })
  name!: string;

  @ApiProperty({ type: 'integer', example: 3 })
  count!: number;
}

/** One day and operation of the caller's usage. */
export class OwnDailyUsageDto extends OperationUsageDto {
  @ApiProperty({ format: 'date', example: '2026-11-21' })
  day!: string;

  /** The operation (task kind); its values are set on the OpenAPI document from the registry (see applyKindNames). */
  @ApiProperty({ description: 'The operation (task kind).', example: 'expand' })
  operation!: string;
}

/** GET /usage: the caller's own usage in the current month. */
export class UsageDto {
  @ApiProperty({ example: 'team-video' })
  owner!: string;

  @ApiProperty({ description: 'Calendar month (UTC).', example: '2026-11' })
  month!: string;

  /** One property per operation (task kind) of the registry, set on the OpenAPI document (see applyKindNames). */
  @ApiProperty({
    type: 'object',
    additionalProperties: { $ref: getSchemaPath(OperationUsageDto) },
    description: 'Tasks created this month, by operation (every operation of the service, zeros included), with their outcome so far.',
  })
  operations!: Record<string, OperationUsageDto>;

  @ApiProperty({ type: CreditsDto })
  credits!: CreditsDto;

  @ApiProperty({ type: OwnDailyUsageDto, isArray: true, description: 'This month by day (UTC) and operation: one row per day and operation with any task, in order.' })
  days!: OwnDailyUsageDto[];

  @ApiProperty({ type: RefusalCountDto, isArray: true, description: 'Requests and tasks refused by your limits this month, by code (every code, zeros included). Counted about once a second.' })
  refusals!: RefusalCountDto[];
}

/** GET /video-b/v1/credits, as Luma's. */
export class CreditBalanceDto {
  @ApiProperty({ type: 'integer', description: `Credits left this month (Luma counts USD cents; here, the gateway's credits). ${Number.MAX_SAFE_INTEGER} when unlimited.`, example: 978 })
  credit_balance!: number;

  @ApiProperty({ description: 'True when the owner has no monthly credit limit.', example: false })
  unlimited!: boolean;
}

const DAY = /^\d{4}-\d{2}-\d{2}$/;

export class AdminUsageQueryDto extends OwnerQueryDto {
  @ApiPropertyOptional({ format: 'date', description: 'First day (UTC), YYYY-MM-DD; the first of this month when left out.', example: '2026-11-01' })
  @IsOptional()
  @Matches(DAY, { message: 'from must be a day: YYYY-MM-DD' })
  from?: string;

  @ApiPropertyOptional({ format: 'date', description: 'Last day (UTC, inclusive), YYYY-MM-DD; today when left out. At most 366 days after from.', example: '2026-11-30' })
  @IsOptional()
  @Matches(DAY, { message: 'to must be a day: YYYY-MM-DD' })
  to?: string;
}

export class DailyUsageDto extends OperationUsageDto {
  @ApiProperty({ format: 'date', example: '2026-11-21' })
  day!: string;

  @ApiProperty({ example: 'team-video' })
  owner!: string;

  /** The operation (task kind); its values are set on the OpenAPI document from the registry (see applyKindNames). */
  @ApiProperty({ description: 'The operation (task kind).', example: 'expand' })
  operation!: string;
}

export class DailyRefusalsDto {
  @ApiProperty({ format: 'date', example: '2026-11-21' })
  day!: string;

  @ApiProperty({ example: 'team-video' })
  owner!: string;

  @ApiProperty({ type: 'integer', enum: [1302, 1303, 1102], example: 1303 })
  code!: number;

  @ApiProperty({ type: 'integer', example: 2 })
  count!: number;
}

/** What upstreams cost for one owner, operation, channel and model. */
export class UpstreamCostDto {
  @ApiProperty({ example: 'team-video' })
  owner!: string;

  @ApiProperty({ description: 'The operation (task kind).', example: 'video' })
  operation!: string;

  @ApiProperty({ description: 'The channel (an account of one vendor) that took the upstream tasks.', example: 'kling-a' })
  channel!: string;

  @ApiProperty({ description: 'The model asked for, by the name callers use (empty for operations without models).', example: 'kling-v1-6' })
  model!: string;

  @ApiProperty({ type: 'integer', description: 'Upstream tasks the channel took for these tasks, those later abandoned (failed there, or stalled) included.', example: 4 })
  upstream_tasks!: number;

  @ApiProperty({ type: 'integer', description: 'Of those, how many had no price set on the channel (not in cost).', example: 0 })
  unpriced!: number;

  @ApiProperty({ description: "What they cost the company, by the channel's prices (per second of video at its resolution, per image).", example: 2.8 })
  cost!: number;

  @ApiProperty({
    type: Number,
    nullable: true,
    description:
      "What the vendors reported they billed for them, at the channel's prices (price.per_billed_unit; billed seconds at per_second), summed over the upstream tasks whose figure is known and priced: set it beside cost to reconcile (null: none known).",
    example: 2.94,
  })
  billed_cost!: number | null;

  @ApiProperty({
    type: 'object',
    properties: Object.fromEntries(BILLED_UNITS.map((unit) => [unit, { type: 'number' }])),
    additionalProperties: false,
    description: "What the vendors reported they billed for them, summed by unit (Kling's units, Runway's credits, Seedance's tokens, Wan's seconds); only the units reported.",
    example: { units: 21 },
  })
  billed!: Partial<Record<BilledUnit, number>>;

  @ApiProperty({ type: 'integer', description: 'Of the upstream tasks, how many have no billed figure: their vendor reports none (docs/operators/channels.md lists those that do), or they have not ended.', example: 0 })
  unbilled!: number;

  @ApiProperty({ type: 'integer', description: 'Of the upstream tasks, how many were billed differently from their price by more than BILLED_COST_TOLERANCE × it (both known).', example: 1 })
  billing_mismatches!: number;
}

export class AdminUsageDto {
  @ApiProperty({ format: 'date', example: '2026-11-01' })
  from!: string;

  @ApiProperty({ format: 'date', example: '2026-11-30' })
  to!: string;

  @ApiProperty({ type: String, nullable: true, example: null })
  owner!: string | null;

  @ApiProperty({ type: DailyUsageDto, isArray: true, description: 'One row per day, owner and operation with any task; days without tasks are left out.' })
  days!: DailyUsageDto[];

  @ApiProperty({ type: DailyRefusalsDto, isArray: true, description: 'Refusals by a limit (1302, 1303, 1102) per day, owner and code; days without any are left out.' })
  refusals!: DailyRefusalsDto[];

  @ApiProperty({ type: UpstreamCostDto, isArray: true, description: 'What upstreams cost for the tasks created in the period, per owner, operation, channel and model, beside the credits charged (days).' })
  upstream_costs!: UpstreamCostDto[];
}
