import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Transform, Type } from 'class-transformer';
import { IsBoolean, IsIn, IsInt, IsNumber, IsObject, IsOptional, IsString, Length, Matches, Max, Min, ValidateNested } from 'class-validator';
import { EmptyAsAbsent, IsHttpUrl, MaxChars } from '../../../common/validation/validators.js';
import { IsExpandImage, toImageField } from './expand-validators.js';
import type { ImageInput } from '../kling-image-input.js';
import { NullAsAbsent } from '../../../common/validation/body-fields.js';

export const KLING_IMAGE_RATIOS = ['16:9', '9:16', '1:1', '4:3', '3:4', '3:2', '2:3', '21:9'] as const;

export class KlingImageWatermarkDto {
  @ApiPropertyOptional({ description: 'Refused when true: no configured model makes a watermarked copy of an image.', default: false })
  @EmptyAsAbsent()
  @IsOptional()
  @IsBoolean({ message: 'watermark_info.enabled must be a boolean (true or false)' })
  enabled?: boolean;
}

/** POST /video-a/v1/images/generations, as Kling's image API takes it. An empty string in an optional field means it is absent, as in Kling's documented bodies. */
@NullAsAbsent()
export class CreateKlingImageDto {
  @ApiPropertyOptional({ description: 'A configured image model (Kling\'s kling-v1 … kling-v2-1, or another vendor\'s by its name). Without it, any configured Kling model that makes the rest (any configured model when none is Kling\'s).', example: 'kling-v2-1', maxLength: 64 })
  @EmptyAsAbsent()
  @IsOptional()
  @IsString({ message: 'model_name must be a string' })
  @Matches(/^[A-Za-z0-9][A-Za-z0-9._:-]{0,63}$/, { message: 'model_name must name a configured image model (1 to 64 letters, digits and . _ : -)' })
  model_name?: string;

  @ApiProperty({ description: 'What the image shows, at most 2500 characters.', maxLength: 2500, example: 'A Pixar-style puppy in a garden' })
  @IsString({ message: 'prompt must be a string' })
  @Matches(/\S/, { message: 'prompt must not be empty or blank' })
  @MaxChars(2500)
  prompt!: string;

  @ApiPropertyOptional({ description: 'What the image must not show, at most 2500 characters (Kling takes none with an image).', maxLength: 2500 })
  @EmptyAsAbsent()
  @IsOptional()
  @IsString({ message: 'negative_prompt must be a string' })
  @MaxChars(2500)
  negative_prompt?: string;

  @ApiPropertyOptional({
    type: String,
    description: 'A reference image: Base64 of the file with no `data:` prefix, or an http(s) URL (fetched when the task runs). JPEG or PNG, at most 10 MB, at least 300x300 px, aspect ratio from 1:2.5 to 2.5:1.',
  })
  @Transform(({ value, obj }) => (value === undefined || value === null || value === '' ? undefined : toImageField({ value, obj })))
  @IsOptional()
  @IsExpandImage()
  image?: ImageInput;

  @ApiPropertyOptional({ enum: ['subject', 'face'], description: "The image's role (Kling's kling-v1-5): its subject, or its face." })
  @EmptyAsAbsent()
  @IsOptional()
  @IsIn(['subject', 'face'], { message: 'image_reference must be one of subject, face' })
  image_reference?: 'subject' | 'face';

  @ApiPropertyOptional({ description: 'How closely the image is followed, 0 to 1.', minimum: 0, maximum: 1 })
  @IsOptional()
  @IsNumber({ allowNaN: false, allowInfinity: false }, { message: 'image_fidelity must be a number from 0 to 1' })
  @Min(0, { message: 'image_fidelity must be a number from 0 to 1' })
  @Max(1, { message: 'image_fidelity must be a number from 0 to 1' })
  image_fidelity?: number;

  @ApiPropertyOptional({ description: "How closely the subject is followed (image_reference subject), 0 to 1.", minimum: 0, maximum: 1 })
  @IsOptional()
  @IsNumber({ allowNaN: false, allowInfinity: false }, { message: 'human_fidelity must be a number from 0 to 1' })
  @Min(0, { message: 'human_fidelity must be a number from 0 to 1' })
  @Max(1, { message: 'human_fidelity must be a number from 0 to 1' })
  human_fidelity?: number;

  @ApiPropertyOptional({ enum: ['1k', '2k'], description: 'The images\' class (their longer side about 1K or 2K pixels); the vendor\'s default without it.' })
  @EmptyAsAbsent()
  @IsOptional()
  @IsIn(['1k', '2k'], { message: 'resolution must be one of 1k, 2k' })
  resolution?: string;

  @ApiPropertyOptional({ description: 'How many images, 1 to 9 (default 1).', minimum: 1, maximum: 9, default: 1 })
  @IsOptional()
  @IsInt({ message: 'n must be a whole number from 1 to 9' })
  @Min(1, { message: 'n must be a whole number from 1 to 9' })
  @Max(9, { message: 'n must be a whole number from 1 to 9' })
  n?: number;

  @ApiPropertyOptional({ enum: KLING_IMAGE_RATIOS, description: "The images' shape; without it, the vendor's default (Kling's 16:9; the sandbox's 1:1)." })
  @EmptyAsAbsent()
  @IsOptional()
  @IsIn(KLING_IMAGE_RATIOS, { message: `aspect_ratio must be one of ${KLING_IMAGE_RATIOS.join(', ')}` })
  aspect_ratio?: string;

  @ApiPropertyOptional({ type: KlingImageWatermarkDto })
  @IsOptional()
  @IsObject({ message: 'watermark_info must be an object such as {"enabled": false}' })
  @ValidateNested()
  @Type(() => KlingImageWatermarkDto)
  watermark_info?: KlingImageWatermarkDto;

  @ApiPropertyOptional({ description: 'Where the task\'s record is POSTed at each change of state (processing, succeed | failed).', example: 'https://example.com/hooks/kling' })
  @EmptyAsAbsent()
  @IsOptional()
  @IsHttpUrl()
  callback_url?: string;

  @ApiPropertyOptional({ description: 'Your own id for the task, unique among your tasks (a second task with it is refused with 409); the task can be queried by it.', maxLength: 256 })
  @EmptyAsAbsent()
  @IsOptional()
  @IsString({ message: 'external_task_id must be a string' })
  @Length(1, 256, { message: 'external_task_id must be 1 to 256 characters long' })
  external_task_id?: string;
}
