import { Body, Controller, Get, HttpCode, Param, Post } from '@nestjs/common';
import { ApiBearerAuth, ApiBody, ApiOkResponse, ApiOperation, ApiParam, ApiTags } from '@nestjs/swagger';
import type { Principal } from '../../common/auth/credential.js';
import { CurrentPrincipal } from '../../common/decorators/auth.decorators.js';
import { ApiErrors, KEYED_ROUTE_ERRORS } from '../../common/swagger/api-errors.decorator.js';
import { API_KEY_SCHEME } from '../../common/swagger/security-schemes.js';
import { FetchMusicTasksDto, MusicTaskListResultDto, MusicTaskResultDto } from './dto/music-task.dto.js';
import { MusicFetchService } from './suno-fetch.service.js';

@ApiTags('music')
@ApiBearerAuth(API_KEY_SCHEME)
@Controller('music-a/fetch')
export class MusicFetchController {
  constructor(private readonly fetch: MusicFetchService) {}

  @Get(':task_id')
  @ApiOperation({
    operationId: 'fetchMusicTask',
    summary: 'Get a music, concat or upload task',
    description: 'The task as Suno-style aggregators give it: status, times, progress and its clips (audio, cover, duration, chain). An upload id is also a task id: its one clip has that same id.',
  })
  @ApiParam({ name: 'task_id', format: 'uuid' })
  @ApiOkResponse({ type: MusicTaskResultDto })
  @ApiErrors([...KEYED_ROUTE_ERRORS, 'NOT_FOUND', 'INVALID_PARAMETER'], { stringCodes: true })
  fetchOne(@CurrentPrincipal() principal: Principal, @Param('task_id') id: string): Promise<MusicTaskResultDto> {
    return this.fetch.fetchOne(principal, id);
  }

  @Post()
  @HttpCode(200)
  @ApiOperation({ operationId: 'fetchMusicTasks', summary: 'Get several music, concat or upload tasks', description: 'In the order asked; ids that are not your tasks are left out.' })
  @ApiBody({ type: FetchMusicTasksDto, examples: { ids: { summary: 'Ids to look up (an unknown one is left out: this answers an empty list)', value: { ids: ['5b6c7d8e-9f0a-4b1c-8d2e-3f4a5b6c7d8e'] } } } })
  @ApiOkResponse({ type: MusicTaskListResultDto })
  @ApiErrors([...KEYED_ROUTE_ERRORS, 'INVALID_REQUEST', 'INVALID_PARAMETER'], { stringCodes: true })
  fetchMany(@CurrentPrincipal() principal: Principal, @Body() body: FetchMusicTasksDto): Promise<MusicTaskListResultDto> {
    return this.fetch.fetchMany(principal, body.ids);
  }
}
