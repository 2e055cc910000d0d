import { applyDecorators } from '@nestjs/common';
import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Transform } from 'class-transformer';
import { IsOptional, IsString, Length, Matches } from 'class-validator';

export const OWNER_MAX_CHARS = 128;
export const OWNER_PATTERN = /^[A-Za-z0-9._:@-]+$/;
const OWNER_DOC = { description: 'An owner: a team or service. All keys of one owner see the same tasks.', example: 'team-video', minLength: 1, maxLength: OWNER_MAX_CHARS, pattern: OWNER_PATTERN.source } as const;

/** The rule every owner name follows, in a body, a path or a query: 1–128 of letters, digits and . _ : @ - */
export function IsOwnerName(): PropertyDecorator {
  return applyDecorators(
    IsString({ message: 'owner must be a string' }),
    Length(1, OWNER_MAX_CHARS, { message: `owner must be 1 to ${OWNER_MAX_CHARS} characters long` }),
    Matches(OWNER_PATTERN, { message: 'owner may contain only letters, digits and . _ : @ -' }),
  );
}

/** `/admin/owners/{owner}/…` */
export class OwnerParamDto {
  @ApiProperty(OWNER_DOC)
  @IsOwnerName()
  owner!: string;
}

/** `?owner=` filters on admin lists. */
export class OwnerQueryDto {
  @ApiPropertyOptional({ ...OWNER_DOC, description: 'Only the records of this owner (empty: all owners).' })
  @Transform(({ value }: { value: unknown }) => (value === '' ? undefined : value))
  @IsOptional()
  @IsOwnerName()
  owner?: string;
}
