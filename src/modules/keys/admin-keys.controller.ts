import { Body, Controller, Delete, Get, HttpCode, Param, Post, Query } from '@nestjs/common';
import { ApiBearerAuth, ApiCreatedResponse, ApiOkResponse, ApiOperation, ApiParam, ApiTags } from '@nestjs/swagger';
import { AdminOnly } from '../../common/decorators/auth.decorators.js';
import { OwnerQueryDto } from '../../common/validation/owner.js';
import { ApiErrors, KEYED_ROUTE_ERRORS } from '../../common/swagger/api-errors.decorator.js';
import { CreateKeyDto } from './dto/create-key.dto.js';
import { CreatedKeyDto, KeyDto } from './dto/key.dto.js';
import { KeysService } from './keys.service.js';
import { ADMIN_KEY_SCHEME } from '../../common/swagger/security-schemes.js';

@ApiTags('admin')
@ApiBearerAuth(ADMIN_KEY_SCHEME)
@AdminOnly()
@ApiErrors([...KEYED_ROUTE_ERRORS, 'FORBIDDEN', 'NOT_FOUND'])
@Controller('admin/keys')
export class AdminKeysController {
  constructor(private readonly keys: KeysService) {}

  @Post()
  @ApiOperation({ operationId: 'createApiKey', summary: 'Create an API key', description: 'Needs ADMIN_API_KEY. The answer is the only time the plaintext key is shown. Without ADMIN_API_KEY configured, every /admin route answers 404.' })
  @ApiCreatedResponse({ type: CreatedKeyDto })
  @ApiErrors(['INVALID_PARAMETER'])
  create(@Body() body: CreateKeyDto): Promise<CreatedKeyDto> {
    return this.keys.createKey(body);
  }

  @Get()
  @ApiOperation({ operationId: 'listApiKeys', summary: 'List API keys (without secrets), newest first' })
  @ApiOkResponse({ type: KeyDto, isArray: true })
  @ApiErrors(['INVALID_PARAMETER'])
  list(@Query() query: OwnerQueryDto): Promise<KeyDto[]> {
    return this.keys.listKeys(query.owner);
  }

  @Delete(':id')
  @HttpCode(200)
  @ApiOperation({ operationId: 'revokeApiKey', summary: 'Revoke an API key', description: 'The key stops working within AUTH_CACHE_TTL_MS (2 s by default) on every instance. Revoking twice keeps the first time.' })
  @ApiParam({ name: 'id', format: 'uuid' })
  @ApiOkResponse({ type: KeyDto, description: 'The revoked key.' })
  revoke(@Param('id') id: string): Promise<KeyDto> {
    return this.keys.revokeKey(id);
  }
}
