import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Transform } from 'class-transformer';
import { IsDefined, IsNotEmpty, IsOptional, IsString, Matches } from 'class-validator';
import { IsHttpUrl, MaxChars } from '../../../common/validation/validators.js';
import { LYRICS_MAX_PROMPT } from '../../../vendors/contracts/lyrics-vendor.js';
import { NullAsAbsent } from '../../../common/validation/body-fields.js';

/** POST /music-a/submit/lyrics: new-api's lyrics body (a prompt), with the door's model and callbacks. */
@NullAsAbsent()
export class SubmitLyricsDto {
  @ApiProperty({ description: `What the lyrics are about (a theme, a mood, a story): 1 to ${LYRICS_MAX_PROMPT} characters once the spaces around it are trimmed (a model may take fewer: GET /models, max_prompt_chars).`, minLength: 1, maxLength: LYRICS_MAX_PROMPT, example: 'a summer road trip along the coast with old friends' })
  // spaces around the prompt are not part of it: trimmed before it is checked and kept
  @Transform(({ value }: { value: unknown }) => (typeof value === 'string' ? value.trim() : value))
  @IsDefined({ message: 'prompt is required: what the lyrics are about' })
  @IsString({ message: 'prompt must be a string: what the lyrics are about' })
  @IsNotEmpty({ message: 'prompt must not be empty (nor only spaces): what the lyrics are about' })
  @MaxChars(LYRICS_MAX_PROMPT)
  prompt!: string;

  @ApiPropertyOptional({ description: 'The lyrics model: one of those GET /models lists for lyrics (suno_lyrics where an aggregator serves it). Without it, any configured model that takes the prompt.', maxLength: 64, example: 'suno_lyrics' })
  @IsOptional()
  @IsString({ message: 'mv must be a string: a model GET /models lists for lyrics' })
  @Matches(/^[A-Za-z0-9][A-Za-z0-9._:-]{0,63}$/, { message: 'mv must be a model name (1 to 64 letters, digits and . _ : -)' })
  mv?: string;

  @ApiPropertyOptional({ description: 'http(s) URL notified (POST, the task record as GET /music-a/fetch/{task_id} gives it, signed) on each status change.', maxLength: 2048 })
  @IsOptional()
  @IsHttpUrl()
  callback_url?: string;

  @ApiPropertyOptional({ description: "Alias of callback_url (new-api's name); callback_url wins when both are given.", maxLength: 2048 })
  @IsOptional()
  @IsHttpUrl()
  notify_hook?: string;
}
