import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';

/** A speech model callers may ask for (`GET /models`, operation `speech`). */
export class SpeechModelDto {
  @ApiProperty({ description: 'The name to ask for (`model`).', example: 'gpt-4o-mini-tts' })
  name!: string;

  @ApiProperty({ enum: ['speech'], description: 'The operation it serves.', example: 'speech' })
  operation!: 'speech';

  @ApiProperty({ description: 'The vendor behind it (a channel protocol; sandbox: spoken offline).', example: 'openai' })
  vendor!: string;

  @ApiProperty({ description: "The vendor's id of the model.", example: 'gpt-4o-mini-tts' })
  vendor_model!: string;

  @ApiProperty({ description: "Whether what it can do is what a channel declared (a vendor model the gateway's catalog does not know: the channel's `models[].spec`), not the catalog's.", example: false })
  declared!: boolean;

  @ApiProperty({ type: [String], description: 'The voice names it speaks (`voice`), as the channels map them to the vendor\'s voices.', example: ['alloy', 'coral', 'nova'] })
  voices!: string[];

  @ApiProperty({ description: "It takes a vendor's own voice id (`voice: {\"id\": …}`).", example: false })
  voice_ids!: boolean;

  @ApiProperty({ description: 'The longest `input` it takes, in characters: the least of the vendor\'s limit and the door\'s (4,096).', example: 4096 })
  max_input_chars!: number;

  @ApiProperty({ description: 'It takes `instructions` (how to speak).', example: true })
  instructions!: boolean;

  @ApiPropertyOptional({ type: [Number], description: 'The speeds it takes, [min, max]; absent: only 1.', example: [0.25, 4] })
  speed?: number[];

  @ApiProperty({ description: 'Credits charged per 1,000 characters of input (PRICE_SPEECH_1K_CHARS), each started thousand counted whole.', example: 1 })
  credits_per_1k_chars!: number;
}
