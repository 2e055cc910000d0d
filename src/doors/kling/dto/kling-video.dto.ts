import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import { ArrayMaxSize, ArrayMinSize, IsArray, IsBoolean, IsIn, IsNumber, IsObject, IsOptional, IsString, Length, Matches, Max, Min, ValidateNested } from 'class-validator';
import { SuccessEnvelopeDto } from '../../../common/swagger/success-envelope.dto.js';
import { EmptyAsAbsent, IsHttpUrl, MaxChars } from '../../../common/validation/validators.js';
import { KlingVideoVendor } from '../../../vendors/kling/kling-video.vendor.js';
import { videoCatalogRange } from '../../../vendors/video-vendors.js';
import { NullAsAbsent } from '../../../common/validation/body-fields.js';

/** What Kling's models make (its catalog): the door's enumerations. */
const KLING_RANGE = videoCatalogRange(KlingVideoVendor.protocol);

export const KLING_VIDEO_STATUSES = ['submitted', 'processing', 'succeed', 'failed'] as const;
const KLING_PROMPT_MAX = 2500;
const CAMERA_TYPES = ['simple', 'down_back', 'forward_up', 'right_turn_forward', 'left_turn_forward'] as const;
const CAMERA_AXES = ['horizontal', 'vertical', 'pan', 'tilt', 'roll', 'zoom'] as const;

export class KlingCameraConfigDto {
  @ApiPropertyOptional({ minimum: -10, maximum: 10 }) @IsOptional() @IsNumber({}, { message: 'camera_control.config.horizontal must be a number from -10 to 10' }) @Min(-10, { message: 'camera_control.config.horizontal must be a number from -10 to 10' }) @Max(10, { message: 'camera_control.config.horizontal must be a number from -10 to 10' })
  horizontal?: number;
  @ApiPropertyOptional({ minimum: -10, maximum: 10 }) @IsOptional() @IsNumber({}, { message: 'camera_control.config.vertical must be a number from -10 to 10' }) @Min(-10, { message: 'camera_control.config.vertical must be a number from -10 to 10' }) @Max(10, { message: 'camera_control.config.vertical must be a number from -10 to 10' })
  vertical?: number;
  @ApiPropertyOptional({ minimum: -10, maximum: 10 }) @IsOptional() @IsNumber({}, { message: 'camera_control.config.pan must be a number from -10 to 10' }) @Min(-10, { message: 'camera_control.config.pan must be a number from -10 to 10' }) @Max(10, { message: 'camera_control.config.pan must be a number from -10 to 10' })
  pan?: number;
  @ApiPropertyOptional({ minimum: -10, maximum: 10 }) @IsOptional() @IsNumber({}, { message: 'camera_control.config.tilt must be a number from -10 to 10' }) @Min(-10, { message: 'camera_control.config.tilt must be a number from -10 to 10' }) @Max(10, { message: 'camera_control.config.tilt must be a number from -10 to 10' })
  tilt?: number;
  @ApiPropertyOptional({ minimum: -10, maximum: 10 }) @IsOptional() @IsNumber({}, { message: 'camera_control.config.roll must be a number from -10 to 10' }) @Min(-10, { message: 'camera_control.config.roll must be a number from -10 to 10' }) @Max(10, { message: 'camera_control.config.roll must be a number from -10 to 10' })
  roll?: number;
  @ApiPropertyOptional({ minimum: -10, maximum: 10 }) @IsOptional() @IsNumber({}, { message: 'camera_control.config.zoom must be a number from -10 to 10' }) @Min(-10, { message: 'camera_control.config.zoom must be a number from -10 to 10' }) @Max(10, { message: 'camera_control.config.zoom must be a number from -10 to 10' })
  zoom?: number;
}

/** Kling's camera_control: a preset movement, or `simple` with one axis of `config` set. */
export class KlingCameraControlDto {
  @ApiProperty({ enum: CAMERA_TYPES, example: 'simple' })
  @IsIn(CAMERA_TYPES, { message: `camera_control.type must be one of ${CAMERA_TYPES.join(', ')}` })
  type!: (typeof CAMERA_TYPES)[number];

  @ApiPropertyOptional({ type: KlingCameraConfigDto, description: 'For type simple: exactly one of the six axes non-zero.' })
  @IsOptional()
  @IsObject({ message: 'camera_control.config must be an object such as {"zoom": 5}' })
  @ValidateNested()
  @Type(() => KlingCameraConfigDto)
  config?: KlingCameraConfigDto;
}

export class KlingVideoWatermarkDto {
  @ApiPropertyOptional({ description: 'Refused when true: no watermarked copy of a video is made here.', example: false })
  @IsOptional()
  @IsBoolean({ message: 'watermark_info.enabled must be a boolean (true or false)' })
  enabled?: boolean;
}

/** The fields text2video and image2video share (Kling's `model_name` design). */
@NullAsAbsent()
class KlingVideoCommonDto {
  @ApiPropertyOptional({ description: 'A model GET /models lists (kling-v1, kling-v1-6, kling-v2-1… as the channels serve them). Without it, any configured model that makes the rest.', example: 'kling-v1-6', maxLength: 64 })
  @EmptyAsAbsent()
  @IsOptional()
  @IsString({ message: 'model_name must be a string naming one of the models GET /models lists' })
  @Matches(/^[A-Za-z0-9][A-Za-z0-9._:-]{0,63}$/, { message: 'model_name must name one of the models GET /models lists (1 to 64 letters, digits and . _ : -)' })
  model_name?: string;

  @ApiPropertyOptional({ maxLength: KLING_PROMPT_MAX, description: 'What must not be in the video.', example: 'blurry, text' })
  @EmptyAsAbsent()
  @IsOptional()
  @IsString({ message: 'negative_prompt must be a string' })
  @MaxChars(KLING_PROMPT_MAX)
  negative_prompt?: string;

  @ApiPropertyOptional({ minimum: 0, maximum: 1, description: 'How closely to follow the prompt.', example: 0.5 })
  @IsOptional()
  @IsNumber({ allowNaN: false, allowInfinity: false }, { message: 'cfg_scale must be a number from 0 to 1' })
  @Min(0, { message: 'cfg_scale must be a number from 0 to 1' })
  @Max(1, { message: 'cfg_scale must be a number from 0 to 1' })
  cfg_scale?: number;

  @ApiPropertyOptional({ enum: ['std', 'pro'], description: 'std: 720p; pro: 1080p. Without it, either.', example: 'std' })
  @EmptyAsAbsent()
  @IsOptional()
  @IsIn(['std', 'pro'], { message: 'mode must be std or pro' })
  mode?: 'std' | 'pro';

  @ApiPropertyOptional({
    description: `Seconds, as a string: what the configured Kling models make (those the gateway knows make ${KLING_RANGE.durations.join(', ')}; a channel's declared model may make others; when no Kling model is configured, any a configured model makes; with model_name, what that model makes: GET /models), else 400 naming duration. Default: with model_name, the duration that model makes when none is asked (GET /models: its \`default_duration_s\`); without, the one every configured model it may go to makes alike (Kling's: 5), else "5".`,
    pattern: '^[1-9]\\d?$',
    example: '5',
  })
  @EmptyAsAbsent()
  @IsOptional()
  @IsString({ message: 'duration must be a string of whole seconds, such as "5" or "10"' })
  @Matches(/^[1-9]\d?$/, { message: 'duration must be a string of whole seconds, such as "5" or "10"' })
  duration?: string;

  @ApiPropertyOptional({ type: KlingCameraControlDto })
  @IsOptional()
  @IsObject({ message: 'camera_control must be an object such as {"type": "simple", "config": {"zoom": 5}}' })
  @ValidateNested()
  @Type(() => KlingCameraControlDto)
  camera_control?: KlingCameraControlDto;

  @ApiPropertyOptional({ enum: ['on', 'off'], description: 'Generated sound with the video (models that make it).', example: 'off' })
  @EmptyAsAbsent()
  @IsOptional()
  @IsIn(['on', 'off'], { message: 'sound must be on or off' })
  sound?: 'on' | 'off';

  @ApiPropertyOptional({ type: KlingVideoWatermarkDto })
  @IsOptional()
  @IsObject({ message: 'watermark_info must be an object such as {"enabled": false}' })
  @ValidateNested()
  @Type(() => KlingVideoWatermarkDto)
  watermark_info?: KlingVideoWatermarkDto;

  @ApiPropertyOptional({ description: 'http(s) URL notified (POST, the task record with task_status at the top, signed per Standard Webhooks) at each status change.', maxLength: 2048 })
  @EmptyAsAbsent()
  @IsOptional()
  @IsHttpUrl()
  callback_url?: string;

  @ApiPropertyOptional({ description: 'Your own id, unique among your tasks (a second one is refused with 409); the task can be read by it.', maxLength: 256 })
  @EmptyAsAbsent()
  @IsOptional()
  @IsString({ message: 'external_task_id must be a string' })
  @Length(1, 256, { message: 'external_task_id must be 1 to 256 characters long' })
  external_task_id?: string;
}

export class CreateKlingTextToVideoDto extends KlingVideoCommonDto {
  @ApiProperty({ maxLength: KLING_PROMPT_MAX, example: 'A paper boat drifting down a rainy street, cinematic' })
  @IsString({ message: 'prompt must be a string' })
  @Matches(/\S/, { message: 'prompt must not be empty or blank' })
  @MaxChars(KLING_PROMPT_MAX)
  prompt!: string;

  @ApiPropertyOptional({ enum: ['16:9', '9:16', '1:1'], default: '16:9', example: '16:9' })
  @EmptyAsAbsent()
  @IsOptional()
  @IsIn(['16:9', '9:16', '1:1'], { message: 'aspect_ratio must be 16:9, 9:16 or 1:1' })
  aspect_ratio?: '16:9' | '9:16' | '1:1';
}

export class CreateKlingImageToVideoDto extends KlingVideoCommonDto {
  @ApiPropertyOptional({ maxLength: KLING_PROMPT_MAX, example: 'The boat drifts away' })
  @EmptyAsAbsent()
  @IsOptional()
  @IsString({ message: 'prompt must be a string' })
  @MaxChars(KLING_PROMPT_MAX)
  prompt?: string;

  @ApiPropertyOptional({ description: 'The first frame: an http(s) URL, or Base64 of a JPEG or PNG with no data: prefix (at most 10 MB, 300 px a side; WebP is taken too). At most 8192 px a side and 67,108,864 pixels unless the operators set other bounds. image or image_tail is required.' })
  @EmptyAsAbsent()
  @IsOptional()
  @IsString({ message: 'image must be an http(s) URL or Base64 of a JPEG or PNG' })
  image?: string;

  @ApiPropertyOptional({ description: 'The last frame, as image.' })
  @EmptyAsAbsent()
  @IsOptional()
  @IsString({ message: 'image_tail must be an http(s) URL or Base64 of a JPEG or PNG' })
  image_tail?: string;
}

/** The most reference images multi-image2video takes (Kling: `image_list`, 1 to 4). */
export const KLING_IMAGE_LIST_MAX = 4;

export class KlingImageListItemDto {
  @ApiProperty({ description: 'A reference image: an http(s) URL, or Base64 of a JPEG or PNG with no data: prefix (at most 10 MB, 300 px a side; WebP is taken too).' })
  @IsString({ message: 'image_list[].image must be an http(s) URL or Base64 of a JPEG or PNG' })
  image!: string;
}

/** Kling's multi-image2video: a prompt and 1 to 4 reference images the video keeps to (kling-v1-6), at an asked ratio. */
export class CreateKlingMultiImageToVideoDto extends CreateKlingTextToVideoDto {
  @ApiProperty({ type: [KlingImageListItemDto], minItems: 1, maxItems: KLING_IMAGE_LIST_MAX, description: `1 to ${KLING_IMAGE_LIST_MAX} reference images, each {"image": URL or Base64}: what the video's subjects look like (not its frames).` })
  @IsArray({ message: `image_list must be a list of 1 to ${KLING_IMAGE_LIST_MAX} objects such as {"image": "https://…"}` })
  @ArrayMinSize(1, { message: `image_list must hold 1 to ${KLING_IMAGE_LIST_MAX} images` })
  @ArrayMaxSize(KLING_IMAGE_LIST_MAX, { message: `image_list must hold 1 to ${KLING_IMAGE_LIST_MAX} images` })
  @ValidateNested({ each: true })
  @Type(() => KlingImageListItemDto)
  image_list!: KlingImageListItemDto[];
}

export class KlingVideoInfoDto {
  @ApiProperty({ type: String, nullable: true, example: 'order-1234-video' })
  external_task_id!: string | null;
}

export class KlingVideoResultItemDto {
  @ApiProperty({ description: 'The video id.', format: 'uuid' })
  id!: string;

  @ApiProperty({ description: 'A signed link to the MP4 (RESULT_URL_TTL_S).' })
  url!: string;

  @ApiProperty({ description: 'Seconds, as a string.', example: '5' })
  duration!: string;
}

export class KlingVideoResultDto {
  @ApiProperty({ type: KlingVideoResultItemDto, isArray: true })
  videos!: KlingVideoResultItemDto[];
}

/** Kling's video task record, as its query answers it and its callbacks carry it. */
export class KlingVideoTaskDto {
  @ApiProperty({ format: 'uuid', description: 'The generation id (the same in every door).' })
  task_id!: string;

  @ApiProperty({ enum: KLING_VIDEO_STATUSES, example: 'submitted' })
  task_status!: (typeof KLING_VIDEO_STATUSES)[number];

  @ApiProperty({ description: 'Why it failed; empty otherwise.', example: '' })
  task_status_msg!: string;

  @ApiProperty({ type: KlingVideoInfoDto })
  task_info!: KlingVideoInfoDto;

  @ApiPropertyOptional({ type: KlingVideoResultDto, description: 'Once it succeeded.' })
  task_result?: KlingVideoResultDto;

  @ApiPropertyOptional({ description: 'Credits charged, as a string, once it succeeded.', example: '5' })
  final_unit_deduction?: string;

  @ApiProperty({ description: 'Unix milliseconds.', example: 1763683200000 })
  created_at!: number;

  @ApiProperty({ description: 'Unix milliseconds.', example: 1763683200000 })
  updated_at!: number;
}

export class KlingVideoTaskEnvelopeDto extends SuccessEnvelopeDto {
  @ApiProperty({ type: KlingVideoTaskDto })
  data!: KlingVideoTaskDto;
}

export class KlingVideoTaskListEnvelopeDto extends SuccessEnvelopeDto {
  @ApiProperty({ type: KlingVideoTaskDto, isArray: true })
  data!: KlingVideoTaskDto[];
}

export { CAMERA_AXES };
