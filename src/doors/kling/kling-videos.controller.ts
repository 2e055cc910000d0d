import { Body, Controller, Get, HttpCode, Param, Post, Query } from '@nestjs/common';
import { ApiBearerAuth, ApiBody, ApiOkResponse, ApiOperation, ApiParam, ApiTags } from '@nestjs/swagger';
import type { Principal } from '../../common/auth/credential.js';
import { CurrentPrincipal } from '../../common/decorators/auth.decorators.js';
import { RequestBaseUrl, RequestId } from '../../common/decorators/request.decorators.js';
import { BodyLimit } from '../../common/http/json-body.guard.js';
import { ADMISSION_ERRORS, ApiErrors, KEYED_ROUTE_ERRORS } from '../../common/swagger/api-errors.decorator.js';
import { SAMPLE_EXAMPLE_NOTE, sampleUrl } from '../../common/swagger/samples.js';
import { API_KEY_SCHEME } from '../../common/swagger/security-schemes.js';
import { ListExpandTasksQueryDto } from './dto/kling-page-query.dto.js';
import { CreateKlingImageToVideoDto, CreateKlingMultiImageToVideoDto, CreateKlingTextToVideoDto, KLING_IMAGE_LIST_MAX, KlingVideoTaskEnvelopeDto, KlingVideoTaskListEnvelopeDto } from './dto/kling-video.dto.js';
import { KlingVideosService } from './kling-videos.service.js';

/** Two Base64 images of 10 MB (about 13.4 MB each as Base64) and the rest. */
const KLING_VIDEO_BODY_LIMIT_BYTES = 28 * 1024 * 1024;
/** As many as image_list takes (four), likewise. */
const KLING_MULTI_BODY_LIMIT_BYTES = KLING_IMAGE_LIST_MAX * 14 * 1024 * 1024;
const CREATE_ERRORS = [...KEYED_ROUTE_ERRORS, ...ADMISSION_ERRORS, 'INVALID_PARAMETER', 'CONFLICT'] as const;
const READ_ERRORS = [...KEYED_ROUTE_ERRORS, 'NOT_FOUND'] as const;
const FLOW = 'The task then runs: submitted → processing → succeed | failed; read it with GET …/{task_id or external_task_id}. ';

/**
 * Kling's video API under `video-a`, beside its expand: a Kling video client changes only its base URL
 * and key. The same video generations as the Luma and OpenAI-style doors.
 */
@ApiTags('video generation Kling-style')
@ApiBearerAuth(API_KEY_SCHEME)
@Controller('video-a/v1/videos')
export class KlingVideosController {
  constructor(private readonly videos: KlingVideosService) {}

  @Post('text2video')
  @HttpCode(200)
  @ApiOperation({ operationId: 'createKlingTextToVideo', summary: 'Create a video from a prompt (Kling text2video)', description: FLOW + SAMPLE_EXAMPLE_NOTE })
  @ApiBody({
    type: CreateKlingTextToVideoDto,
    examples: {
      prompt: { summary: 'A prompt', value: { model_name: 'kling-v1-6', prompt: 'A paper boat drifting down a rainy street', duration: '5', aspect_ratio: '16:9', mode: 'std' } },
      camera: { summary: 'With a negative prompt and a camera movement', value: { prompt: 'A lighthouse at dusk', negative_prompt: 'text, blur', cfg_scale: 0.5, camera_control: { type: 'simple', config: { zoom: 5 } } } },
    },
  })
  @ApiOkResponse({ type: KlingVideoTaskEnvelopeDto })
  @ApiErrors(CREATE_ERRORS)
  text2video(@CurrentPrincipal() principal: Principal, @RequestId() requestId: string, @Body() body: CreateKlingTextToVideoDto, @RequestBaseUrl() base?: string): Promise<KlingVideoTaskEnvelopeDto> {
    return this.videos.create(principal, requestId, 'text2video', body, base);
  }

  @Post('image2video')
  @HttpCode(200)
  @BodyLimit(KLING_VIDEO_BODY_LIMIT_BYTES)
  @ApiOperation({ operationId: 'createKlingImageToVideo', summary: 'Create a video from an image (Kling image2video)', description: `image and image_tail as http(s) URLs or Base64 (no data: prefix). ${FLOW}${SAMPLE_EXAMPLE_NOTE}` })
  @ApiBody({
    type: CreateKlingImageToVideoDto,
    examples: {
      image: { summary: 'A first frame by URL (a sample this service serves)', value: { prompt: 'The boat drifts away', image: sampleUrl('keyframe.jpg'), duration: '5' } },
      tail: { summary: 'A first and a last frame, in pro mode', value: { prompt: 'From day to night', image: sampleUrl('keyframe.jpg'), image_tail: sampleUrl('photo.png'), mode: 'pro', duration: '5' } },
    },
  })
  @ApiOkResponse({ type: KlingVideoTaskEnvelopeDto })
  @ApiErrors(CREATE_ERRORS)
  image2video(@CurrentPrincipal() principal: Principal, @RequestId() requestId: string, @Body() body: CreateKlingImageToVideoDto, @RequestBaseUrl() base?: string): Promise<KlingVideoTaskEnvelopeDto> {
    return this.videos.create(principal, requestId, 'image2video', body, base);
  }

  @Post('multi-image2video')
  @HttpCode(200)
  @BodyLimit(KLING_MULTI_BODY_LIMIT_BYTES)
  @ApiOperation({
    operationId: 'createKlingMultiImageToVideo',
    summary: 'Create a video from reference images (Kling multi-image2video)',
    description: `image_list: 1 to ${KLING_IMAGE_LIST_MAX} reference images (http(s) URLs or Base64, no data: prefix) the video's subjects keep to, with a prompt, at an asked ratio; made by a model that takes reference images (Kling's kling-v1-6, or any GET /models lists with reference_images). ${FLOW}${SAMPLE_EXAMPLE_NOTE}`,
  })
  @ApiBody({
    type: CreateKlingMultiImageToVideoDto,
    examples: {
      references: { summary: 'Two reference images by URL (samples this service serves)', value: { model_name: 'kling-v1-6', prompt: 'The two of them walk along the beach', image_list: [{ image: sampleUrl('keyframe.jpg') }, { image: sampleUrl('photo.png') }], aspect_ratio: '16:9', duration: '5' } },
    },
  })
  @ApiOkResponse({ type: KlingVideoTaskEnvelopeDto })
  @ApiErrors(CREATE_ERRORS)
  multiImage2video(@CurrentPrincipal() principal: Principal, @RequestId() requestId: string, @Body() body: CreateKlingMultiImageToVideoDto, @RequestBaseUrl() base?: string): Promise<KlingVideoTaskEnvelopeDto> {
    return this.videos.create(principal, requestId, 'multi-image2video', body, base);
  }

  @Get('multi-image2video')
  @ApiOperation({ operationId: 'listKlingMultiImageToVideos', summary: 'List your video tasks (Kling multi-image2video list)', description: 'The same list as text2video’s.' })
  @ApiOkResponse({ type: KlingVideoTaskListEnvelopeDto })
  @ApiErrors([...KEYED_ROUTE_ERRORS, 'INVALID_PARAMETER'])
  listMultiImageToVideo(@CurrentPrincipal() principal: Principal, @RequestId() requestId: string, @Query() query: ListExpandTasksQueryDto): Promise<KlingVideoTaskListEnvelopeDto> {
    return this.videos.list(principal, requestId, query);
  }

  @Get('multi-image2video/:id')
  @ApiOperation({ operationId: 'getKlingMultiImageToVideo', summary: 'Read a video task (Kling multi-image2video query)', description: 'The same as text2video’s.' })
  @ApiParam({ name: 'id', description: 'task_id or external_task_id' })
  @ApiOkResponse({ type: KlingVideoTaskEnvelopeDto })
  @ApiErrors(READ_ERRORS)
  getMultiImageToVideo(@CurrentPrincipal() principal: Principal, @RequestId() requestId: string, @Param('id') id: string): Promise<KlingVideoTaskEnvelopeDto> {
    return this.videos.get(principal, requestId, id);
  }

  @Get('text2video')
  @ApiOperation({ operationId: 'listKlingTextToVideos', summary: 'List your video tasks (Kling text2video list)', description: 'Every generation of yours, whichever door made it, newest first.' })
  @ApiOkResponse({ type: KlingVideoTaskListEnvelopeDto })
  @ApiErrors([...KEYED_ROUTE_ERRORS, 'INVALID_PARAMETER'])
  listTextToVideo(@CurrentPrincipal() principal: Principal, @RequestId() requestId: string, @Query() query: ListExpandTasksQueryDto): Promise<KlingVideoTaskListEnvelopeDto> {
    return this.videos.list(principal, requestId, query);
  }

  @Get('image2video')
  @ApiOperation({ operationId: 'listKlingImageToVideos', summary: 'List your video tasks (Kling image2video list)', description: 'The same list as text2video’s.' })
  @ApiOkResponse({ type: KlingVideoTaskListEnvelopeDto })
  @ApiErrors([...KEYED_ROUTE_ERRORS, 'INVALID_PARAMETER'])
  listImageToVideo(@CurrentPrincipal() principal: Principal, @RequestId() requestId: string, @Query() query: ListExpandTasksQueryDto): Promise<KlingVideoTaskListEnvelopeDto> {
    return this.videos.list(principal, requestId, query);
  }

  @Get('text2video/:id')
  @ApiOperation({ operationId: 'getKlingTextToVideo', summary: 'Read a video task (Kling text2video query)', description: 'By task_id or external_task_id; any generation of yours, whichever door made it.' })
  @ApiParam({ name: 'id', description: 'task_id or external_task_id' })
  @ApiOkResponse({ type: KlingVideoTaskEnvelopeDto })
  @ApiErrors(READ_ERRORS)
  getTextToVideo(@CurrentPrincipal() principal: Principal, @RequestId() requestId: string, @Param('id') id: string): Promise<KlingVideoTaskEnvelopeDto> {
    return this.videos.get(principal, requestId, id);
  }

  @Get('image2video/:id')
  @ApiOperation({ operationId: 'getKlingImageToVideo', summary: 'Read a video task (Kling image2video query)', description: 'The same as text2video’s.' })
  @ApiParam({ name: 'id', description: 'task_id or external_task_id' })
  @ApiOkResponse({ type: KlingVideoTaskEnvelopeDto })
  @ApiErrors(READ_ERRORS)
  getImageToVideo(@CurrentPrincipal() principal: Principal, @RequestId() requestId: string, @Param('id') id: string): Promise<KlingVideoTaskEnvelopeDto> {
    return this.videos.get(principal, requestId, id);
  }
}
