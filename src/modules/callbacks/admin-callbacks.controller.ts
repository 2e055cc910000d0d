import { Controller, Get, HttpCode, Param, Post } from '@nestjs/common';
import { ApiAcceptedResponse, ApiBearerAuth, ApiOkResponse, ApiOperation, ApiParam, ApiTags } from '@nestjs/swagger';
import { AdminOnly } from '../../common/decorators/auth.decorators.js';
import { OwnerParamDto } from '../../common/validation/owner.js';
import { ApiErrors, KEYED_ROUTE_ERRORS } from '../../common/swagger/api-errors.decorator.js';
import { CallbacksService } from './callbacks.service.js';
import { CallbackDeliveryDto, WebhookSecretDto } from './dto/callback.dto.js';
import { ADMIN_KEY_SCHEME } from '../../common/swagger/security-schemes.js';

@ApiTags('admin')
@ApiBearerAuth(ADMIN_KEY_SCHEME)
@AdminOnly()
@ApiErrors([...KEYED_ROUTE_ERRORS, 'FORBIDDEN', 'NOT_FOUND'])
@Controller('admin')
export class AdminCallbacksController {
  constructor(private readonly callbacks: CallbacksService) {}

  @Get('owners/:owner/webhook-secret')
  @ApiOperation({ operationId: 'getWebhookSecret', summary: "Read an owner's webhook signing secret", description: 'Made on first use. During a rotation the previous secret is shown too: deliveries carry both signatures until it expires.' })
  @ApiOkResponse({ type: WebhookSecretDto })
  @ApiErrors(['INVALID_PARAMETER'])
  secret(@Param() { owner }: OwnerParamDto): Promise<WebhookSecretDto> {
    return this.callbacks.secretOf(owner);
  }

  @Post('owners/:owner/webhook-secret/rotate')
  @HttpCode(200)
  @ApiOperation({ operationId: 'rotateWebhookSecret', summary: "Rotate an owner's webhook signing secret", description: 'The previous secret keeps signing (beside the new one) for WEBHOOK_ROTATION_OVERLAP_S (24 h).' })
  @ApiOkResponse({ type: WebhookSecretDto })
  @ApiErrors(['INVALID_PARAMETER'])
  rotate(@Param() { owner }: OwnerParamDto): Promise<WebhookSecretDto> {
    return this.callbacks.rotateSecret(owner);
  }

  @Post('deliveries/:id/redeliver')
  @HttpCode(202)
  @ApiOperation({ operationId: 'redeliverCallback', summary: 'Redeliver a notification', description: 'A new cycle of attempts, with the same webhook-id and body.' })
  @ApiParam({ name: 'id', format: 'uuid' })
  @ApiAcceptedResponse({ type: CallbackDeliveryDto })
  redeliver(@Param('id') id: string): Promise<CallbackDeliveryDto> {
    return this.callbacks.redeliver(id);
  }
}
