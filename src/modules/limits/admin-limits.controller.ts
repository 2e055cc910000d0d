import { Body, Controller, Get, Param, Put, Query } from '@nestjs/common';
import { ApiBearerAuth, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { AdminOnly } from '../../common/decorators/auth.decorators.js';
import { ApiErrors, KEYED_ROUTE_ERRORS } from '../../common/swagger/api-errors.decorator.js';
import { ADMIN_KEY_SCHEME } from '../../common/swagger/security-schemes.js';
import { OwnerParamDto } from '../../common/validation/owner.js';
import { OwnerLimitsDto, SetLimitsDto } from './dto/limits.dto.js';
import { AdminUsageDto, AdminUsageQueryDto } from './dto/usage.dto.js';
import { UsageService } from './usage.service.js';

@ApiTags('admin')
@ApiBearerAuth(ADMIN_KEY_SCHEME)
@AdminOnly()
@ApiErrors([...KEYED_ROUTE_ERRORS, 'FORBIDDEN', 'NOT_FOUND', 'INVALID_PARAMETER'])
@Controller('admin')
export class AdminLimitsController {
  constructor(private readonly usage: UsageService) {}

  @Put('owners/:owner/limits')
  @ApiOperation({
    operationId: 'setOwnerLimits',
    summary: "Set an owner's limits",
    description:
      'Replaces them: a field given as a number is the limit, null is unlimited, a field left out is the default (DEFAULT_* settings). ' +
      'Every instance applies the new limits from the next request.',
  })
  @ApiOkResponse({ type: OwnerLimitsDto })
  set(@Param() { owner }: OwnerParamDto, @Body() body: SetLimitsDto): Promise<OwnerLimitsDto> {
    return this.usage.setOwnerLimits(owner, body);
  }

  @Get('owners/:owner/limits')
  @ApiOperation({ operationId: 'getOwnerLimits', summary: "Read an owner's limits, with current usage" })
  @ApiOkResponse({ type: OwnerLimitsDto })
  get(@Param() { owner }: OwnerParamDto): Promise<OwnerLimitsDto> {
    return this.usage.ownerLimits(owner);
  }

  @Get('usage')
  @ApiOperation({ operationId: 'getUsageByDay', summary: 'Usage per owner and day', description: 'Tasks accepted, succeeded and failed, and credits charged and refunded, by the day (UTC) the tasks were created.' })
  @ApiOkResponse({ type: AdminUsageDto })
  usageByDay(@Query() query: AdminUsageQueryDto): Promise<AdminUsageDto> {
    return this.usage.adminUsage(query);
  }
}
