import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Transform } from 'class-transformer';
import { IsOptional, IsString, Length } from 'class-validator';
import { IsHttpUrl, MaxChars } from '../../../common/validation/validators.js';
import type { ImageInput } from '../image-input.js';
import { EXAMPLE_IMAGE_BASE64 } from './example-image.js';
import { ExpandedAreaAtMost3, IsExpandImage, IsExpansionRatio, IsImageCount, toImageField } from './expand-validators.js';

const RATIO_DOC = { type: Number, minimum: 0, maximum: 2 } as const;

export class CreateExpandTaskDto {
  @ApiProperty({
    type: String,
    description:
      'The reference image: Base64 of the file with no `data:` prefix, or an http(s) URL (fetched when the task runs). ' +
      'JPEG or PNG (read from the bytes), at most 10 MB, at least 300x300 px, aspect ratio from 1:2.5 to 2.5:1.',
    example: EXAMPLE_IMAGE_BASE64,
  })
  @Transform(toImageField)
  @IsExpandImage()
  image!: ImageInput;

  @ApiProperty({ ...RATIO_DOC, description: 'Added above, as a multiple of the original height.', example: 0.25 })
  @IsExpansionRatio()
  @ExpandedAreaAtMost3()
  up_expansion_ratio!: number;

  @ApiProperty({ ...RATIO_DOC, description: 'Added below, as a multiple of the original height. `down_expansion_ratio` is accepted as another name.', example: 0.25 })
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

  @ApiPropertyOptional({ description: 'What to paint in the new area.', maxLength: 2500, example: 'a wide sunny meadow' })
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
  @IsOptional()
  @IsImageCount()
  n?: string | number;

  @ApiPropertyOptional({ description: 'http(s) URL notified when the task status changes.', example: 'https://example.com/hooks/expand', maxLength: 2048 })
  @IsOptional()
  @IsHttpUrl()
  callback_url?: string;

  @ApiPropertyOptional({ description: 'Your own id for the task, unique among your tasks; the task can be queried by it.', minLength: 1, maxLength: 256, example: 'order-1234-expand' })
  @IsOptional()
  @IsString({ message: 'external_task_id must be a string' })
  @Length(1, 256, { message: 'external_task_id must be 1 to 256 characters long' })
  external_task_id?: string;
}
