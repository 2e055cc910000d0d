import { ApiProperty } from '@nestjs/swagger';
import { IsUUID } from 'class-validator';
import { NullAsAbsent } from '../../../common/validation/body-fields.js';

/** `POST /sunoapi/api/v1/generate/get-timestamped-lyrics`: a take of one of your music tasks, as docs.sunoapi.org's Get Timestamped Lyrics. */
@NullAsAbsent()
export class SunoapiTimestampedLyricsBodyDto {
  @ApiProperty({ format: 'uuid', description: 'The taskId a create answered.', example: '5b6c7d8e-9f0a-4b1c-8d2e-3f4a5b6c7d8e' })
  @IsUUID('all', { message: 'taskId must be the taskId (a UUID) a create answered' })
  taskId!: string;

  @ApiProperty({ format: 'uuid', description: "One of that task's takes: an id in its record's response.sunoData.", example: '7d8e9f0a-1b2c-4d3e-8f4a-5b6c7d8e9f0a' })
  @IsUUID('all', { message: "audioId must be the id (a UUID) of one of the task's takes (response.sunoData[].id)" })
  audioId!: string;
}

/** One word sung, with its start and end in seconds. */
export class SunoapiAlignedWordDto {
  @ApiProperty({ example: 'Morning' })
  word!: string;

  @ApiProperty({ description: 'Always true: only aligned words are kept.', example: true })
  success!: boolean;

  @ApiProperty({ description: "Its start, seconds from the track's start.", example: 0.2 })
  startS!: number;

  @ApiProperty({ description: 'Its end, seconds.', example: 0.56 })
  endS!: number;

  @ApiProperty({ description: 'The confidence of its alignment (1: the words kept are those their maker aligned).', example: 1 })
  palign!: number;
}

export class SunoapiTimestampedLyricsDataDto {
  @ApiProperty({ type: SunoapiAlignedWordDto, isArray: true, description: 'The words in the order sung; empty for a take without timed words (an instrumental, a model that times none).' })
  alignedWords!: SunoapiAlignedWordDto[];

  @ApiProperty({ type: Number, isArray: true, description: 'Not kept here: always empty.', example: [] })
  waveformData!: number[];

  @ApiProperty({ description: 'Not measured here: always 0.', example: 0 })
  hootCer!: number;

  @ApiProperty({ description: 'Always false: the take is stored whole.', example: false })
  isStreamed!: boolean;
}

/** Its answer: `{code: 200, msg: "success", data: {alignedWords, waveformData, hootCer, isStreamed}}`. */
export class SunoapiTimestampedLyricsDto {
  @ApiProperty({ example: 200 })
  code!: number;

  @ApiProperty({ example: 'success' })
  msg!: string;

  @ApiProperty({ type: SunoapiTimestampedLyricsDataDto })
  data!: SunoapiTimestampedLyricsDataDto;
}
