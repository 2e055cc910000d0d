import { Controller, Get } from '@nestjs/common';
import { ApiBearerAuth, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { AdminOnly } from '../../common/decorators/auth.decorators.js';
import { ApiErrors, KEYED_ROUTE_ERRORS } from '../../common/swagger/api-errors.decorator.js';
import { ADMIN_KEY_SCHEME } from '../../common/swagger/security-schemes.js';
import { ChannelsService } from './channels.service.js';
import { ProtocolDto } from './dto/protocol.dto.js';

@ApiTags('admin')
@ApiBearerAuth(ADMIN_KEY_SCHEME)
@AdminOnly()
@ApiErrors([...KEYED_ROUTE_ERRORS, 'FORBIDDEN'])
@Controller('admin/protocols')
export class AdminProtocolsController {
  constructor(private readonly channels: ChannelsService) {}

  @Get()
  @ApiOperation({ operationId: 'listProtocols', summary: 'The protocols a channel may speak', description: "Each vendor the gateway knows: what it serves, the credentials a channel of it needs and what its base_url is. The console's channel form reads it." })
  @ApiOkResponse({ type: ProtocolDto, isArray: true })
  list(): ProtocolDto[] {
    return this.channels.protocols();
  }
}
