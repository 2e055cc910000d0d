import { Controller, Get, Param } from '@nestjs/common';
import { ApiBearerAuth, ApiOkResponse, ApiOperation, ApiParam, ApiTags } from '@nestjs/swagger';
import { AdminOnly } from '../../common/decorators/auth.decorators.js';
import { ApiErrors, KEYED_ROUTE_ERRORS } from '../../common/swagger/api-errors.decorator.js';
import { ADMIN_KEY_SCHEME } from '../../common/swagger/security-schemes.js';
import { ChannelsService } from './channels.service.js';
import { TaskAttemptDto } from './dto/channel.dto.js';

@ApiTags('admin')
@ApiBearerAuth(ADMIN_KEY_SCHEME)
@AdminOnly()
@ApiErrors([...KEYED_ROUTE_ERRORS, 'FORBIDDEN', 'NOT_FOUND'])
@Controller('admin/tasks')
export class AdminTaskAttemptsController {
  constructor(private readonly channels: ChannelsService) {}

  @Get(':id/attempts')
  @ApiOperation({ operationId: 'listTaskAttempts', summary: "A task's upstream attempts", description: 'Every create request the task sent to a channel, oldest first, and what came of it. The caller saw one task whatever happened here.' })
  @ApiParam({ name: 'id', format: 'uuid' })
  @ApiOkResponse({ type: TaskAttemptDto, isArray: true })
  list(@Param('id') id: string): Promise<TaskAttemptDto[]> {
    return this.channels.attemptsOf(id);
  }
}
