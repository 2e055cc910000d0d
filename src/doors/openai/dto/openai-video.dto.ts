import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import { IsIn, IsInt, IsObject, IsOptional, IsString, Matches, Max, Min, ValidateNested } from 'class-validator';
import { IsHttpUrl, MaxChars, QueryInteger } from '../../../common/validation/validators.js';
import { PROMPT_MAX_CHARS } from '../../../modules/video/video-task.js';
import { RESOLUTION_SIDES, sizeOf } from '../../../vendors/contracts/resolution.js';
import { FRAME_FITS, type FrameFit } from '../../../vendors/contracts/video-request.js';
import { videoCatalogRange } from '../../../vendors/video-vendors.js';
import { NullAsAbsent } from '../../../common/validation/body-fields.js';

/**
 * What the catalogs' models make, sizes by their shorter side: the door's examples, not an enumeration (a
 * channel's declared model may make others; the configured models' check refuses what none makes, naming the field).
 */
const RANGE = videoCatalogRange();
const SIZES = [...new Set(RANGE.shapes.map((shape) => shape.split('@') as [string, string]).sort(([, a], [, b]) => RESOLUTION_SIDES[a] - RESOLUTION_SIDES[b]).map(([ratio, resolution]) => sizeOf(ratio, resolution)))];

/** What the OpenAI door's input_reference is to the video (input_reference_role, a gateway extension). */
export const INPUT_REFERENCE_ROLES = ['first_frame', 'reference_image'] as const;
export type InputReferenceRole = (typeof INPUT_REFERENCE_ROLES)[number];

/** The reference image by URL (`input_reference[image_url]` in a multipart body), or a file id (not kept here). */
export class OpenAiInputReferenceDto {
  @ApiPropertyOptional({ description: 'An http(s) URL of the image that starts the video.', example: 'https://example.com/first-frame.png', maxLength: 2048 })
  @IsOptional()
  @IsHttpUrl({ message: 'input_reference.image_url must be an http or https URL' })
  image_url?: string;

  @ApiPropertyOptional({ description: 'Refused: this gateway keeps no files. Upload the image as `input_reference`, or give `image_url`.' })
  @IsOptional()
  @IsString({ message: 'input_reference.file_id must be a string' })
  file_id?: string;
}

/**
 * POST …/videos, as OpenAI's SDKs send it (always multipart/form-data; JSON is taken too). `input_reference`
 * may also be a file part (an image: PNG, JPEG or WebP).
 */
@NullAsAbsent()
export class CreateOpenAiVideoDto {
  @ApiProperty({ description: 'What the video shows.', minLength: 1, maxLength: PROMPT_MAX_CHARS, example: 'A calico cat playing a piano on stage' })
  @IsString({ message: 'prompt must be a string' })
  @Matches(/\S/, { message: 'prompt must not be empty or blank' })
  @MaxChars(PROMPT_MAX_CHARS)
  prompt!: string;

  @ApiPropertyOptional({ description: 'A model GET /models lists (its name). Without it, any configured model that makes the rest.', example: 'ray-2', maxLength: 64 })
  @IsOptional()
  @IsString({ message: 'model must be a string naming one of the models GET /models lists' })
  @Matches(/^[A-Za-z0-9][A-Za-z0-9._:-]{0,63}$/, { message: 'model must name one of the models GET /models lists (1 to 64 letters, digits and . _ : -)' })
  model?: string;

  @ApiPropertyOptional({
    description: `Length in whole seconds, as a string: one a configured model makes (GET /models: their \`durations_s\`; the models the gateway knows make ${RANGE.durations.join(', ')}, and a channel's declared model may make others), else 400 naming seconds. Default: with \`model\`, the duration that model makes when none is asked (GET /models: its \`default_duration_s\`, such as Veo's 8); without, the one every configured model that could make it makes alike (only Veo channels: 8; only MiniMax's: 6), else "5". The sandbox's model \`sandbox\`, named, takes 1 to 15.`,
    pattern: '^[1-9]\\d?$',
    example: '5',
  })
  @IsOptional()
  @IsString({ message: 'seconds must be a string of whole seconds, such as "5"' })
  @Matches(/^[1-9]\d?$/, { message: 'seconds must be a string of whole seconds from 1 to 99, such as "5"' })
  seconds?: string;

  @ApiPropertyOptional({
    description: `Frame size \`WxH\`: one a configured model makes (GET /models: a model's \`aspect_ratios\` at its \`resolutions\`, or its \`sizes\`; the shorter side is the resolution: 720p is 1280x720 or 720x1280, 768p 1366x768, 480p 854x480), else 400 naming size. The models the gateway knows make ${SIZES.join(', ')}; a channel's declared model may make others. Default 1280x720. The sandbox's model \`sandbox\`, named, takes any whole-number ratio at 540, 720, 1080 or 2160 px.`,
    pattern: '^[1-9]\\d{1,3}x[1-9]\\d{1,3}$',
    example: '1280x720',
  })
  @IsOptional()
  @IsString({ message: 'size must be a string WxH, such as "1280x720"' })
  @Matches(/^[1-9]\d{1,3}x[1-9]\d{1,3}$/, { message: 'size must be WxH in pixels, each side 10 to 9999, such as "1280x720" or "720x1280"' })
  size?: string;

  @ApiPropertyOptional({
    type: OpenAiInputReferenceDto,
    description: 'The image the video starts from: a file part named input_reference (multipart; PNG, JPEG or WebP, at most 10 MB, 8192 px a side and 67,108,864 pixels unless the operators set other bounds), or { image_url }.',
  })
  @IsOptional()
  @IsObject({ message: 'input_reference must be an image file (multipart) or an object with image_url' })
  @ValidateNested()
  @Type(() => OpenAiInputReferenceDto)
  input_reference?: OpenAiInputReferenceDto;

  @ApiPropertyOptional({
    enum: INPUT_REFERENCE_ROLES,
    default: 'first_frame',
    description:
      "A gateway extension (not OpenAI's): what input_reference is to the video. `first_frame` (the default, as OpenAI's own service used it): the video starts from it. `reference_image`: an image the video keeps to (a subject, a product, a style) without starting from it; served only by models that take reference images (GET /models: `reference_images` above 0), else 400 naming input_reference.",
    example: 'first_frame',
  })
  @IsOptional()
  @IsIn(INPUT_REFERENCE_ROLES, { message: 'input_reference_role must be first_frame or reference_image' })
  input_reference_role?: InputReferenceRole;

  @ApiPropertyOptional({
    enum: FRAME_FITS,
    description:
      "A gateway extension: how a first frame of another shape than size is fitted to it when the model serving the request takes its video's shape from its first frame (GET /models `shape_from_first_frame`): `crop` its centre, `pad` it on a blurred fill of itself, or `none` (such models then do not serve it). Default: the channel's frame_fit, else crop.",
    example: 'crop',
  })
  @IsOptional()
  @IsIn(FRAME_FITS, { message: 'fit must be crop, pad or none' })
  fit?: FrameFit;
}

/** What went wrong with a failed video. */
export class OpenAiVideoErrorDto {
  @ApiProperty({ example: 'upstream_failed' })
  code!: string;

  @ApiProperty({ example: 'the upstream failed the generation: …' })
  message!: string;
}

/** The video object of OpenAI's API. */
export class OpenAiVideoDto {
  @ApiProperty({ description: 'The generation id (the same in every door).', format: 'uuid' })
  id!: string;

  @ApiProperty({ enum: ['video'] })
  object!: 'video';

  @ApiProperty({ description: 'The model asked for; when none was, "auto" while the video is made, then the model that made it (a channel\'s name for it, "sandbox" in the sandbox).', example: 'ray-2' })
  model!: string;

  @ApiProperty({ enum: ['queued', 'in_progress', 'completed', 'failed'] })
  status!: 'queued' | 'in_progress' | 'completed' | 'failed';

  @ApiProperty({ description: 'Percent done: 0 queued, 50 in progress, 100 completed (the upstreams report no finer figure).', minimum: 0, maximum: 100, example: 0 })
  progress!: number;

  @ApiProperty({ description: 'Unix seconds.', example: 1764086400 })
  created_at!: number;

  @ApiProperty({ type: Number, nullable: true, description: 'Unix seconds; null until it completed.', example: null })
  completed_at!: number | null;

  @ApiProperty({ type: Number, nullable: true, description: 'When its video is deleted (RESULT_RETENTION_DAYS after it finished), Unix seconds.', example: null })
  expires_at!: number | null;

  @ApiProperty({ example: 'A calico cat playing a piano on stage' })
  prompt!: string;

  @ApiProperty({ type: String, nullable: true, example: null })
  remixed_from_video_id!: string | null;

  @ApiProperty({ description: 'Length in seconds, as a string.', example: '5' })
  seconds!: string;

  @ApiProperty({ description: 'Frame size WxH.', example: '1280x720' })
  size!: string;

  @ApiProperty({ type: OpenAiVideoErrorDto, nullable: true })
  error!: OpenAiVideoErrorDto | null;
}

export class OpenAiVideoListDto {
  @ApiProperty({ enum: ['list'] })
  object!: 'list';

  @ApiProperty({ type: OpenAiVideoDto, isArray: true })
  data!: OpenAiVideoDto[];

  @ApiProperty({ type: String, nullable: true })
  first_id!: string | null;

  @ApiProperty({ type: String, nullable: true })
  last_id!: string | null;

  @ApiProperty()
  has_more!: boolean;
}

export class OpenAiVideoDeletedDto {
  @ApiProperty({ format: 'uuid' })
  id!: string;

  @ApiProperty({ enum: ['video.deleted'] })
  object!: 'video.deleted';

  @ApiProperty({ enum: [true] })
  deleted!: true;
}

/** GET …/videos: a cursor page, newest first by default. */
export class ListOpenAiVideosQueryDto {
  @ApiPropertyOptional({ description: 'The id of the last video of the previous page.', format: 'uuid' })
  @IsOptional()
  @IsString({ message: 'after must be a video id' })
  after?: string;

  @ApiPropertyOptional({ minimum: 1, maximum: 100, default: 20 })
  @IsOptional()
  @QueryInteger()
  @IsInt({ message: 'limit must be an integer from 1 to 100' })
  @Min(1, { message: 'limit must be an integer from 1 to 100' })
  @Max(100, { message: 'limit must be an integer from 1 to 100' })
  limit: number = 20;

  @ApiPropertyOptional({ enum: ['asc', 'desc'], default: 'desc' })
  @IsOptional()
  @IsIn(['asc', 'desc'], { message: 'order must be asc or desc' })
  order: 'asc' | 'desc' = 'desc';
}

/** GET …/videos/{id}/content. */
export class OpenAiVideoContentQueryDto {
  @ApiPropertyOptional({ enum: ['video', 'thumbnail'], default: 'video', description: 'spritesheet is not offered.' })
  @IsOptional()
  @IsIn(['video', 'thumbnail'], { message: 'variant must be video or thumbnail (spritesheet is not offered)' })
  variant: 'video' | 'thumbnail' = 'video';
}
