import { Controller, Get } from '@nestjs/common';
import { ApiBearerAuth, ApiExtraModels, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import type { Principal } from '../../common/auth/credential.js';
import { CurrentPrincipal } from '../../common/decorators/auth.decorators.js';
import { ApiErrors, KEYED_ROUTE_ERRORS } from '../../common/swagger/api-errors.decorator.js';
import { API_KEY_SCHEME } from '../../common/swagger/security-schemes.js';
import { OperationUsageDto, UsageDto } from './dto/usage.dto.js';
import { UsageService } from './usage.service.js';

@ApiTags('usage')
@ApiExtraModels(OperationUsageDto)
@ApiBearerAuth(API_KEY_SCHEME)
@Controller('usage')
export class UsageController {
  constructor(private readonly usage: UsageService) {}

  @Get()
  @ApiOperation({ operationId: 'getUsage', summary: 'Your usage this month', description: 'Per operation: tasks accepted, succeeded and failed, credits charged and refunded; and your credits left.' })
  @ApiOkResponse({ type: UsageDto })
  @ApiErrors(KEYED_ROUTE_ERRORS)
  get(@CurrentPrincipal() principal: Principal): Promise<UsageDto> {
    return this.usage.ownUsage(principal.owner);
  }
}
