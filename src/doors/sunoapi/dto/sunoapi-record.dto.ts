import { ApiProperty } from '@nestjs/swagger';

export const SUNOAPI_RECORD_STATES = ['PENDING', 'TEXT_SUCCESS', 'FIRST_SUCCESS', 'SUCCESS', 'CREATE_TASK_FAILED', 'GENERATE_AUDIO_FAILED', 'CALLBACK_EXCEPTION', 'SENSITIVE_WORD_ERROR'] as const;

/** A take as record-info lists it (`response.sunoData[]`). */
export class SunoapiTrackDto {
  @ApiProperty({ format: 'uuid', description: 'The clip id (an extend\'s audioId; /music-a routes take it too).' })
  id!: string;

  @ApiProperty({ description: 'Signed link to the take (MP3); "" until SUCCESS and after retention.', example: 'http://localhost:3000/media/7d8e9f0a-1b2c-4d3e-8f4a-5b6c7d8e9f0a?expires=1795000000&signature=abc' })
  audioUrl!: string;

  @ApiProperty({ description: 'The same link (the take is streamed from it); "" until SUCCESS.' })
  streamAudioUrl!: string;

  @ApiProperty({ description: 'Signed link to its cover (PNG); "" until SUCCESS.' })
  imageUrl!: string;

  @ApiProperty({ description: 'The lyrics it sings, as the model that made it reported them (non-custom mode: the lyrics written from the description), else those asked (custom mode); "" for an instrumental.' })
  prompt!: string;

  @ApiProperty({ description: 'The model asked (V4_5, …), else "".', example: 'V4_5' })
  modelName!: string;

  @ApiProperty({ description: 'Its title, as the model that made it named it, else the one asked, else "".', example: 'Morning tide' })
  title!: string;

  @ApiProperty({ description: 'The style.', example: 'lo-fi, piano, calm' })
  tags!: string;

  @ApiProperty({ description: 'When the take was created, UTC, "YYYY-MM-DD HH:mm:ss".', example: '2026-11-21 10:00:00' })
  createTime!: string;

  @ApiProperty({ type: Number, nullable: true, description: 'Seconds; null until SUCCESS.', example: 6 })
  duration!: number | null;
}

export class SunoapiRecordResponseDto {
  @ApiProperty({ format: 'uuid' })
  taskId!: string;

  @ApiProperty({ type: SunoapiTrackDto, isArray: true })
  sunoData!: SunoapiTrackDto[];

  @ApiProperty({ required: false, description: 'A failed task\'s reason.' })
  errorMessage?: string | null;
}

export class SunoapiRecordDto {
  @ApiProperty({ format: 'uuid' })
  taskId!: string;

  @ApiProperty({ description: 'The clip an extend continues (its audioId), an upload-extend\'s upload (its clip id), else "".' })
  parentMusicId!: string;

  @ApiProperty({ description: 'What was asked, in the create\'s names, as a JSON string.', example: '{"customMode":true,"instrumental":false,"model":"V4_5","prompt":"…","style":"lo-fi","title":"Morning tide"}' })
  param!: string;

  @ApiProperty({ type: SunoapiRecordResponseDto, nullable: true, description: 'Null while PENDING.' })
  response!: SunoapiRecordResponseDto | null;

  @ApiProperty({
    enum: SUNOAPI_RECORD_STATES,
    description:
      'PENDING (accepted, not started), TEXT_SUCCESS (started: its takes listed, without audio), SUCCESS (both takes made); failed: SENSITIVE_WORD_ERROR (a vendor refused its content) or GENERATE_AUDIO_FAILED. FIRST_SUCCESS is never reported: the takes are made together.',
    example: 'SUCCESS',
  })
  status!: string;

  @ApiProperty({ enum: ['GENERATE', 'EXTEND', 'UPLOAD_EXTEND'], example: 'GENERATE' })
  type!: string;

  @ApiProperty({ type: Number, nullable: true, description: 'A failed task\'s code: 400 content refused, 408 timed out, 531 failed (its credits given back).' })
  errorCode!: number | null;

  @ApiProperty({ type: String, nullable: true })
  errorMessage!: string | null;
}

/** `GET /sunoapi/api/v1/generate/record-info`'s answer. */
export class SunoapiRecordInfoDto {
  @ApiProperty({ example: 200 })
  code!: number;

  @ApiProperty({ example: 'success' })
  msg!: string;

  @ApiProperty({ type: SunoapiRecordDto })
  data!: SunoapiRecordDto;
}
