import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import { ArrayMaxSize, IsArray, IsBoolean, IsIn, IsInt, IsObject, IsOptional, IsString, Length, Matches, Max, Min, ValidateNested } from 'class-validator';
import { MaxChars } from '../../../common/validation/validators.js';
import { NullAsAbsent } from '../../../common/validation/body-fields.js';

/**
 * The `output_format` values served: MP3 (the format every music vendor here makes, kept as made). ElevenLabs'
 * PCM, μ-law, A-law and Opus formats are refused (422 naming `output_format`), never answered in another format.
 */
export const ELEVENLABS_MUSIC_FORMATS = ['auto', 'mp3_22050_32', 'mp3_24000_48', 'mp3_44100_32', 'mp3_44100_64', 'mp3_44100_96', 'mp3_44100_128', 'mp3_44100_192', 'mp3_48000_128', 'mp3_48000_192', 'mp3_48000_240', 'mp3_48000_320'] as const;

/** ElevenLabs' bounds (its API reference, "Compose music"). */
export const ELEVENLABS_MUSIC_LIMITS = {
  promptMax: 4_100,
  lengthMs: { min: 3_000, max: 600_000 },
  section: { nameMax: 100, minMs: 3_000, maxMs: 120_000, linesMax: 30, lineMax: 200 },
  /** Not a bound ElevenLabs documents: 30 sections of 3 s to 2 min hold any song its 10 minutes allow. */
  sectionsMax: 30,
  stylesMax: 50,
  styleMax: 300,
} as const;

const L = ELEVENLABS_MUSIC_LIMITS;

export class ElevenLabsMusicQueryDto {
  @ApiPropertyOptional({ enum: ELEVENLABS_MUSIC_FORMATS, description: "ElevenLabs' codec_sample-rate_bitrate. MP3 only: the song is answered as its vendor made it (MP3; auto and every mp3_* value are served the same file). PCM, μ-law, A-law and Opus are refused.", example: 'mp3_44100_128' })
  @IsOptional()
  @IsIn(ELEVENLABS_MUSIC_FORMATS, { message: `output_format must be one of ${ELEVENLABS_MUSIC_FORMATS.join(', ')} (this gateway answers MP3 only)` })
  output_format?: (typeof ELEVENLABS_MUSIC_FORMATS)[number];
}

/** A section of a composition plan (ElevenLabs' `SongSection`). */
export class ElevenLabsSongSectionDto {
  @ApiProperty({ description: 'Its name (Verse, Chorus …), 1 to 100 characters: the lyrics\' section tag.', example: 'Verse 1', minLength: 1, maxLength: L.section.nameMax })
  @IsString({ message: 'section_name must be a string' })
  @Length(1, L.section.nameMax, { message: `section_name must be 1 to ${L.section.nameMax} characters long` })
  @Matches(/^[^[\]\r\n]*$/, { message: 'section_name must not hold brackets or line breaks' })
  section_name!: string;

  @ApiProperty({ type: [String], description: 'Styles of this section (kept in its section tag).', example: ['soft piano'], maxItems: L.stylesMax })
  @IsArray({ message: 'positive_local_styles must be an array of strings' })
  @ArrayMaxSize(L.stylesMax, { message: `positive_local_styles must hold at most ${L.stylesMax} styles` })
  @IsString({ each: true, message: 'positive_local_styles must be an array of strings' })
  @MaxChars(L.styleMax, { each: true, message: `positive_local_styles must hold styles of at most ${L.styleMax} characters each` })
  @Matches(/^[^[\]\r\n]*$/, { each: true, message: 'positive_local_styles must not hold brackets or line breaks' })
  positive_local_styles!: string[];

  @ApiProperty({ type: [String], description: 'Styles this section avoids (kept in its section tag as "no …").', example: ['drums'], maxItems: L.stylesMax })
  @IsArray({ message: 'negative_local_styles must be an array of strings' })
  @ArrayMaxSize(L.stylesMax, { message: `negative_local_styles must hold at most ${L.stylesMax} styles` })
  @IsString({ each: true, message: 'negative_local_styles must be an array of strings' })
  @MaxChars(L.styleMax, { each: true, message: `negative_local_styles must hold styles of at most ${L.styleMax} characters each` })
  @Matches(/^[^[\]\r\n]*$/, { each: true, message: 'negative_local_styles must not hold brackets or line breaks' })
  negative_local_styles!: string[];

  @ApiProperty({ description: 'How long it lasts, 3,000 to 120,000 ms; the sections\' sum is the song\'s length.', minimum: L.section.minMs, maximum: L.section.maxMs, example: 10_000 })
  @IsInt({ message: `duration_ms must be a whole number from ${L.section.minMs} to ${L.section.maxMs}` })
  @Min(L.section.minMs, { message: `duration_ms must be a whole number from ${L.section.minMs} to ${L.section.maxMs}` })
  @Max(L.section.maxMs, { message: `duration_ms must be a whole number from ${L.section.minMs} to ${L.section.maxMs}` })
  duration_ms!: number;

  @ApiProperty({ type: [String], description: 'Its lyrics, a line each: at most 30 lines of 200 characters; none: played without singing.', example: ['Morning light upon the bay'], maxItems: L.section.linesMax })
  @IsArray({ message: 'lines must be an array of strings' })
  @ArrayMaxSize(L.section.linesMax, { message: `lines must hold at most ${L.section.linesMax} lines` })
  @IsString({ each: true, message: 'lines must be an array of strings' })
  @MaxChars(L.section.lineMax, { each: true, message: `lines must hold lines of at most ${L.section.lineMax} characters each` })
  @Matches(/^[^\r\n]*$/, { each: true, message: 'lines must hold one line each (no line breaks)' })
  lines!: string[];
}

/** A composition plan (ElevenLabs' `MusicPrompt`). */
export class ElevenLabsCompositionPlanDto {
  @ApiProperty({ type: [String], description: 'Styles of the whole song: the song\'s style.', example: ['lo-fi', 'piano', 'calm'], maxItems: L.stylesMax })
  @IsArray({ message: 'positive_global_styles must be an array of strings' })
  @ArrayMaxSize(L.stylesMax, { message: `positive_global_styles must hold at most ${L.stylesMax} styles` })
  @IsString({ each: true, message: 'positive_global_styles must be an array of strings' })
  @MaxChars(L.styleMax, { each: true, message: `positive_global_styles must hold styles of at most ${L.styleMax} characters each` })
  positive_global_styles!: string[];

  @ApiProperty({ type: [String], description: 'Styles the whole song avoids.', example: ['heavy metal'], maxItems: L.stylesMax })
  @IsArray({ message: 'negative_global_styles must be an array of strings' })
  @ArrayMaxSize(L.stylesMax, { message: `negative_global_styles must hold at most ${L.stylesMax} styles` })
  @IsString({ each: true, message: 'negative_global_styles must be an array of strings' })
  @MaxChars(L.styleMax, { each: true, message: `negative_global_styles must hold styles of at most ${L.styleMax} characters each` })
  negative_global_styles!: string[];

  @ApiProperty({ type: [ElevenLabsSongSectionDto], description: `The song's sections in order, 1 to ${L.sectionsMax}.`, minItems: 1, maxItems: L.sectionsMax })
  @IsArray({ message: 'sections must be an array of sections' })
  @ArrayMaxSize(L.sectionsMax, { message: `sections must hold at most ${L.sectionsMax} sections` })
  @ValidateNested({ each: true })
  @Type(() => ElevenLabsSongSectionDto)
  sections!: ElevenLabsSongSectionDto[];
}

/** ElevenLabs' `POST /v1/music` body (its names): a prompt, or a composition plan. */
@NullAsAbsent()
export class ElevenLabsComposeMusicDto {
  @ApiPropertyOptional({ description: 'What the song is, in words (the vendor writes the lyrics), at most 4,100 characters. Not with composition_plan.', example: 'An upbeat lo-fi track about a morning bike ride, warm piano', maxLength: L.promptMax })
  @IsOptional()
  @IsString({ message: 'prompt must be a string' })
  @Matches(/\S/, { message: 'prompt must not be empty or blank' })
  @MaxChars(L.promptMax)
  prompt?: string;

  @ApiPropertyOptional({ type: ElevenLabsCompositionPlanDto, description: 'The song section by section: its styles, and each section\'s name, styles, length and lines. Not with prompt, music_length_ms or force_instrumental.' })
  @IsOptional()
  @IsObject({ message: 'composition_plan must be an object {positive_global_styles, negative_global_styles, sections}' })
  @ValidateNested()
  @Type(() => ElevenLabsCompositionPlanDto)
  composition_plan?: ElevenLabsCompositionPlanDto;

  @ApiPropertyOptional({ description: 'The song\'s length with a prompt, 3,000 to 600,000 ms; absent: the model decides.', minimum: L.lengthMs.min, maximum: L.lengthMs.max, example: 30_000 })
  @IsOptional()
  @IsInt({ message: `music_length_ms must be a whole number from ${L.lengthMs.min} to ${L.lengthMs.max}` })
  @Min(L.lengthMs.min, { message: `music_length_ms must be a whole number from ${L.lengthMs.min} to ${L.lengthMs.max}` })
  @Max(L.lengthMs.max, { message: `music_length_ms must be a whole number from ${L.lengthMs.min} to ${L.lengthMs.max}` })
  music_length_ms?: number;

  @ApiPropertyOptional({ description: 'A music model GET /models lists (ElevenLabs\' music_v1 where configured). A name no configured model has leaves the choice to the gateway (any model that makes the song).', example: 'music_v1', maxLength: 64 })
  @IsOptional()
  @IsString({ message: 'model_id must be a string' })
  @Matches(/^[A-Za-z0-9][A-Za-z0-9._:-]{0,63}$/, { message: 'model_id must be 1 to 64 letters, digits and . _ : -' })
  model_id?: string;

  @ApiPropertyOptional({ description: 'With a prompt: no vocals (default false).', example: false })
  @IsOptional()
  @IsBoolean({ message: 'force_instrumental must be true or false' })
  force_instrumental?: boolean;
}
