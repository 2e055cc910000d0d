import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Transform } from 'class-transformer';
import { IsBoolean, IsIn, IsInt, IsOptional, IsString, Matches, Max, Min } from 'class-validator';
import { MaxChars } from '../../../common/validation/validators.js';
import { NullAsAbsent } from '../../../common/validation/body-fields.js';

export const IMAGE_PROMPT_MAX_CHARS = 32_000;

/** A multipart body's fields are strings (OpenAI's SDKs send `n` as "2", `stream` as "true"): numbers and booleans are read from them. */
const asNumber = () => Transform(({ value }) => (typeof value === 'string' && /^-?\d+(\.\d+)?$/.test(value.trim()) ? Number(value) : value));
const asBoolean = () => Transform(({ value }) => (value === 'true' ? true : value === 'false' ? false : value));

/** The fields generations and edits share (OpenAI's names; a JSON null is the default, as OpenAI reads it). */
@NullAsAbsent()
export class OpenAiImageFieldsDto {
  @ApiProperty({ description: 'What the image shows (or how an edit changes the input).', minLength: 1, maxLength: IMAGE_PROMPT_MAX_CHARS, example: 'A lighthouse on a cliff at dusk, watercolour' })
  @IsString({ message: 'prompt must be a string' })
  @Matches(/\S/, { message: 'prompt must not be empty or blank' })
  @MaxChars(IMAGE_PROMPT_MAX_CHARS)
  prompt!: string;

  @ApiPropertyOptional({
    description:
      "A model GET /openai/v1/models lists (its name). Without it, as OpenAI's API: one of OpenAI's configured models that makes the rest (any configured model's when none of OpenAI's is). In the sandbox every vendor's model takes what the real one takes; `sandbox` names its free-form stand-in (any size).",
    example: 'gpt-image-1',
    maxLength: 64,
  })
  @IsOptional()
  @IsString({ message: 'model must be a string' })
  @Matches(/^[A-Za-z0-9][A-Za-z0-9._:-]{0,63}$/, { message: 'model must name a configured image model (1 to 64 letters, digits and . _ : -)' })
  model?: string;

  @ApiPropertyOptional({ description: 'How many images, 1 to 10 (default 1).', minimum: 1, maximum: 10, example: 1 })
  @IsOptional()
  @asNumber()
  @IsInt({ message: 'n must be a whole number from 1 to 10' })
  @Min(1, { message: 'n must be a whole number from 1 to 10' })
  @Max(10, { message: 'n must be a whole number from 1 to 10' })
  n?: number;

  @ApiPropertyOptional({
    description: '`auto` (default: 1024x1024 for a generation, the first image\'s size for an edit), or `WxH`: 1024x1024, 1536x1024, 1024x1536 (gpt-image-1, -1-mini, -1.5), multiples of 16 (gpt-image-2), or any size the named model makes (the stored images have it exactly; a vendor that makes shapes is resized to it).',
    example: '1536x1024',
  })
  @IsOptional()
  @IsString({ message: 'size must be a string: auto or WxH, such as 1024x1024' })
  @Matches(/^(auto|[1-9]\d{1,4}x[1-9]\d{1,4})$/, { message: 'size must be auto or WxH, such as 1024x1024 or 1536x1024' })
  size?: string;

  @ApiPropertyOptional({ enum: ['auto', 'low', 'medium', 'high'], description: 'A model that takes a quality (OpenAI\'s) makes it; `auto` (default) leaves it to the vendor. standard and hd were dall-e-3\'s, which OpenAI has shut down.' })
  @IsOptional()
  @IsIn(['auto', 'low', 'medium', 'high'], { message: 'quality must be one of auto, low, medium, high' })
  quality?: string;

  @ApiPropertyOptional({ enum: ['auto', 'transparent', 'opaque'], description: '`transparent` needs output_format png or webp, and a model that makes it.' })
  @IsOptional()
  @IsIn(['auto', 'transparent', 'opaque'], { message: 'background must be one of auto, transparent, opaque' })
  background?: string;

  @ApiPropertyOptional({ enum: ['png', 'jpeg', 'webp'], description: 'The images\' format (default png): the gateway converts what the vendor made.' })
  @IsOptional()
  @IsIn(['png', 'jpeg', 'webp'], { message: 'output_format must be one of png, jpeg, webp' })
  output_format?: 'png' | 'jpeg' | 'webp';

  @ApiPropertyOptional({ description: 'jpeg and webp: 0 to 100 (default 100).', minimum: 0, maximum: 100 })
  @IsOptional()
  @asNumber()
  @IsInt({ message: 'output_compression must be a whole number from 0 to 100' })
  @Min(0, { message: 'output_compression must be a whole number from 0 to 100' })
  @Max(100, { message: 'output_compression must be a whole number from 0 to 100' })
  output_compression?: number;

  @ApiPropertyOptional({ enum: ['b64_json', 'url'], description: '`b64_json` (default, as the GPT image models answer) or `url`: a signed link to the gateway\'s stored copy, which opens without a key until it expires (RESULT_URL_TTL_S).' })
  @IsOptional()
  @IsIn(['b64_json', 'url'], { message: 'response_format must be one of b64_json, url' })
  response_format?: 'b64_json' | 'url';

  @ApiPropertyOptional({ description: 'The answer as server-sent events (image_generation.partial_image, image_generation.completed; image_edit.* for edits).' })
  @IsOptional()
  @asBoolean()
  @IsBoolean({ message: 'stream must be true or false' })
  stream?: boolean;

  @ApiPropertyOptional({ description: 'With stream: partial images per image, 0 to 3 (default 0), where the vendor makes them (the sandbox does).', minimum: 0, maximum: 3 })
  @IsOptional()
  @asNumber()
  @IsInt({ message: 'partial_images must be a whole number from 0 to 3' })
  @Min(0, { message: 'partial_images must be a whole number from 0 to 3' })
  @Max(3, { message: 'partial_images must be a whole number from 0 to 3' })
  partial_images?: number;

  @ApiPropertyOptional({ description: "The caller's end user, kept with the task.", maxLength: 256 })
  @IsOptional()
  @IsString({ message: 'user must be a string' })
  @MaxChars(256)
  user?: string;

  @ApiPropertyOptional({ description: 'Extension (not OpenAI\'s): a seed, for a named model that takes one (Gemini, FLUX, Stability, the sandbox\'s stand-in: the same seed, the same image; OpenAI\'s take none).', minimum: 0, maximum: 4294967294 })
  @IsOptional()
  @asNumber()
  @IsInt({ message: 'seed must be a whole number from 0 to 4294967294' })
  @Min(0, { message: 'seed must be a whole number from 0 to 4294967294' })
  @Max(4294967294, { message: 'seed must be a whole number from 0 to 4294967294' })
  seed?: number;

  @ApiPropertyOptional({ description: 'Extension (not OpenAI\'s): what the image must not show, for a named model that takes it (Stability, Kling; OpenAI\'s take none).', maxLength: 2500 })
  @IsOptional()
  @IsString({ message: 'negative_prompt must be a string' })
  @MaxChars(2500)
  negative_prompt?: string;
}

/** POST …/images/generations (JSON). */
export class CreateOpenAiImageDto extends OpenAiImageFieldsDto {
  @ApiPropertyOptional({ enum: ['auto', 'low'], description: "OpenAI's moderation level; `low` is passed to OpenAI's models only." })
  @IsOptional()
  @IsIn(['auto', 'low'], { message: 'moderation must be one of auto, low' })
  moderation?: string;

  @ApiPropertyOptional({ description: "Refused: dall-e-3's, which OpenAI has shut down; no configured model takes a style." })
  @IsOptional()
  style?: unknown;
}

/** POST …/images/edits (multipart/form-data): `image` (one or several files, or `image[]`), `mask`, and the same fields. */
export class EditOpenAiImageDto extends OpenAiImageFieldsDto {
  @ApiPropertyOptional({ enum: ['low'], description: "OpenAI's input fidelity: only `low` (the default) is offered." })
  @IsOptional()
  @IsIn(['low'], { message: 'input_fidelity must be low: high is not offered by this gateway' })
  input_fidelity?: string;
}

export class OpenAiImageDataDto {
  @ApiPropertyOptional({ description: 'The image, Base64 (response_format b64_json).' })
  b64_json?: string;

  @ApiPropertyOptional({ description: "A signed link to the gateway's stored copy (response_format url)." })
  url?: string;

  @ApiPropertyOptional({ description: 'The prompt the vendor made the image from, where it says.' })
  revised_prompt?: string;
}

export class OpenAiImageUsageDto {
  @ApiProperty({ example: 0 }) input_tokens!: number;
  @ApiProperty({ example: 0 }) output_tokens!: number;
  @ApiProperty({ example: 0 }) total_tokens!: number;
  @ApiProperty({ example: { text_tokens: 0, image_tokens: 0 } }) input_tokens_details!: { text_tokens: number; image_tokens: number };
}

/** OpenAI's ImagesResponse: what was made, never `auto`. */
export class OpenAiImagesResponseDto {
  @ApiProperty({ description: 'Unix seconds.', example: 1763683200 })
  created!: number;

  @ApiProperty({ type: OpenAiImageDataDto, isArray: true })
  data!: OpenAiImageDataDto[];

  @ApiProperty({ description: 'The images\' size as made, WxH.', example: '1024x1024' })
  size!: string;

  @ApiProperty({ enum: ['low', 'medium', 'high'], description: 'The asked quality; `medium` when none was asked (the vendor chose).' })
  quality!: string;

  @ApiProperty({ enum: ['transparent', 'opaque'] })
  background!: string;

  @ApiProperty({ enum: ['png', 'jpeg', 'webp'] })
  output_format!: string;

  @ApiPropertyOptional({ type: OpenAiImageUsageDto, description: 'Tokens are not counted by this gateway (its vendors price per image): zeros.' })
  usage?: OpenAiImageUsageDto;

  @ApiProperty({ description: "Extension: the gateway's task, as GET /tasks/{id} shows it.", example: '8d3c1e2f-6b7a-4c9d-9e0f-1a2b3c4d5e6f' })
  task_id!: string;
}
