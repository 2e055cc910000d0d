import { Body, Controller, Delete, Get, HttpCode, Param, Post, Query } from '@nestjs/common';
import { ApiBearerAuth, ApiBody, ApiCreatedResponse, ApiNoContentResponse, ApiOkResponse, ApiOperation, ApiParam, ApiTags } from '@nestjs/swagger';
import type { Principal } from '../../common/auth/credential.js';
import { CurrentPrincipal } from '../../common/decorators/auth.decorators.js';
import { RequestBaseUrl } from '../../common/decorators/request-base-url.decorator.js';
import { ApiErrors, KEYED_ROUTE_ERRORS } from '../../common/swagger/api-errors.decorator.js';
import { CallbackListDto } from '../callbacks/dto/callback.dto.js';
import { CreateGenerationDto } from './dto/create-generation.dto.js';
import { GenerationDetailDto, GenerationDto, GenerationListDto } from './dto/generation.dto.js';
import { ListGenerationsQueryDto } from './dto/list-generations.dto.js';
import { VideoService } from './video.service.js';

@ApiTags('video generation')
@ApiBearerAuth('api-key')
@Controller('video-b/v1/generations')
export class VideoController {
  constructor(private readonly video: VideoService) {}

  /** `/generations/video` is where the official `lumaai` SDK sends its create request. */
  @Post(['', 'video'])
  @HttpCode(201)
  @ApiOperation({
    summary: 'Create a video generation',
    description:
      'From a prompt, optionally with keyframes. Also served at POST /video-b/v1/generations/video, where the `lumaai` SDK sends it (baseURL = <this service>/video-b/v1). ' +
      'The generation then runs: pending → processing → completed | failed; read it with GET …/generations/{id}.',
  })
  @ApiBody({
    type: CreateGenerationDto,
    examples: {
      keyframe: { summary: 'Prompt and a start keyframe', value: { prompt: 'A paper boat drifting down a rainy street', keyframes: { frame0: { type: 'image', url: 'https://example.com/first-frame.jpg' } } } },
      text: { summary: 'Prompt only', value: { prompt: 'A time-lapse of clouds over mountains', aspect_ratio: '9:16', loop: true } },
    },
  })
  @ApiCreatedResponse({ type: GenerationDto, description: 'The generation, created in state "pending".' })
  @ApiErrors([...KEYED_ROUTE_ERRORS, 'INVALID_PARAMETER'])
  create(@CurrentPrincipal() principal: Principal, @Body() body: CreateGenerationDto): Promise<GenerationDto> {
    return this.video.createGeneration(principal, body);
  }

  @Get()
  @ApiOperation({ summary: 'List your generations, newest first' })
  @ApiOkResponse({ type: GenerationListDto })
  @ApiErrors([...KEYED_ROUTE_ERRORS, 'INVALID_PARAMETER'])
  list(@CurrentPrincipal() principal: Principal, @Query() query: ListGenerationsQueryDto, @RequestBaseUrl() base?: string): Promise<GenerationListDto> {
    return this.video.listGenerations(principal, query, base);
  }

  @Get(':id/callbacks')
  @ApiOperation({ summary: "A generation's callback notifications", description: 'Each state notification sent to callback_url (its webhook-id, state) with every attempt: time, HTTP status, duration, error.' })
  @ApiParam({ name: 'id', format: 'uuid' })
  @ApiOkResponse({ type: CallbackListDto })
  @ApiErrors([...KEYED_ROUTE_ERRORS, 'NOT_FOUND'])
  callbacks(@CurrentPrincipal() principal: Principal, @Param('id') id: string): Promise<CallbackListDto> {
    return this.video.listCallbacks(principal, id);
  }

  @Get(':id')
  @ApiOperation({ summary: 'Get a generation', description: 'With its state, failure_reason, and assets (signed links to the video and a thumbnail) once completed.' })
  @ApiParam({ name: 'id', format: 'uuid' })
  @ApiOkResponse({ type: GenerationDetailDto })
  @ApiErrors([...KEYED_ROUTE_ERRORS, 'NOT_FOUND'])
  get(@CurrentPrincipal() principal: Principal, @Param('id') id: string, @RequestBaseUrl() base?: string): Promise<GenerationDetailDto> {
    return this.video.getGeneration(principal, id, base);
  }

  @Delete(':id')
  @HttpCode(204)
  @ApiOperation({ summary: 'Delete a generation and its media' })
  @ApiParam({ name: 'id', format: 'uuid' })
  @ApiNoContentResponse({ description: 'Deleted.' })
  @ApiErrors([...KEYED_ROUTE_ERRORS, 'NOT_FOUND'])
  remove(@CurrentPrincipal() principal: Principal, @Param('id') id: string): Promise<void> {
    return this.video.deleteGeneration(principal, id);
  }
}
