import { ApiProperty } from '@nestjs/swagger';
import { IsString, Length, Matches } from 'class-validator';

export class CreateKeyDto {
  @ApiProperty({ description: 'Owner of the key: a team or service. All keys of one owner see the same tasks.', example: 'team-video', minLength: 1, maxLength: 128, pattern: '^[A-Za-z0-9._:@-]+$' })
  @IsString({ message: 'owner must be a string' })
  @Length(1, 128, { message: 'owner must be 1 to 128 characters long' })
  @Matches(/^[A-Za-z0-9._:@-]+$/, { message: 'owner may contain only letters, digits and . _ : @ -' })
  owner!: string;

  @ApiProperty({ description: 'A label for the key, such as where it is used.', example: 'render-pipeline', minLength: 1, maxLength: 128 })
  @IsString({ message: 'name must be a string' })
  @Length(1, 128, { message: 'name must be 1 to 128 characters long' })
  name!: string;
}
