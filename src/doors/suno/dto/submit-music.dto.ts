import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsBoolean, IsIn, IsInt, IsNumber, IsOptional, IsString, IsUUID, Matches, Max, Min } from 'class-validator';
import { IsHttpUrl, MaxChars } from '../../../common/validation/validators.js';
import { DEFAULT_MUSIC_MODEL, DESCRIPTION_PROMPT_MAX, MUSIC_MODEL_NAMES, modelLimitsText, PROMPT_MAX, TAGS_MAX, TITLE_MAX } from '../../../modules/music/music-models.js';
import { NullAsAbsent } from '../../../common/validation/body-fields.js';

export const CONTINUE_TASKS = ['extend', 'upload_extend'] as const;

/** POST /music-a/submit/music: the Suno-API aggregator body. */
@NullAsAbsent()
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

  @ApiPropertyOptional({
    description: `The model: one of those GET /models lists for music (Suno's ${MUSIC_MODEL_NAMES.join(', ')} where an aggregator serves them; other vendors' under their names). Without it, any configured model that makes what is asked (Suno's ${DEFAULT_MUSIC_MODEL} first where it is one). Suno's limits: ${modelLimitsText()}.`,
    maxLength: 64,
    example: DEFAULT_MUSIC_MODEL,
  })
  @IsOptional()
  @IsString({ message: 'mv must be a string: a model GET /models lists for music' })
  @Matches(/^[A-Za-z0-9][A-Za-z0-9._:-]{0,63}$/, { message: 'mv must be a model name (1 to 64 letters, digits and . _ : -)' })
  mv?: string;

  @ApiPropertyOptional({
    description: 'How long the song is to last, in seconds, for a model that takes a duration (GET /models: durations_s); a request for a duration no configured model takes is refused. Without it the model decides (Suno\'s make about 2 to 4 minutes).',
    minimum: 1,
    maximum: 600,
    example: 30,
  })
  @IsOptional()
  @IsInt({ message: 'duration must be a whole number of seconds, 1 to 600' })
  @Min(1, { message: 'duration must be a whole number of seconds, 1 to 600' })
  @Max(600, { message: 'duration must be a whole number of seconds, 1 to 600' })
  duration?: number;

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
