import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Transform, Type } from 'class-transformer';
import { IsBoolean, IsObject, IsOptional, IsString, Length, ValidateNested } from 'class-validator';
import { EmptyAsAbsent, IsHttpUrl, MaxChars } from '../../../common/validation/validators.js';
import type { ImageInput } from '../kling-image-input.js';
import { EXAMPLE_IMAGE_BASE64 } from './example-image.js';
import { ExpandedAreaAtMost3, IsExpandImage, IsExpansionRatio, IsImageCount, toImageField } from './expand-validators.js';
import { NullAsAbsent } from '../../../common/validation/body-fields.js';

const RATIO_DOC = { type: Number, minimum: 0, maximum: 2 } as const;

/** Kling's watermark_info. */
export class WatermarkInfoDto {
  @ApiPropertyOptional({ description: 'Also make a watermarked copy of each result (watermark_url beside url).', default: false, example: true })
  @EmptyAsAbsent()
  @IsOptional()
  @IsBoolean({ message: 'watermark_info.enabled must be a boolean (true or false)' })
  enabled?: boolean;
}

@NullAsAbsent()
export class CreateExpandTaskDto {
  @ApiProperty({
    type: String,
    description:
      'The reference image: Base64 of the file with no `data:` prefix, or an http(s) URL (fetched when the task runs). ' +
      'JPEG or PNG (read from the bytes), at most 10 MB, at least 300x300 px, aspect ratio from 1:2.5 to 2.5:1. ' +
      'This gateway also takes at most 8192 px a side and 67,108,864 pixels, and makes expanded images of at most 16,777,216 pixels, unless its operators set other bounds.',
    example: EXAMPLE_IMAGE_BASE64,
  })
  @Transform(toImageField)
  @IsExpandImage()
  image!: ImageInput;

  @ApiProperty({ ...RATIO_DOC, description: 'Added above, as a multiple of the original height.', example: 0.25 })
  @IsExpansionRatio()
  @ExpandedAreaAtMost3()
  up_expansion_ratio!: number;

  @ApiPropertyOptional({ ...RATIO_DOC, description: 'Added below, as a multiple of the original height. Required, under this name or as `down_expansion_ratio` (Kling\'s name for it).', example: 0.25 })
  @IsExpansionRatio({ alias: 'down_expansion_ratio' })
  bottom_expansion_ratio?: number;

  @ApiPropertyOptional({ ...RATIO_DOC, description: 'Another name for `bottom_expansion_ratio` (used by the spec\'s sample body). Giving both with different values is refused.' })
  @IsExpansionRatio({ optional: true })
  down_expansion_ratio?: number;

  @ApiProperty({ ...RATIO_DOC, description: 'Added on the left, as a multiple of the original width.', example: 0.25 })
  @IsExpansionRatio()
  left_expansion_ratio!: number;

  @ApiProperty({ ...RATIO_DOC, description: 'Added on the right, as a multiple of the original width. The new area, (1 + up + bottom) x (1 + left + right), may be at most 3 times the original.', example: 0.25 })
  @IsExpansionRatio()
  right_expansion_ratio!: number;

  @ApiPropertyOptional({ description: 'What to paint in the new area. An empty string means none.', maxLength: 2500, example: 'a wide sunny meadow' })
  @EmptyAsAbsent()
  @IsOptional()
  @IsString({ message: 'prompt must be a string' })
  @MaxChars(2500)
  prompt?: string;

  @ApiPropertyOptional({
    oneOf: [{ type: 'string', enum: ['1', '2', '3', '4', '5', '6', '7', '8', '9'] }, { type: 'integer', minimum: 1, maximum: 9 }],
    description: 'Number of images, 1 to 9. Typed string in the spec ("1".."9"); a JSON number is accepted too.',
    default: '1',
    example: '2',
  })
  @EmptyAsAbsent()
  @IsOptional()
  @IsImageCount()
  n?: string | number;

  @ApiPropertyOptional({
    description: 'http(s) URL notified (POST, the task record, signed per Standard Webhooks) each time the task status changes. Needs a receiver you run; an empty string means none.',
    maxLength: 2048,
  })
  @EmptyAsAbsent()
  @IsOptional()
  @IsHttpUrl()
  callback_url?: string;

  @ApiPropertyOptional({
    description: 'Your own id for the task, unique among your tasks (a second task with it is refused with 409); the task can be queried by it. At most 256 characters; an empty string means none.',
    maxLength: 256,
  })
  @EmptyAsAbsent()
  @IsOptional()
  @IsString({ message: 'external_task_id must be a string' })
  @Length(1, 256, { message: 'external_task_id must be 1 to 256 characters long' })
  external_task_id?: string;

  @ApiPropertyOptional({ type: WatermarkInfoDto, description: 'Kling\'s watermark_info: `{"enabled": true}` also makes a watermarked copy of each result.' })
  @IsOptional()
  @IsObject({ message: 'watermark_info must be an object such as {"enabled": true}' })
  @ValidateNested({ message: 'watermark_info must be an object such as {"enabled": true}' })
  @Type(() => WatermarkInfoDto)
  watermark_info?: WatermarkInfoDto;
}
