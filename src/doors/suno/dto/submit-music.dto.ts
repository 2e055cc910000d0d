import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsBoolean, IsIn, IsNumber, IsOptional, IsString, IsUUID } from 'class-validator';
import { IsHttpUrl, MaxChars } from '../../../common/validation/validators.js';
import { DEFAULT_MUSIC_MODEL, DESCRIPTION_PROMPT_MAX, MUSIC_MODEL_NAMES, modelLimitsText, PROMPT_MAX, TAGS_MAX, TITLE_MAX } from '../../../modules/music/music-models.js';

export const CONTINUE_TASKS = ['extend', 'upload_extend'] as const;

/** POST /music-a/submit/music: the Suno-API aggregator body. */
export class SubmitMusicDto {
  @ApiPropertyOptional({ description: `Lyrics (custom mode) or a description of the song. Characters per model: ${modelLimitsText()}.`, maxLength: PROMPT_MAX, example: '[Verse]\nMorning light upon the bay\n[Chorus]\nHold the tide' })
  @IsOptional()
  @IsString({ message: 'prompt must be a string' })
  @MaxChars(PROMPT_MAX)
  prompt?: string;

  @ApiPropertyOptional({ description: `A description to write the song from (inspiration mode), at most ${DESCRIPTION_PROMPT_MAX} characters.`, maxLength: DESCRIPTION_PROMPT_MAX, example: 'a calm lo-fi song about the sea' })
  @IsOptional()
  @IsString({ message: 'gpt_description_prompt must be a string' })
  @MaxChars(DESCRIPTION_PROMPT_MAX)
  gpt_description_prompt?: string;

  @ApiPropertyOptional({ description: 'Style of the song, comma-separated.', maxLength: TAGS_MAX, example: 'lo-fi, piano, calm' })
  @IsOptional()
  @IsString({ message: 'tags must be a string' })
  @MaxChars(TAGS_MAX)
  tags?: string;

  @ApiPropertyOptional({ description: 'Styles to avoid.', maxLength: TAGS_MAX, example: 'metal' })
  @IsOptional()
  @IsString({ message: 'negative_tags must be a string' })
  @MaxChars(TAGS_MAX)
  negative_tags?: string;

  @ApiPropertyOptional({ description: 'Title of the song.', maxLength: TITLE_MAX, example: 'Morning tide' })
  @IsOptional()
  @IsString({ message: 'title must be a string' })
  @MaxChars(TITLE_MAX)
  title?: string;

  @ApiPropertyOptional({ enum: MUSIC_MODEL_NAMES, default: DEFAULT_MUSIC_MODEL, description: `The model. ${modelLimitsText()}.`, example: DEFAULT_MUSIC_MODEL })
  @IsOptional()
  @IsIn(MUSIC_MODEL_NAMES, { message: `mv must be one of ${MUSIC_MODEL_NAMES.join(', ')}` })
  mv?: string;

  @ApiPropertyOptional({ description: 'No vocals.', default: false, example: false })
  @IsOptional()
  @IsBoolean({ message: 'make_instrumental must be a boolean (true or false)' })
  make_instrumental?: boolean;

  @ApiPropertyOptional({ format: 'uuid', description: 'Continue this clip (one of yours, complete): a generated clip, a joined song or an upload (its upload id). The new clips hold only the new part; join the chain with /music-a/submit/concat.' })
  @IsOptional()
  @IsUUID('all', { message: 'continue_clip_id must be the id (a UUID) of one of your clips' })
  continue_clip_id?: string;

  @ApiPropertyOptional({ description: "Second of continue_clip_id to continue from: more than 0 and less than the clip's duration. Without it, from the clip's end.", example: 5 })
  @IsOptional()
  @IsNumber({ allowNaN: false, allowInfinity: false }, { message: 'continue_at must be a number of seconds' })
  continue_at?: number;

  @ApiPropertyOptional({ enum: CONTINUE_TASKS, description: 'With continue_clip_id: "extend" continues a generated clip, "upload_extend" an uploaded one; checked against the clip when given.' })
  @IsOptional()
  @IsIn(CONTINUE_TASKS, { message: 'task must be "extend" or "upload_extend"' })
  task?: (typeof CONTINUE_TASKS)[number];

  @ApiPropertyOptional({ description: 'http(s) URL notified (POST, the task record as GET /music-a/fetch/{task_id} gives it, signed) on each status change.', maxLength: 2048 })
  @IsOptional()
  @IsHttpUrl()
  callback_url?: string;

  @ApiPropertyOptional({ description: 'Alias of callback_url (the name some aggregators use); callback_url wins when both are given.', maxLength: 2048 })
  @IsOptional()
  @IsHttpUrl()
  notify_hook?: string;
}
