import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsUUID, IsOptional } from 'class-validator';
import { EmptyAsAbsent, IsHttpUrl } from '../../../common/validation/validators.js';
import { NullAsAbsent } from '../../../common/validation/body-fields.js';

export const SUNOAPI_WAV_STATES = ['PENDING', 'SUCCESS', 'CREATE_TASK_FAILED', 'GENERATE_WAV_FAILED', 'CALLBACK_EXCEPTION'] as const;

/** `POST /sunoapi/api/v1/wav/generate`: one track of a music task as WAV, as docs.sunoapi.org's Convert to WAV Format. */
@NullAsAbsent()
export class SunoapiWavGenerateDto {
  @ApiProperty({ format: 'uuid', description: 'The music task the track is of: a taskId a create answered (any of your music tasks, whichever door made it).', example: '5b6c7d8e-9f0a-4b1c-8d2e-3f4a5b6c7d8e' })
  @IsUUID('all', { message: 'taskId must be the taskId (a UUID) a create answered' })
  taskId!: string;

  @ApiProperty({ format: 'uuid', description: "The track to convert: an id in that task's response.sunoData (its clip id), complete.", example: '7d8e9f0a-1b2c-4d3e-8f4a-5b6c7d8e9f0a' })
  @IsUUID('all', { message: 'audioId must be the id (a UUID) of a track of the task taskId' })
  audioId!: string;

  @ApiPropertyOptional({
    description: 'http(s) URL called once when the conversion ends (POST, signed as every callback of this gateway: Standard Webhooks headers): `{code: 200, msg: "success", data: {audioWavUrl, task_id}}`, or `{code: 500, msg: <reason>, data: {task_id}}`. Optional here (poll wav/record-info instead).',
    maxLength: 2048,
    example: 'https://example.com/hooks/wav',
  })
  @IsOptional()
  @EmptyAsAbsent()
  @IsHttpUrl()
  callBackUrl?: string;
}

/** `GET /sunoapi/api/v1/wav/record-info?taskId=`. */
export class SunoapiWavRecordInfoQueryDto {
  @ApiProperty({ format: 'uuid', description: 'The taskId POST /wav/generate answered.' })
  @IsUUID('all', { message: 'taskId must be the taskId (a UUID) POST /wav/generate answered' })
  taskId!: string;
}

export class SunoapiWavResponseDto {
  @ApiProperty({ description: 'Signed link to the WAV (16-bit PCM, the track\'s own sample rate and channels); valid as every result link, until retention (RESULT_RETENTION_DAYS).', example: 'http://localhost:3000/media/7d8e9f0a-1b2c-4d3e-8f4a-5b6c7d8e9f0a?expires=1795000000&signature=abc' })
  audioWavUrl!: string;
}

/** A WAV conversion's record, as docs.sunoapi.org's Get WAV Conversion Details. */
export class SunoapiWavRecordDto {
  @ApiProperty({ format: 'uuid' })
  taskId!: string;

  @ApiProperty({ format: 'uuid', description: 'The track converted (the request\'s audioId).' })
  musicId!: string;

  @ApiProperty({ type: String, nullable: true, description: 'The callBackUrl given, else null.' })
  callbackUrl!: string | null;

  @ApiProperty({ type: String, nullable: true, description: 'When it ended, UTC, "YYYY-MM-DD HH:mm:ss"; null before.', example: '2026-11-21 10:00:05' })
  completeTime!: string | null;

  @ApiProperty({ type: SunoapiWavResponseDto, nullable: true, description: 'Null until SUCCESS, and once the WAV expired.' })
  response!: SunoapiWavResponseDto | null;

  @ApiProperty({ enum: SUNOAPI_WAV_STATES, description: 'PENDING (accepted or converting), SUCCESS (the WAV is stored), GENERATE_WAV_FAILED (with errorCode and errorMessage). CREATE_TASK_FAILED and CALLBACK_EXCEPTION are never reported: a create that fails is refused at once, and callbacks have their own delivery log (GET /tasks/{id}/callbacks).', example: 'SUCCESS' })
  successFlag!: string;

  @ApiProperty({ description: 'When it was accepted, UTC, "YYYY-MM-DD HH:mm:ss".', example: '2026-11-21 10:00:00' })
  createTime!: string;

  @ApiProperty({ type: Number, nullable: true, description: 'A failed conversion\'s code: 500 (its credits given back).' })
  errorCode!: number | null;

  @ApiProperty({ type: String, nullable: true })
  errorMessage!: string | null;
}

/** `GET /sunoapi/api/v1/wav/record-info`'s answer. */
export class SunoapiWavRecordInfoDto {
  @ApiProperty({ example: 200 })
  code!: number;

  @ApiProperty({ example: 'success' })
  msg!: string;

  @ApiProperty({ type: SunoapiWavRecordDto })
  data!: SunoapiWavRecordDto;
}

/** `GET /sunoapi/api/v1/generate/credit`'s answer: `{code: 200, msg: "success", data: <credits left>}`. */
export class SunoapiCreditDto {
  @ApiProperty({ example: 200 })
  code!: number;

  @ApiProperty({ example: 'success' })
  msg!: string;

  @ApiProperty({ description: "The credits your key's owner may still spend this month (monthly credits less those charged; a failed task's are given back); 9007199254740991 (Number.MAX_SAFE_INTEGER) when the owner has no monthly limit.", example: 100 })
  data!: number;
}
