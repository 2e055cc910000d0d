import { Body, Controller, HttpCode, Post } from '@nestjs/common';
import { ApiBearerAuth, ApiBody, ApiCreatedResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import type { Principal } from '../../common/auth/credential.js';
import { CurrentPrincipal } from '../../common/decorators/auth.decorators.js';
import { ApiErrors, KEYED_ROUTE_ERRORS } from '../../common/swagger/api-errors.decorator.js';
import { CreateGenerationDto } from './dto/create-generation.dto.js';
import { GenerationDto } from './dto/generation.dto.js';
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
    description: 'From a prompt, optionally with keyframes. Also served at POST /video-b/v1/generations/video, where the `lumaai` SDK sends it (baseURL = <this service>/video-b/v1).',
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
}
