import { Controller, HttpCode, Param, Post } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { Public } from '../../common/decorators/auth.decorators.js';
import { IgnoresBody } from '../../common/http/json-body.guard.js';
import { ApiErrors } from '../../common/swagger/api-errors.decorator.js';
import { UPSTREAM_CALLBACK_PATH } from '../channels/upstream-callback-urls.js';
import { UpstreamCallbackAnswerDto, UpstreamCallbackParamsDto } from './dto/upstream-callback.dto.js';
import { UpstreamCallbacksService } from './upstream-callbacks.service.js';

@ApiTags('upstream callbacks')
@Public()
@Controller(UPSTREAM_CALLBACK_PATH.slice(1))
export class UpstreamCallbacksController {
  constructor(private readonly callbacks: UpstreamCallbacksService) {}

  @Post(':task_id/:token')
  @HttpCode(200)
  @IgnoresBody()
  @ApiOperation({
    operationId: 'receiveUpstreamCallback',
    summary: "An upstream's callback about a task relayed to it",
    description:
      'The URL each relayed create gives the upstream (Kling\'s, Luma\'s and Seedance\'s `callback_url`, Black Forest Labs\' `webhook_url`, the aggregators\' `notify_hook`) when UPSTREAM_CALLBACK_BASE_URL is set. ' +
      "Its body is never read nor trusted: a callback makes the gateway ask the task's upstream now, with the channel's credentials. A token that does not match answers 404.",
  })
  @ApiOkResponse({ type: UpstreamCallbackAnswerDto })
  @ApiErrors(['INVALID_PARAMETER', 'NOT_FOUND', 'INVALID_REQUEST', 'INTERNAL', 'UNAVAILABLE'])
  receive(@Param() params: UpstreamCallbackParamsDto): Promise<UpstreamCallbackAnswerDto> {
    return this.callbacks.receive(params.task_id, params.token);
  }
}
