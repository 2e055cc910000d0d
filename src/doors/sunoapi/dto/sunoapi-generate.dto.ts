import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsBoolean, IsIn, IsNumber, IsOptional, IsString, IsUUID } from 'class-validator';
import { EmptyAsAbsent, IsHttpUrl, MaxChars } from '../../../common/validation/validators.js';
import { NullAsAbsent } from '../../../common/validation/body-fields.js';

/** The family's model names (`model`), each standing for the configured music model of that name, else for any. */
export const SUNOAPI_DOOR_MODELS = ['V3_5', 'V4', 'V4_5', 'V4_5PLUS', 'V5'] as const;
export type SunoapiDoorModel = (typeof SUNOAPI_DOOR_MODELS)[number];

/** The longest lyrics (custom mode's prompt) and style any of their models takes; each model's own limits are checked apart. */
const PROMPT_MAX = 5000;
const STYLE_MAX = 1000;
const TITLE_MAX = 100;

const MODEL_WORDS = `One of ${SUNOAPI_DOOR_MODELS.join(', ')}: the configured music model of that name (GET /models), or, when none is configured under it, any configured model that makes what is asked. Limits (prompt, style, title characters): V3_5 and V4 3000, 200, 80; V4_5, V4_5PLUS and V5 5000, 1000, 100.`;

/** What every create of theirs takes: the model, the words of the song, and where to call back. */
@NullAsAbsent()
class SunoapiSongFields {
  @ApiPropertyOptional({ enum: SUNOAPI_DOOR_MODELS, description: MODEL_WORDS, example: 'V4_5' })
  @IsOptional()
  @IsIn(SUNOAPI_DOOR_MODELS, { message: `model must be one of ${SUNOAPI_DOOR_MODELS.join(', ')}` })
  model?: SunoapiDoorModel;

  @ApiPropertyOptional({ description: 'Custom mode: the lyrics (up to 3000 or 5000 characters by model). Non-custom mode: a description of the song (up to 500 characters), the lyrics written from it.', maxLength: PROMPT_MAX, example: '[Verse]\nMorning light upon the bay\n[Chorus]\nHold the tide' })
  @IsOptional()
  @EmptyAsAbsent()
  @IsString({ message: 'prompt must be a string' })
  @MaxChars(PROMPT_MAX)
  prompt?: string;

  @ApiPropertyOptional({ description: 'Custom mode: the style (up to 200 or 1000 characters by model).', maxLength: STYLE_MAX, example: 'lo-fi, piano, calm' })
  @IsOptional()
  @EmptyAsAbsent()
  @IsString({ message: 'style must be a string' })
  @MaxChars(STYLE_MAX)
  style?: string;

  @ApiPropertyOptional({ description: 'Custom mode: the title (up to 80 or 100 characters by model).', maxLength: TITLE_MAX, example: 'Morning tide' })
  @IsOptional()
  @EmptyAsAbsent()
  @IsString({ message: 'title must be a string' })
  @MaxChars(TITLE_MAX)
  title?: string;

  @ApiPropertyOptional({ description: 'Styles to avoid.', maxLength: STYLE_MAX, example: 'metal' })
  @IsOptional()
  @EmptyAsAbsent()
  @IsString({ message: 'negativeTags must be a string' })
  @MaxChars(STYLE_MAX)
  negativeTags?: string;

  @ApiPropertyOptional({
    description:
      'http(s) URL called (POST, signed as every callback of this gateway: Standard Webhooks headers) with their documented bodies: `text` when the task starts, `complete` with both takes when it succeeds, `error` when it fails. Optional here (poll record-info instead).',
    maxLength: 2048,
    example: 'https://example.com/hooks/music',
  })
  @IsOptional()
  @EmptyAsAbsent()
  @IsHttpUrl()
  callBackUrl?: string;
}

/** `POST /sunoapi/api/v1/generate`: a new song (two takes), as docs.sunoapi.org's Generate Music. */
export class SunoapiGenerateDto extends SunoapiSongFields {
  @ApiProperty({ description: 'true: custom mode (prompt is the lyrics, style and title required; prompt too unless instrumental). false: prompt alone, a description the lyrics are written from.', example: true })
  @IsBoolean({ message: 'customMode must be a boolean (true or false)' })
  customMode!: boolean;

  @ApiProperty({ description: 'No vocals.', example: false })
  @IsBoolean({ message: 'instrumental must be a boolean (true or false)' })
  instrumental!: boolean;
}

/** What a continuation takes beside the song's words: whether it sets them, and the second it continues from. */
class SunoapiContinuationFields extends SunoapiSongFields {
  @ApiProperty({
    description: 'true: the continuation takes its own prompt (lyrics), style, title and continueAt (the second of the clip it continues from). false: it continues the clip from its end with the clip\'s own words; prompt, style, title and continueAt are then refused.',
    example: true,
  })
  @IsBoolean({ message: 'defaultParamFlag must be a boolean (true or false)' })
  defaultParamFlag!: boolean;

  @ApiPropertyOptional({ description: "With defaultParamFlag true: the second of the clip to continue from, more than 0 and less than the clip's duration.", example: 5 })
  @IsOptional()
  @IsNumber({ allowNaN: false, allowInfinity: false }, { message: 'continueAt must be a number of seconds' })
  continueAt?: number;
}

/** `POST /sunoapi/api/v1/generate/extend`: a continuation of one of your clips, as docs.sunoapi.org's Extend Music. */
export class SunoapiExtendDto extends SunoapiContinuationFields {
  @ApiProperty({ format: 'uuid', description: "The clip to continue: one of your clips' ids (a take's id in sunoData, an upload's, a joined song's), complete.", example: '5b6c7d8e-9f0a-4b1c-8d2e-3f4a5b6c7d8e' })
  @IsUUID('all', { message: 'audioId must be the id (a UUID) of one of your clips' })
  audioId!: string;
}

/** `POST /sunoapi/api/v1/generate/upload-extend`: an audio file by URL, registered as an upload, then continued, as docs.sunoapi.org's Upload And Extend Audio. */
export class SunoapiUploadExtendDto extends SunoapiContinuationFields {
  @ApiProperty({ description: 'http(s) URL of the audio to continue: registered as an upload (as POST /music-a/uploads/audio-url does), fetched and checked before the answer.', maxLength: 2048, example: 'https://example.com/clips/intro.mp3' })
  @IsHttpUrl()
  uploadUrl!: string;

  @ApiPropertyOptional({ description: 'No vocals.', default: false, example: false })
  @IsOptional()
  @IsBoolean({ message: 'instrumental must be a boolean (true or false)' })
  instrumental?: boolean;
}

/** `GET /sunoapi/api/v1/generate/record-info?taskId=`. */
export class SunoapiRecordInfoQueryDto {
  @ApiProperty({ format: 'uuid', description: 'The taskId a create answered.' })
  @IsUUID('all', { message: 'taskId must be the taskId (a UUID) a create answered' })
  taskId!: string;
}

export class SunoapiTaskIdDto {
  @ApiProperty({ format: 'uuid', example: '5b6c7d8e-9f0a-4b1c-8d2e-3f4a5b6c7d8e' })
  taskId!: string;
}

/** A create's answer: `{code: 200, msg: "success", data: {taskId}}`. */
export class SunoapiCreatedDto {
  @ApiProperty({ example: 200 })
  code!: number;

  @ApiProperty({ example: 'success' })
  msg!: string;

  @ApiProperty({ type: SunoapiTaskIdDto })
  data!: SunoapiTaskIdDto;
}
