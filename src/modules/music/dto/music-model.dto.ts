import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';

/** A music model callers may ask for (`GET /models`, operation `music`). */
export class MusicModelDto {
  @ApiProperty({ description: 'The name to ask for (`mv` at the Suno-style door).', example: 'chirp-v4' })
  name!: string;

  @ApiProperty({ enum: ['music'], description: 'The operation it serves.', example: 'music' })
  operation!: 'music';

  @ApiProperty({ description: 'The vendor behind it (a channel protocol).', example: 'suno' })
  vendor!: string;

  @ApiProperty({ description: "The vendor's id of the model.", example: 'chirp-v4' })
  vendor_model!: string;

  @ApiProperty({ description: 'It sings lyrics it is given (`prompt`).', example: true })
  lyrics!: boolean;

  @ApiProperty({ description: 'It writes its own lyrics from a description (`gpt_description_prompt`).', example: true })
  description!: boolean;

  @ApiProperty({ description: 'It makes a song without vocals when asked (`make_instrumental`).', example: true })
  instrumental!: boolean;

  @ApiProperty({ description: 'It makes nothing but instrumental music.', example: false })
  instrumental_only!: boolean;

  @ApiProperty({ description: 'It continues a clip stored here (an upload, a take of any vendor, a joined song): `continue_clip_id`.', example: true })
  continues_stored_clips!: boolean;

  @ApiProperty({ description: 'It continues a clip it made itself (named by its own id, on the channel that made it).', example: true })
  continues_own_clips!: boolean;

  @ApiPropertyOptional({ type: [Number], description: 'The durations it takes (`duration`, seconds), [min, max]; absent: it takes none (it decides how long the song is).', example: [3, 600] })
  durations_s?: number[];

  @ApiProperty({ description: 'Takes (clips) one task makes.', example: 2 })
  takes!: number;

  @ApiProperty({ description: 'The format of what it makes.', example: 'mp3' })
  format!: string;

  @ApiPropertyOptional({ description: 'The longest lyrics it takes, in characters.', example: 3000 })
  max_lyrics_chars?: number;

  @ApiPropertyOptional({ description: 'The longest description it takes, in characters.', example: 400 })
  max_description_chars?: number;

  @ApiPropertyOptional({ description: 'The longest style (`tags`) it takes, in characters.', example: 200 })
  max_style_chars?: number;

  @ApiProperty({ description: 'Whether it takes styles to avoid (`negative_tags`).', example: true })
  avoid_style!: boolean;

  @ApiPropertyOptional({ description: 'True for a model that requires a style (`tags`) with lyrics, for an instrumental without a description, and for a continuation (sunoapi.org\'s custom mode).', example: true })
  needs_style?: boolean;

  @ApiProperty({ description: 'Credits charged per task (PRICE_MUSIC).', example: 10 })
  credits_per_task!: number;
}
