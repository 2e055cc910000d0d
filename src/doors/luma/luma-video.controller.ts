import { Body, Controller, Delete, Get, HttpCode, Param, Post, Query } from '@nestjs/common';
import { ApiBearerAuth, ApiBody, ApiCreatedResponse, ApiNoContentResponse, ApiOkResponse, ApiOperation, ApiParam, ApiTags } from '@nestjs/swagger';
import type { Principal } from '../../common/auth/credential.js';
import { CurrentPrincipal } from '../../common/decorators/auth.decorators.js';
import { RequestBaseUrl } from '../../common/decorators/request.decorators.js';
import { ADMISSION_ERRORS, ApiErrors, KEYED_ROUTE_ERRORS } from '../../common/swagger/api-errors.decorator.js';
import { SAMPLE_EXAMPLE_NOTE, sampleUrl } from '../../common/swagger/samples.js';
import { CallbackListDto } from '../../modules/callbacks/dto/callback.dto.js';
import { CreateGenerationDto } from './dto/create-generation.dto.js';
import { GenerationDetailDto, GenerationDto, GenerationListDto, PingDto } from './dto/generation.dto.js';
import { ListGenerationsQueryDto } from './dto/list-generations.dto.js';
import { CreditBalanceDto } from '../../modules/limits/dto/usage.dto.js';
import { UsageService } from '../../modules/limits/usage.service.js';
import { LumaVideoService } from './luma-video.service.js';
import { API_KEY_SCHEME } from '../../common/swagger/security-schemes.js';

const CREATE_DOC = {
  description:
    'From a prompt, optionally with keyframes (Luma\'s request body: model, resolution, duration, loop, aspect_ratio, keyframes, callback_url). ' +
    'The generation then runs: pending → dreaming → completed | failed; read it with GET …/generations/{id}. ' +
    SAMPLE_EXAMPLE_NOTE,
};
const CREATE_EXAMPLES = {
  keyframe: { summary: 'Prompt and a start keyframe (a sample image this service serves)', value: { prompt: 'A paper boat drifting down a rainy street', keyframes: { frame0: { type: 'image', url: sampleUrl('keyframe.jpg') } } } },
  text: { summary: 'Prompt only', value: { prompt: 'A time-lapse of clouds over mountains', aspect_ratio: '9:16', loop: true } },
  luma: { summary: "Luma's parameters: model, resolution, duration", value: { prompt: 'Waves rolling onto a beach at dusk', model: 'ray-2', resolution: '540p', duration: '5s' } },
};
const CREATE_ERRORS = [...KEYED_ROUTE_ERRORS, ...ADMISSION_ERRORS, 'INVALID_PARAMETER'] as const;

@ApiTags('video generation')
@ApiBearerAuth(API_KEY_SCHEME)
@Controller('video-b/v1')
export class LumaVideoController {
  constructor(
    private readonly video: LumaVideoService,
    private readonly usage: UsageService,
  ) {}

  @Post('generations')
  @HttpCode(201)
  @ApiOperation({ operationId: 'createGeneration', summary: 'Create a video generation', ...CREATE_DOC })
  @ApiBody({ type: CreateGenerationDto, examples: CREATE_EXAMPLES })
  @ApiCreatedResponse({ type: GenerationDto, description: 'The generation, created in state "pending".' })
  @ApiErrors(CREATE_ERRORS)
  create(@CurrentPrincipal() principal: Principal, @Body() body: CreateGenerationDto, @RequestBaseUrl() base?: string): Promise<GenerationDto> {
    return this.video.createGeneration(principal, body, base);
  }

  /** Where the official `lumaai` SDK sends its create request (baseURL = <this service>/video-b/v1). */
  @Post('generations/video')
  @HttpCode(201)
  @ApiOperation({ operationId: 'createVideoGeneration', summary: 'Create a video generation (the path of the lumaai SDK)', ...CREATE_DOC })
  @ApiBody({ type: CreateGenerationDto, examples: CREATE_EXAMPLES })
  @ApiCreatedResponse({ type: GenerationDto, description: 'The generation, created in state "pending".' })
  @ApiErrors(CREATE_ERRORS)
  createVideo(@CurrentPrincipal() principal: Principal, @Body() body: CreateGenerationDto, @RequestBaseUrl() base?: string): Promise<GenerationDto> {
    return this.video.createGeneration(principal, body, base);
  }

  @Get('generations')
  @ApiOperation({ operationId: 'listGenerations', summary: 'List your generations, newest first' })
  @ApiOkResponse({ type: GenerationListDto })
  @ApiErrors([...KEYED_ROUTE_ERRORS, 'INVALID_PARAMETER'])
  list(@CurrentPrincipal() principal: Principal, @Query() query: ListGenerationsQueryDto): Promise<GenerationListDto> {
    return this.video.listGenerations(principal, query);
  }

  @Get('generations/:id/callbacks')
  @ApiOperation({ operationId: 'listGenerationCallbacks', summary: "A generation's callback notifications", description: 'Each state notification sent to callback_url (its webhook-id, state) with every attempt: time, HTTP status, duration, error.' })
  @ApiParam({ name: 'id', format: 'uuid' })
  @ApiOkResponse({ type: CallbackListDto })
  @ApiErrors([...KEYED_ROUTE_ERRORS, 'NOT_FOUND', 'INVALID_PARAMETER'])
  callbacks(@CurrentPrincipal() principal: Principal, @Param('id') id: string): Promise<CallbackListDto> {
    return this.video.listCallbacks(principal, id);
  }

  @Get('generations/:id')
  @ApiOperation({ operationId: 'getGeneration', summary: 'Get a generation', description: 'With its state, and failure_reason once failed or assets (signed links to the video and a thumbnail) once completed.' })
  @ApiParam({ name: 'id', format: 'uuid' })
  @ApiOkResponse({ type: GenerationDetailDto })
  @ApiErrors([...KEYED_ROUTE_ERRORS, 'NOT_FOUND', 'INVALID_PARAMETER'])
  get(@CurrentPrincipal() principal: Principal, @Param('id') id: string): Promise<GenerationDetailDto> {
    return this.video.getGeneration(principal, id);
  }

  @Delete('generations/:id')
  @HttpCode(204)
  @ApiOperation({ operationId: 'deleteGeneration', summary: 'Delete a generation and its media' })
  @ApiParam({ name: 'id', format: 'uuid' })
  @ApiNoContentResponse({ description: 'Deleted.' })
  @ApiErrors([...KEYED_ROUTE_ERRORS, 'NOT_FOUND', 'INVALID_PARAMETER'])
  remove(@CurrentPrincipal() principal: Principal, @Param('id') id: string): Promise<void> {
    return this.video.deleteGeneration(principal, id);
  }

  @Get('credits')
  @ApiOperation({ operationId: 'getCredits', summary: 'Your credits left this month', description: "As Luma's GET /credits: credit_balance is what is left of your monthly credits (see GET /usage)." })
  @ApiOkResponse({ type: CreditBalanceDto })
  @ApiErrors(KEYED_ROUTE_ERRORS)
  credits(@CurrentPrincipal() principal: Principal): Promise<CreditBalanceDto> {
    return this.usage.creditBalance(principal.owner);
  }

  @Get('ping')
  @ApiOperation({ operationId: 'ping', summary: 'Check that the API answers (and that the key works)', description: "As Luma's GET /ping." })
  @ApiOkResponse({ type: PingDto })
  @ApiErrors(KEYED_ROUTE_ERRORS)
  ping(): PingDto {
    return { message: 'pong' };
  }
}
