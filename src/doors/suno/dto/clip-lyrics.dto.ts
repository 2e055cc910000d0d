import { ApiProperty } from '@nestjs/swagger';

/** One word of a clip's lyrics with its time, as Suno's aligned lyrics give it. */
export class AlignedWordDto {
  @ApiProperty({ description: 'The word as sung (punctuation kept).', example: 'Morning' })
  word!: string;

  @ApiProperty({ description: 'Whether the word was aligned (always true: the gateway keeps only timed words).', example: true })
  success!: boolean;

  @ApiProperty({ description: 'When the word starts, in seconds from the start of this clip.', example: 1.25 })
  start_s!: number;

  @ApiProperty({ description: 'When it ends, in seconds from the start of this clip (never past its duration).', example: 1.7 })
  end_s!: number;

  @ApiProperty({ description: "The alignment's confidence, 0 to 1 (1: the vendor gave the time itself).", example: 1 })
  p_align!: number;
}

export class ClipLyricsDto {
  @ApiProperty({ format: 'uuid' })
  clip_id!: string;

  @ApiProperty({ type: String, nullable: true, description: 'Its title: the one its vendor gave, else the one asked.', example: 'Morning tide' })
  title!: string | null;

  @ApiProperty({ type: String, nullable: true, description: 'Its lyrics with their section tags, as its vendor reported them (else as asked).', example: '[Verse]\nMorning tide upon the sand' })
  lyrics!: string | null;

  @ApiProperty({ type: Number, nullable: true, description: 'The clip\'s duration in seconds; every word lies within it.', example: 30 })
  duration!: number | null;

  @ApiProperty({ type: [AlignedWordDto], description: 'Its words in the order sung, each with its start and end.' })
  aligned_words!: AlignedWordDto[];
}

export class ClipLyricsResultDto {
  @ApiProperty({ example: 'success' })
  code!: string;

  @ApiProperty({ example: '' })
  message!: string;

  @ApiProperty({ type: ClipLyricsDto })
  data!: ClipLyricsDto;
}
