import { ApiProperty } from '@nestjs/swagger';
import { IsString, IsUUID, Matches } from 'class-validator';

/** The per-task route an upstream calls back: the task and its token. */
export class UpstreamCallbackParamsDto {
  @ApiProperty({ description: 'The task the upstream works on (our id)', format: 'uuid', example: '0b4e8a44-5f62-4b2e-9a4f-3c1d2e7f9a10' })
  @IsUUID('all')
  task_id!: string;

  @ApiProperty({ description: 'The token given with the callback URL (an HMAC of the task id)', example: 'q0sV9aF0c1mB8Xo5yWz3Lr7PdE2tKjHn4UuGiC6bQvA' })
  @IsString()
  @Matches(/^[A-Za-z0-9_-]{1,128}$/, { message: 'token must be the token given with the callback URL' })
  token!: string;
}

/** What an upstream's callback is answered: it was received (its content is never trusted: the task's upstream is asked). */
export class UpstreamCallbackAnswerDto {
  @ApiProperty({ description: 'Always true: the callback was received', example: true })
  received!: boolean;
}
