import { ApiProperty } from '@nestjs/swagger';
import { SuccessEnvelopeDto } from '../../../common/swagger/success-envelope.dto.js';

export class CallbackAttemptDto {
  @ApiProperty({ format: 'date-time' })
  attempted_at!: string;

  @ApiProperty({ type: Number, nullable: true, description: "The receiver's HTTP status; null when there was no answer.", example: 200 })
  status_code!: number | null;

  @ApiProperty({ example: 42 })
  duration_ms!: number;

  @ApiProperty({ type: String, nullable: true, example: null })
  error!: string | null;
}

export class CallbackDeliveryDto {
  @ApiProperty({ format: 'uuid', description: 'The `webhook-id` header of every attempt of this notification.' })
  id!: string;

  @ApiProperty({ description: 'The task status this notification carries.', example: 'succeed' })
  status!: string;

  @ApiProperty({ example: 'https://example.com/hooks/expand' })
  url!: string;

  @ApiProperty({ enum: ['pending', 'delivered', 'failed'], example: 'delivered' })
  state!: string;

  @ApiProperty({ description: 'Attempts in the current cycle, which its retry schedule counts: a redelivery (POST /admin/deliveries/{id}/redeliver) starts a new one at 0, while attempt_log keeps every attempt of every cycle.', example: 1 })
  attempts!: number;

  @ApiProperty({ format: 'date-time' })
  created_at!: string;

  @ApiProperty({ type: String, format: 'date-time', nullable: true })
  finished_at!: string | null;

  @ApiProperty({ type: String, nullable: true, description: 'Why the last attempt did not count.', example: null })
  last_error!: string | null;

  @ApiProperty({ type: CallbackAttemptDto, isArray: true })
  attempt_log!: CallbackAttemptDto[];
}

export class CallbackListDto {
  @ApiProperty({ type: CallbackDeliveryDto, isArray: true, description: "The task's notifications, in order." })
  deliveries!: CallbackDeliveryDto[];
}

export class CallbackListEnvelopeDto extends SuccessEnvelopeDto {
  @ApiProperty({ type: CallbackDeliveryDto, isArray: true })
  data!: CallbackDeliveryDto[];
}

export class WebhookSecretDto {
  @ApiProperty({ example: 'team-video' })
  owner!: string;

  @ApiProperty({ description: 'Standard Webhooks secret: verify deliveries with it.', example: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw' })
  secret!: string;

  @ApiProperty({ type: String, nullable: true, description: 'The secret before the last rotation; it also signs until previous_expires_at.', example: null })
  previous_secret!: string | null;

  @ApiProperty({ type: String, format: 'date-time', nullable: true, example: null })
  previous_expires_at!: string | null;

  @ApiProperty({ type: String, format: 'date-time', nullable: true, example: null })
  rotated_at!: string | null;
}
