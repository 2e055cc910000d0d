import { Body, Controller, Get, HttpCode, Param, Post } from '@nestjs/common';
import { ApiBearerAuth, ApiBody, ApiExtraModels, ApiOkResponse, ApiOperation, ApiParam, ApiTags, getSchemaPath } from '@nestjs/swagger';
import type { Principal } from '../../common/auth/credential.js';
import { CurrentPrincipal } from '../../common/decorators/auth.decorators.js';
import { ApiErrors, KEYED_ROUTE_ERRORS } from '../../common/swagger/api-errors.decorator.js';
import { API_KEY_SCHEME } from '../../common/swagger/security-schemes.js';
import { LyricsTaskDto } from './dto/lyrics-task.dto.js';
import { FetchMusicTasksDto, MusicTaskDto, MusicTaskListResultDto, MusicTaskResultDto } from './dto/music-task.dto.js';
import { MusicFetchService } from './suno-fetch.service.js';

/** A task's record: a music, concat or upload task's with its clips, or a lyrics task's (action LYRICS) with its lyrics. */
const TASK_RECORD = { oneOf: [{ $ref: getSchemaPath(MusicTaskDto) }, { $ref: getSchemaPath(LyricsTaskDto) }] };

@ApiTags('music')
@ApiBearerAuth(API_KEY_SCHEME)
@ApiExtraModels(MusicTaskDto, LyricsTaskDto)
@Controller('music-a/fetch')
export class MusicFetchController {
  constructor(private readonly fetch: MusicFetchService) {}

  @Get(':task_id')
  @ApiOperation({
    operationId: 'fetchMusicTask',
    summary: 'Get a music, concat, upload or lyrics task',
    description:
      'The task as Suno-style aggregators give it: status, times, progress and its clips (audio, cover, duration, chain). An upload id is also a task id: its one clip has that same id. ' +
      "A lyrics task (action LYRICS) holds its lyrics in data ({id, text, title, status}), as new-api answers it.",
  })
  @ApiParam({ name: 'task_id', format: 'uuid' })
  @ApiOkResponse({ schema: { type: 'object', required: ['code', 'message', 'data'], properties: { code: { type: 'string', example: 'success' }, message: { type: 'string', example: '' }, data: TASK_RECORD } } })
  @ApiErrors([...KEYED_ROUTE_ERRORS, 'NOT_FOUND', 'INVALID_PARAMETER'], { stringCodes: true })
  fetchOne(@CurrentPrincipal() principal: Principal, @Param('task_id') id: string): Promise<MusicTaskResultDto> {
    return this.fetch.fetchOne(principal, id);
  }

  @Post()
  @HttpCode(200)
  @ApiOperation({ operationId: 'fetchMusicTasks', summary: 'Get several music, concat, upload or lyrics tasks', description: 'In the order asked; ids that are not your tasks are left out.' })
  @ApiBody({ type: FetchMusicTasksDto, examples: { ids: { summary: 'Ids to look up (an unknown one is left out: this answers an empty list)', value: { ids: ['5b6c7d8e-9f0a-4b1c-8d2e-3f4a5b6c7d8e'] } } } })
  @ApiOkResponse({ schema: { type: 'object', required: ['code', 'message', 'data'], properties: { code: { type: 'string', example: 'success' }, message: { type: 'string', example: '' }, data: { type: 'array', items: TASK_RECORD, description: 'The tasks found, in the order asked; unknown ids are left out.' } } } })
  @ApiErrors([...KEYED_ROUTE_ERRORS, 'INVALID_REQUEST', 'INVALID_PARAMETER'], { stringCodes: true })
  fetchMany(@CurrentPrincipal() principal: Principal, @Body() body: FetchMusicTasksDto): Promise<MusicTaskListResultDto> {
    return this.fetch.fetchMany(principal, body.ids);
  }
}
