import { Body, Controller, Get, HttpCode, Param, Post, Query } from '@nestjs/common';
import { ApiBearerAuth, ApiBody, ApiOkResponse, ApiOperation, ApiParam, ApiTags } from '@nestjs/swagger';
import type { Principal } from '../../common/auth/credential.js';
import { CurrentPrincipal } from '../../common/decorators/auth.decorators.js';
import { RequestBaseUrl, RequestId } from '../../common/decorators/request.decorators.js';
import { BodyLimit, StreamedBase64Field } from '../../common/http/json-body.guard.js';
import { ADMISSION_ERRORS, ApiErrors, KEYED_ROUTE_ERRORS } from '../../common/swagger/api-errors.decorator.js';
import { SAMPLE_EXAMPLE_NOTE, sampleUrl } from '../../common/swagger/samples.js';
import { API_KEY_SCHEME } from '../../common/swagger/security-schemes.js';
import { CallbackListEnvelopeDto } from '../../modules/callbacks/dto/callback.dto.js';
import { ListExpandTasksQueryDto } from './dto/kling-page-query.dto.js';
import { KLING_BODY_LIMIT_BYTES } from './kling-image-input.js';
import { IMAGE_RULES } from '../../modules/expand/image-rules.js';
import { CreateKlingImageDto } from './dto/create-kling-image.dto.js';
import { KlingImageTaskDetailEnvelopeDto, KlingImageTaskEnvelopeDto, KlingImageTaskListEnvelopeDto } from './dto/kling-image-task.dto.js';
import { KlingImagesService } from './kling-images.service.js';

/** Kling's image generation, beside expand under the Kling-style prefix. */
@ApiTags('image generation')
@ApiBearerAuth(API_KEY_SCHEME)
@Controller('video-a/v1/images/generations')
export class KlingImagesController {
  constructor(private readonly images: KlingImagesService) {}

  @Post()
  @HttpCode(200)
  @BodyLimit(KLING_BODY_LIMIT_BYTES)
  @StreamedBase64Field('image', IMAGE_RULES.maxBytes)
  @ApiOperation({
    operationId: 'createKlingImageTask',
    summary: 'Generate images (Kling images/generations)',
    description:
      "Kling's image task: submitted → processing → succeed | failed, read with GET …/generations/{task_id or external_task_id}, its record POSTed to callback_url at each change. Any configured image model that makes what is asked may make it (a request naming no model prefers Kling's). The body may be up to 20 MB (a 10 MB image as Base64). " +
      SAMPLE_EXAMPLE_NOTE,
  })
  @ApiBody({
    type: CreateKlingImageDto,
    examples: {
      text: { summary: 'A prompt', value: { prompt: 'A Pixar-style puppy in a garden', n: 2, aspect_ratio: '16:9' } },
      reference: { summary: 'With a reference image (a sample this service serves)', value: { prompt: 'The same scene in winter', image: sampleUrl('photo.png'), aspect_ratio: '3:2' } },
    },
  })
  @ApiOkResponse({ type: KlingImageTaskEnvelopeDto, description: 'The task, created with task_status "submitted".' })
  @ApiErrors([...KEYED_ROUTE_ERRORS, ...ADMISSION_ERRORS, 'INVALID_PARAMETER', 'CONFLICT'])
  create(@CurrentPrincipal() principal: Principal, @RequestId() requestId: string, @Body() body: CreateKlingImageDto, @RequestBaseUrl() base?: string): Promise<KlingImageTaskEnvelopeDto> {
    return this.images.create(principal, requestId, body, base);
  }

  @Get()
  @ApiOperation({ operationId: 'listKlingImageTasks', summary: 'List your image tasks, newest first', description: 'Every image task of yours, whichever door made it; `external_task_id` picks one.' })
  @ApiOkResponse({ type: KlingImageTaskListEnvelopeDto })
  @ApiErrors([...KEYED_ROUTE_ERRORS, 'INVALID_PARAMETER'])
  list(@CurrentPrincipal() principal: Principal, @RequestId() requestId: string, @Query() query: ListExpandTasksQueryDto): Promise<KlingImageTaskListEnvelopeDto> {
    return this.images.list(principal, requestId, query);
  }

  @Get(':id/callbacks')
  @ApiOperation({ operationId: 'listKlingImageTaskCallbacks', summary: "An image task's callback notifications", description: 'Each status notification sent to callback_url with every attempt.' })
  @ApiParam({ name: 'id', description: 'task_id or external_task_id' })
  @ApiOkResponse({ type: CallbackListEnvelopeDto })
  @ApiErrors([...KEYED_ROUTE_ERRORS, 'NOT_FOUND', 'INVALID_PARAMETER'])
  callbacks(@CurrentPrincipal() principal: Principal, @RequestId() requestId: string, @Param('id') id: string): Promise<CallbackListEnvelopeDto> {
    return this.images.listCallbacks(principal, requestId, id);
  }

  @Get(':id')
  @ApiOperation({ operationId: 'getKlingImageTask', summary: 'Query an image task', description: 'By task_id, or by your external_task_id. Images are signed links to the stored copies that need no key.' })
  @ApiParam({ name: 'id', description: 'task_id or external_task_id' })
  @ApiOkResponse({ type: KlingImageTaskDetailEnvelopeDto })
  @ApiErrors([...KEYED_ROUTE_ERRORS, 'NOT_FOUND', 'INVALID_PARAMETER'])
  get(@CurrentPrincipal() principal: Principal, @RequestId() requestId: string, @Param('id') id: string): Promise<KlingImageTaskDetailEnvelopeDto> {
    return this.images.get(principal, requestId, id);
  }
}
