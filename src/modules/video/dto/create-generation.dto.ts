import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import { IsBoolean, IsIn, IsObject, IsOptional, IsString, IsUUID, Matches, ValidateIf, ValidateNested } from 'class-validator';
import { IsHttpUrl, MaxChars } from '../../../common/validation/validators.js';

export const KEYFRAME_TYPES = ['image', 'generation'] as const;
export type KeyframeType = (typeof KEYFRAME_TYPES)[number];
export const PROMPT_MAX_CHARS = 5000;
export const DEFAULT_ASPECT_RATIO = '16:9';

export class KeyframeDto {
  @ApiProperty({ enum: KEYFRAME_TYPES, description: '"image": an image by URL; "generation": one of your earlier generations (its last frame).', example: 'image' })
  @IsIn(KEYFRAME_TYPES, { message: 'type must be "image" or "generation"' })
  type!: KeyframeType;

  @ApiPropertyOptional({ description: 'For type "image": the http(s) URL of the image.', example: 'https://example.com/first-frame.jpg' })
  @ValidateIf((o: KeyframeDto) => o.type === 'image')
  @IsHttpUrl()
  url?: string;

  @ApiPropertyOptional({ format: 'uuid', description: 'For type "generation": the id of one of your generations.' })
  @ValidateIf((o: KeyframeDto) => o.type === 'generation')
  @IsUUID('all', { message: 'id must be the id (a UUID) of one of your generations' })
  id?: string;
}

export class KeyframesDto {
  @ApiPropertyOptional({ type: KeyframeDto, description: 'First keyframe.' })
  @IsOptional()
  @IsObject({ message: 'frame0 must be an object such as {"type": "image", "url": "https://…"}' })
  @ValidateNested({ message: 'frame0 must be an object such as {"type": "image", "url": "https://…"}' })
  @Type(() => KeyframeDto)
  frame0?: KeyframeDto;

  @ApiPropertyOptional({ type: KeyframeDto, description: 'Second (end) keyframe.' })
  @IsOptional()
  @IsObject({ message: 'frame1 must be an object such as {"type": "image", "url": "https://…"}' })
  @ValidateNested({ message: 'frame1 must be an object such as {"type": "image", "url": "https://…"}' })
  @Type(() => KeyframeDto)
  frame1?: KeyframeDto;
}

export class CreateGenerationDto {
  @ApiProperty({ description: 'What the video shows.', minLength: 1, maxLength: PROMPT_MAX_CHARS, example: 'A paper boat drifting down a rainy street, cinematic' })
  @IsString({ message: 'prompt must be a string' })
  @Matches(/\S/, { message: 'prompt must not be empty or blank' })
  @MaxChars(PROMPT_MAX_CHARS)
  prompt!: string;

  @ApiPropertyOptional({ description: 'Make the last frame match the first.', default: false, example: false })
  @IsOptional()
  @IsBoolean({ message: 'loop must be a boolean (true or false)' })
  loop?: boolean;

  @ApiPropertyOptional({ description: 'Frame shape, `<w>:<h>` with positive integers (up to 4 digits each).', default: DEFAULT_ASPECT_RATIO, pattern: '^[1-9][0-9]{0,3}:[1-9][0-9]{0,3}$', example: '16:9' })
  @IsOptional()
  @IsString({ message: 'aspect_ratio must be a string of the form <w>:<h>, such as "16:9"' })
  @Matches(/^[1-9]\d{0,3}:[1-9]\d{0,3}$/, { message: 'aspect_ratio must have the form <w>:<h> with positive integers, such as "16:9"' })
  aspect_ratio?: string;

  @ApiPropertyOptional({ type: KeyframesDto, description: 'Optional keyframes: frame0 (start) and frame1 (end).' })
  @IsOptional()
  @IsObject({ message: 'keyframes must be an object with frame0 and/or frame1' })
  @ValidateNested({ message: 'keyframes must be an object with frame0 and/or frame1' })
  @Type(() => KeyframesDto)
  keyframes?: KeyframesDto;

  @ApiPropertyOptional({ description: 'http(s) URL notified when the generation changes state.', example: 'https://example.com/hooks/video' })
  @IsOptional()
  @IsHttpUrl()
  callback_url?: string;
}
