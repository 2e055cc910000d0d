import { Controller, Get, Param, Query } from '@nestjs/common';
import { ApiBearerAuth, ApiOkResponse, ApiOperation, ApiParam, ApiTags } from '@nestjs/swagger';
import { CurrentViewer, KeyOrAdmin, type Viewer } from '../../common/decorators/auth.decorators.js';
import { RequestBaseUrl } from '../../common/decorators/request.decorators.js';
import { ApiErrors, KEYED_ROUTE_ERRORS } from '../../common/swagger/api-errors.decorator.js';
import { ADMIN_KEY_SCHEME, API_KEY_SCHEME } from '../../common/swagger/security-schemes.js';
import { CallbackListDto } from '../callbacks/dto/callback.dto.js';
import { ListTasksQueryDto } from './dto/list-tasks.dto.js';
import { TaskDetailDto, TaskPageDto } from './dto/task-summary.dto.js';
import { TaskListService } from './task-list.service.js';

@ApiTags('tasks')
@ApiBearerAuth(API_KEY_SCHEME)
@ApiBearerAuth(ADMIN_KEY_SCHEME)
@KeyOrAdmin()
@ApiErrors(KEYED_ROUTE_ERRORS)
@Controller('tasks')
export class TaskListController {
  constructor(private readonly tasks: TaskListService) {}

  @Get()
  @ApiOperation({
    operationId: 'listTasks',
    summary: 'List tasks of every operation, newest first',
    description:
      "With an API key, your owner's tasks; with the admin key, every owner's (filter with owner). Filters combine; paging is by cursor: " +
      'pass next_cursor for the next page (the same cost at any depth). A team key naming another owner gets 403.',
  })
  @ApiOkResponse({ type: TaskPageDto })
  @ApiErrors(['INVALID_PARAMETER', 'FORBIDDEN'])
  list(@CurrentViewer() viewer: Viewer, @Query() query: ListTasksQueryDto): Promise<TaskPageDto> {
    return this.tasks.page(viewer, query);
  }

  @Get(':id/callbacks')
  @ApiOperation({ operationId: 'listTaskCallbacks', summary: "A task's callback deliveries, whatever its operation", description: 'Each notification sent to its callback_url (its webhook-id, state) with every attempt: time, HTTP status, duration, error.' })
  @ApiParam({ name: 'id', format: 'uuid' })
  @ApiOkResponse({ type: CallbackListDto })
  @ApiErrors(['NOT_FOUND', 'INVALID_PARAMETER'])
  callbacks(@CurrentViewer() viewer: Viewer, @Param('id') id: string): Promise<CallbackListDto> {
    return this.tasks.callbackLog(viewer, id);
  }

  @Get(':id')
  @ApiOperation({
    operationId: 'getTask',
    summary: 'One task of any operation: its states, files and record',
    description: "Its summary, the times of its states, its files as signed links, and its operation's own record (as record_path answers it). An API key sees its own owner's tasks (another's answers 404); the admin key any.",
  })
  @ApiParam({ name: 'id', format: 'uuid' })
  @ApiOkResponse({ type: TaskDetailDto })
  @ApiErrors(['NOT_FOUND', 'INVALID_PARAMETER'])
  get(@CurrentViewer() viewer: Viewer, @Param('id') id: string, @RequestBaseUrl() base?: string): Promise<TaskDetailDto> {
    return this.tasks.detail(viewer, id, base);
  }
}
