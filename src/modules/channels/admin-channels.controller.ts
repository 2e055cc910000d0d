import { Body, Controller, Delete, Get, HttpCode, Param, Patch, Post } from '@nestjs/common';
import { ApiBearerAuth, ApiCreatedResponse, ApiOkResponse, ApiOperation, ApiParam, ApiTags } from '@nestjs/swagger';
import { AdminOnly } from '../../common/decorators/auth.decorators.js';
import { ApiErrors, KEYED_ROUTE_ERRORS } from '../../common/swagger/api-errors.decorator.js';
import { ADMIN_KEY_SCHEME } from '../../common/swagger/security-schemes.js';
import { ChannelsService } from './channels.service.js';
import { ChannelDto, ChannelTestDto, CreateChannelDto, UpdateChannelDto } from './dto/channel.dto.js';

@ApiTags('admin')
@ApiBearerAuth(ADMIN_KEY_SCHEME)
@AdminOnly()
@ApiErrors([...KEYED_ROUTE_ERRORS, 'FORBIDDEN', 'NOT_FOUND'])
@Controller('admin/channels')
export class AdminChannelsController {
  constructor(private readonly channels: ChannelsService) {}

  @Post()
  @ApiOperation({ operationId: 'createChannel', summary: 'Add an upstream channel', description: 'A provider account new tasks of its operations may go to. Credentials are write-only (sealed with CHANNEL_SECRET_KEY; answers show their last 4 characters).' })
  @ApiCreatedResponse({ type: ChannelDto })
  @ApiErrors(['INVALID_REQUEST', 'INVALID_PARAMETER', 'CONFLICT'])
  create(@Body() body: CreateChannelDto): Promise<ChannelDto> {
    return this.channels.createChannel(body);
  }

  @Get()
  @ApiOperation({ operationId: 'listChannels', summary: 'List the channels', description: 'Highest priority first; the channels RELAY_<OP>_URL defines are listed like the others (source: config).' })
  @ApiOkResponse({ type: ChannelDto, isArray: true })
  list(): Promise<ChannelDto[]> {
    return this.channels.listChannels();
  }

  @Get(':id')
  @ApiOperation({ operationId: 'getChannel', summary: 'Get a channel' })
  @ApiParam({ name: 'id', format: 'uuid' })
  @ApiOkResponse({ type: ChannelDto })
  get(@Param('id') id: string): Promise<ChannelDto> {
    return this.channels.getChannel(id);
  }

  @Patch(':id')
  @ApiOperation({ operationId: 'updateChannel', summary: 'Change a channel', description: 'Any of its fields; credentials, when given, replace the stored ones. Running tasks keep the channel they hold.' })
  @ApiParam({ name: 'id', format: 'uuid' })
  @ApiOkResponse({ type: ChannelDto })
  @ApiErrors(['INVALID_REQUEST', 'INVALID_PARAMETER', 'CONFLICT'])
  update(@Param('id') id: string, @Body() body: UpdateChannelDto): Promise<ChannelDto> {
    return this.channels.updateChannel(id, body);
  }

  @Post(':id/enable')
  @HttpCode(200)
  @ApiOperation({ operationId: 'enableChannel', summary: 'Enable a channel', description: 'New tasks may go to it again.' })
  @ApiParam({ name: 'id', format: 'uuid' })
  @ApiOkResponse({ type: ChannelDto })
  enable(@Param('id') id: string): Promise<ChannelDto> {
    return this.channels.setEnabled(id, true);
  }

  @Post(':id/disable')
  @HttpCode(200)
  @ApiOperation({ operationId: 'disableChannel', summary: 'Disable a channel', description: 'No new task goes to it; the tasks it holds finish on it, with its credentials.' })
  @ApiParam({ name: 'id', format: 'uuid' })
  @ApiOkResponse({ type: ChannelDto })
  disable(@Param('id') id: string): Promise<ChannelDto> {
    return this.channels.setEnabled(id, false);
  }

  @Post(':id/test')
  @HttpCode(200)
  @ApiOperation({
    operationId: 'testChannel',
    summary: 'Test a channel',
    description: "A cheap real call with its credentials (the upstream's task list, one per page). A pass brings an auto-disabled channel back; a refusal of its credentials or credit auto-disables it; one an admin disabled stays disabled.",
  })
  @ApiParam({ name: 'id', format: 'uuid' })
  @ApiOkResponse({ type: ChannelTestDto })
  test(@Param('id') id: string): Promise<ChannelTestDto> {
    return this.channels.testChannel(id);
  }

  @Delete(':id')
  @HttpCode(200)
  @ApiOperation({ operationId: 'deleteChannel', summary: 'Delete a channel', description: '409 while it holds unfinished tasks (disable it first; delete it once they ended). Finished tasks keep naming it.' })
  @ApiParam({ name: 'id', format: 'uuid' })
  @ApiOkResponse({ type: ChannelDto, description: 'The deleted channel.' })
  @ApiErrors(['CONFLICT'])
  remove(@Param('id') id: string): Promise<ChannelDto> {
    return this.channels.deleteChannel(id);
  }
}
