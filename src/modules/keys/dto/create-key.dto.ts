import { ApiProperty } from '@nestjs/swagger';
import { IsString, Length } from 'class-validator';
import { IsOwnerName, OWNER_MAX_CHARS, OWNER_PATTERN } from '../../../common/validation/owner.js';
import { RefusesUnknownFields } from '../../../common/validation/body-fields.js';

@RefusesUnknownFields()
export class CreateKeyDto {
  @ApiProperty({ description: 'Owner of the key: a team or service. All keys of one owner see the same tasks.', example: 'team-video', minLength: 1, maxLength: OWNER_MAX_CHARS, pattern: OWNER_PATTERN.source })
  @IsOwnerName()
  owner!: string;

  @ApiProperty({ description: 'A label for the key, such as where it is used.', example: 'render-pipeline', minLength: 1, maxLength: 128 })
  @IsString({ message: 'name must be a string' })
  @Length(1, 128, { message: 'name must be 1 to 128 characters long' })
  name!: string;
}
