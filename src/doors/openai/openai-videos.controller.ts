import { Body, Controller, Delete, Get, Headers, HttpCode, Param, Post, Query, Res, UploadedFile } from '@nestjs/common';
import type { Response } from 'express';
import { ApiBearerAuth, ApiBody, ApiConsumes, ApiExtraModels, ApiOkResponse, ApiOperation, ApiParam, ApiResponse, ApiTags, getSchemaPath } from '@nestjs/swagger';
import { sendMedia } from '../../modules/media/media-response.js';
import type { Principal } from '../../common/auth/credential.js';
import { CurrentPrincipal } from '../../common/decorators/auth.decorators.js';
import { MultipartBody } from '../../common/http/json-body.guard.js';
import { RequestBaseUrl } from '../../common/decorators/request.decorators.js';
import { ADMISSION_ERRORS, ApiErrors, KEYED_ROUTE_ERRORS } from '../../common/swagger/api-errors.decorator.js';
import { SAMPLE_EXAMPLE_NOTE, sampleUrl } from '../../common/swagger/samples.js';
import { API_KEY_SCHEME } from '../../common/swagger/security-schemes.js';
import { CreateOpenAiVideoDto, ListOpenAiVideosQueryDto, OpenAiVideoContentQueryDto, OpenAiVideoDeletedDto, OpenAiVideoDto, OpenAiVideoListDto } from './dto/openai-video.dto.js';
import { OpenAiVideosService, type UploadedPart } from './openai-videos.service.js';

const ERRORS = { openAi: true } as const;
const FILE_CONTENT = Object.fromEntries(['video/mp4', 'image/jpeg'].map((type) => [type, { schema: { type: 'string', format: 'binary' } }]));
const CREATE_EXAMPLES = {
  text: { summary: 'A prompt only (5 s, 1280x720)', value: { prompt: 'A calico cat playing a piano on stage' } },
  sized: { summary: 'Seconds and size', value: { prompt: 'Rain on a window at night', seconds: '5', size: '720x1280' } },
  reference: { summary: 'Starting from an image by URL (a sample this service serves)', value: { prompt: 'The boat drifts away', input_reference: { image_url: sampleUrl('keyframe.jpg') } } },
};

/**
 * The OpenAI-style video door (`/openai/v1`, so an OpenAI SDK's baseURL is `<gateway>/openai/v1`): OpenAI's
 * video object and errors over the same video generations as the Luma door.
 */
@ApiTags('video generation OpenAI-style')
@ApiBearerAuth(API_KEY_SCHEME)
@ApiExtraModels(CreateOpenAiVideoDto)
@Controller('openai/v1/videos')
export class OpenAiVideosController {
  constructor(private readonly videos: OpenAiVideosService) {}

  @Post()
  @HttpCode(200)
  @MultipartBody('input_reference', 10 * 1024 * 1024)
  @ApiConsumes('application/json', 'multipart/form-data')
  @ApiOperation({
    operationId: 'createOpenAiVideo',
    summary: 'Create a video (OpenAI videos.create)',
    description: `JSON, or multipart/form-data as OpenAI's SDKs send it, with input_reference as an image file or input_reference[image_url]. The video then runs: queued → in_progress → completed | failed. ${SAMPLE_EXAMPLE_NOTE}`,
  })
  @ApiBody({
    schema: { $ref: getSchemaPath(CreateOpenAiVideoDto) },
    examples: CREATE_EXAMPLES,
  })
  @ApiOkResponse({ type: OpenAiVideoDto, description: 'The video, queued.' })
  @ApiErrors([...KEYED_ROUTE_ERRORS, ...ADMISSION_ERRORS, 'INVALID_PARAMETER'], ERRORS)
  create(@CurrentPrincipal() principal: Principal, @Body() body: CreateOpenAiVideoDto, @UploadedFile() file?: UploadedPart, @RequestBaseUrl() base?: string): Promise<OpenAiVideoDto> {
    return this.videos.create(principal, body, file, base);
  }

  @Get()
  @ApiOperation({ operationId: 'listOpenAiVideos', summary: 'List your videos (OpenAI videos.list)', description: 'Every generation of yours, whichever door made it, newest first; `after` is the last id of the previous page.' })
  @ApiOkResponse({ type: OpenAiVideoListDto })
  @ApiErrors([...KEYED_ROUTE_ERRORS, 'INVALID_PARAMETER'], ERRORS)
  list(@CurrentPrincipal() principal: Principal, @Query() query: ListOpenAiVideosQueryDto): Promise<OpenAiVideoListDto> {
    return this.videos.list(principal, query);
  }

  @Get(':id')
  @ApiOperation({ operationId: 'getOpenAiVideo', summary: 'Read a video (OpenAI videos.retrieve)', description: 'Any generation of yours, whichever door made it.' })
  @ApiParam({ name: 'id', format: 'uuid' })
  @ApiOkResponse({ type: OpenAiVideoDto })
  @ApiErrors([...KEYED_ROUTE_ERRORS, 'NOT_FOUND'], ERRORS)
  get(@CurrentPrincipal() principal: Principal, @Param('id') id: string): Promise<OpenAiVideoDto> {
    return this.videos.get(principal, id);
  }

  @Delete(':id')
  @ApiOperation({ operationId: 'deleteOpenAiVideo', summary: 'Delete a video (OpenAI videos.delete)', description: 'Removes it and its media; one not finished ends failed and gives back its slot and credits.' })
  @ApiParam({ name: 'id', format: 'uuid' })
  @ApiOkResponse({ type: OpenAiVideoDeletedDto })
  @ApiErrors([...KEYED_ROUTE_ERRORS, 'NOT_FOUND'], ERRORS)
  delete(@CurrentPrincipal() principal: Principal, @Param('id') id: string): Promise<OpenAiVideoDeletedDto> {
    return this.videos.delete(principal, id);
  }

  @Get(':id/content')
  @ApiOperation({
    operationId: 'getOpenAiVideoContent',
    summary: 'Download a video (OpenAI videos.downloadContent)',
    description: 'The MP4 (variant=video) or its JPEG still (variant=thumbnail), as the media links serve files: `Range` (206), `ETag` with `If-None-Match` (304); with MEDIA_DELIVERY=redirect a 302 to the bucket.',
  })
  @ApiParam({ name: 'id', format: 'uuid' })
  @ApiOkResponse({ description: 'The file.', content: FILE_CONTENT })
  @ApiResponse({ status: 206, description: 'The requested range of the file (Content-Range).', content: FILE_CONTENT })
  @ApiResponse({ status: 302, description: 'MEDIA_DELIVERY=redirect: the file is at Location, a presigned URL of the bucket.' })
  @ApiResponse({ status: 304, description: 'The copy named in If-None-Match is current.' })
  @ApiErrors([...KEYED_ROUTE_ERRORS, 'NOT_FOUND', 'CONFLICT', 'INVALID_PARAMETER', 'RANGE_NOT_SATISFIABLE'], ERRORS)
  async content(
    @CurrentPrincipal() principal: Principal,
    @Param('id') id: string,
    @Query() query: OpenAiVideoContentQueryDto,
    @Res() res: Response,
    @Headers('range') range?: string,
    @Headers('if-range') ifRange?: string,
    @Headers('if-none-match') ifNoneMatch?: string,
  ): Promise<void> {
    sendMedia(res, await this.videos.content(principal, id, query.variant, { range, ifRange, ifNoneMatch }));
  }
}
