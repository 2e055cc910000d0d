import { ApiProperty } from '@nestjs/swagger';

/** A lyrics model callers may ask for (`GET /models`, operation `lyrics`). */
export class LyricsModelDto {
  @ApiProperty({ description: 'The name to ask for (`mv` on the Suno-style door).', example: 'suno_lyrics' })
  name!: string;

  @ApiProperty({ enum: ['lyrics'], description: 'The operation it serves.', example: 'lyrics' })
  operation!: 'lyrics';

  @ApiProperty({ description: 'The vendor behind it (a channel protocol).', example: 'suno' })
  vendor!: string;

  @ApiProperty({ description: "The vendor's id of the model.", example: 'suno_lyrics' })
  vendor_model!: string;

  @ApiProperty({ description: 'The longest `prompt` it takes, in characters.', example: 3000 })
  max_prompt_chars!: number;

  @ApiProperty({ description: 'How many versions of the lyrics one task writes.', example: 1 })
  versions!: number;

  @ApiProperty({ description: 'Credits charged per task (PRICE_LYRICS), whatever the versions.', example: 1 })
  credits_per_task!: number;
}
