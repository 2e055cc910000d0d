import { Body, Controller, Get, HttpCode, Param, Post, Query } from '@nestjs/common';
import { ApiBearerAuth, ApiBody, ApiOkResponse, ApiOperation, ApiParam, ApiTags } from '@nestjs/swagger';
import type { Principal } from '../../common/auth/credential.js';
import { CurrentPrincipal } from '../../common/decorators/auth.decorators.js';
import { RequestBaseUrl, RequestId } from '../../common/decorators/request.decorators.js';
import { Base64Json } from '../../common/http/base64-json.js';
import { KLING_BODY_LIMIT_BYTES } from './kling-image-input.js';
import { IMAGE_RULES } from '../../modules/expand/image-rules.js';
import { BodyLimit, StreamedBase64Field } from '../../common/http/json-body.guard.js';
import { ADMISSION_ERRORS, ApiErrors, KEYED_ROUTE_ERRORS } from '../../common/swagger/api-errors.decorator.js';
import { SAMPLE_EXAMPLE_NOTE, sampleUrl } from '../../common/swagger/samples.js';
import { CallbackListEnvelopeDto } from '../../modules/callbacks/dto/callback.dto.js';
import { CreateExpandTaskDto } from './dto/create-expand-task.dto.js';
import { EXAMPLE_IMAGE_BASE64 } from './dto/example-image.js';
import { ExpandTaskDetailEnvelopeDto, ExpandTaskEnvelopeDto, ExpandTaskListEnvelopeDto } from './dto/expand-task.dto.js';
import { ListExpandTasksQueryDto } from './dto/kling-page-query.dto.js';
import { ExpandService } from './kling-expand.service.js';
import { API_KEY_SCHEME } from '../../common/swagger/security-schemes.js';

export const EXPAND_PATH = 'video-a/v1/images/editing/expand';

@ApiTags('image expand')
@ApiBearerAuth(API_KEY_SCHEME)
@Controller(EXPAND_PATH)
export class ExpandController {
  constructor(private readonly expand: ExpandService) {}

  @Post()
  @HttpCode(200)
  @BodyLimit(KLING_BODY_LIMIT_BYTES)
  @StreamedBase64Field('image', IMAGE_RULES.maxBytes)
  @ApiOperation({
    operationId: 'createExpandTask',
    summary: 'Expand an image (outpainting)',
    description:
      'Creates a task that extends the image outward on four sides, optionally guided by a prompt. The body may be up to 20 MB ' +
      '(a 10 MB image is about 13.4 MB as Base64). Rules: ratios in [0, 2]; new area at most 3 times the original; prompt at most 2500 characters; n from 1 to 9. ' +
      'An empty string in an optional field means it is absent, as in Kling\'s documented bodies. ' +
      'The task then runs: submitted → processing → succeed | failed; read it with GET …/expand/{task_id}. ' +
      SAMPLE_EXAMPLE_NOTE,
  })
  @ApiBody({
    type: CreateExpandTaskDto,
    examples: {
      base64: {
        summary: 'Base64 image',
        value: { image: EXAMPLE_IMAGE_BASE64, up_expansion_ratio: 0.25, bottom_expansion_ratio: 0.25, left_expansion_ratio: 0.25, right_expansion_ratio: 0.25, prompt: 'a wide sunny meadow', n: '2' },
      },
      url: {
        summary: 'Image URL (a sample this service serves), with a watermarked copy',
        value: { image: sampleUrl('photo.png'), up_expansion_ratio: 0.5, bottom_expansion_ratio: 0.5, left_expansion_ratio: 0, right_expansion_ratio: 0, watermark_info: { enabled: true } },
      },
      kling: {
        summary: "Kling's documented body: down_expansion_ratio and empty strings for absent fields",
        value: { image: sampleUrl('photo.png'), up_expansion_ratio: 0.1, down_expansion_ratio: 0.1, left_expansion_ratio: 0.2, right_expansion_ratio: 0.2, prompt: '', n: 2, callback_url: '', external_task_id: '' },
      },
    },
  })
  @ApiOkResponse({ type: ExpandTaskEnvelopeDto, description: 'The task, created with task_status "submitted".' })
  @ApiErrors([...KEYED_ROUTE_ERRORS, ...ADMISSION_ERRORS, 'INVALID_PARAMETER', 'CONFLICT'])
  create(@CurrentPrincipal() principal: Principal, @RequestId() requestId: string, @Body() body: CreateExpandTaskDto, @RequestBaseUrl() base?: string): Promise<ExpandTaskEnvelopeDto | Base64Json> {
    return this.expand.createTask(principal, requestId, body, base);
  }

  @Get()
  @ApiOperation({ operationId: 'listExpandTasks', summary: 'List your expand tasks, newest first' })
  @ApiOkResponse({ type: ExpandTaskListEnvelopeDto })
  @ApiErrors([...KEYED_ROUTE_ERRORS, 'INVALID_PARAMETER'])
  list(@CurrentPrincipal() principal: Principal, @RequestId() requestId: string, @Query() query: ListExpandTasksQueryDto): Promise<ExpandTaskListEnvelopeDto> {
    return this.expand.listTasks(principal, requestId, query);
  }

  @Get(':id/callbacks')
  @ApiOperation({
    operationId: 'listExpandTaskCallbacks',
    summary: "A task's callback notifications",
    description: 'Each status notification sent to callback_url (its webhook-id, state) with every attempt: time, HTTP status, duration, error.',
  })
  @ApiParam({ name: 'id', description: 'task_id or external_task_id' })
  @ApiOkResponse({ type: CallbackListEnvelopeDto })
  @ApiErrors([...KEYED_ROUTE_ERRORS, 'NOT_FOUND', 'INVALID_PARAMETER'])
  callbacks(@CurrentPrincipal() principal: Principal, @RequestId() requestId: string, @Param('id') id: string): Promise<CallbackListEnvelopeDto> {
    return this.expand.listCallbacks(principal, requestId, id);
  }

  @Get(':id')
  @ApiOperation({ operationId: 'getExpandTask', summary: 'Query an expand task', description: 'By task_id, or by your external_task_id. Result images are signed links that need no key.' })
  @ApiParam({ name: 'id', description: 'task_id or external_task_id' })
  @ApiOkResponse({ type: ExpandTaskDetailEnvelopeDto })
  @ApiErrors([...KEYED_ROUTE_ERRORS, 'NOT_FOUND', 'INVALID_PARAMETER'])
  get(@CurrentPrincipal() principal: Principal, @RequestId() requestId: string, @Param('id') id: string): Promise<ExpandTaskDetailEnvelopeDto> {
    return this.expand.getTask(principal, requestId, id);
  }
}
