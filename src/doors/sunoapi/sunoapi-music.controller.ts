import { Body, Controller, Get, HttpCode, Post, Query } from '@nestjs/common';
import { ApiBearerAuth, ApiBody, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import type { Principal } from '../../common/auth/credential.js';
import { CurrentPrincipal } from '../../common/decorators/auth.decorators.js';
import { RequestBaseUrl } from '../../common/decorators/request.decorators.js';
import { ADMISSION_ERRORS, ApiErrors, KEYED_ROUTE_ERRORS } from '../../common/swagger/api-errors.decorator.js';
import { SAMPLE_EXAMPLE_NOTE, sampleUrl } from '../../common/swagger/samples.js';
import { API_KEY_SCHEME } from '../../common/swagger/security-schemes.js';
import { UsageService } from '../../modules/limits/usage.service.js';
import { SunoapiCreatedDto, SunoapiExtendDto, SunoapiGenerateDto, SunoapiRecordInfoQueryDto, SunoapiUploadExtendDto } from './dto/sunoapi-generate.dto.js';
import { SunoapiRecordInfoDto } from './dto/sunoapi-record.dto.js';
import { SunoapiCreditDto } from './dto/sunoapi-wav.dto.js';
import { SunoapiMusicService } from './sunoapi-music.service.js';

const CREATE_ERRORS = [...KEYED_ROUTE_ERRORS, ...ADMISSION_ERRORS, 'INVALID_PARAMETER', 'NOT_FOUND', 'GONE'] as const;
const ANSWERS = 'Answers `{code: 200, msg: "success", data: {taskId}}`; errors `{code, msg, data: null}` with the family\'s codes. Poll GET /sunoapi/api/v1/generate/record-info?taskId= until SUCCESS, or give callBackUrl: POSTed `text` when it starts, then `first` (the first take) and `complete` (all of them), in that order, when it succeeds; `error` when it fails.';

/** The sunoapi.org family's music routes (sunoapi.org, api.box, kie.ai), under `/sunoapi`: their clients work by changing their base URL to `<this service>/sunoapi`. */
@ApiTags('music')
@ApiBearerAuth(API_KEY_SCHEME)
@Controller('sunoapi/api/v1/generate')
export class SunoapiMusicController {
  constructor(
    private readonly music: SunoapiMusicService,
    private readonly usage: UsageService,
  ) {}

  @Post()
  @HttpCode(200)
  @ApiOperation({ operationId: 'sunoapiGenerate', summary: 'Make a new song (sunoapi.org shape)', description: `docs.sunoapi.org's Generate Music: two takes. ${ANSWERS}` })
  @ApiBody({
    type: SunoapiGenerateDto,
    examples: {
      custom: { summary: 'Custom mode: lyrics, style, title', value: { customMode: true, instrumental: false, model: 'V4_5', prompt: '[Verse]\nMorning light upon the bay\n[Chorus]\nHold the tide', style: 'lo-fi, piano', title: 'Morning tide' } },
      description: { summary: 'Non-custom mode: a description', value: { customMode: false, instrumental: true, model: 'V4', prompt: 'a cheerful song about a bicycle ride' } },
    },
  })
  @ApiOkResponse({ type: SunoapiCreatedDto })
  @ApiErrors(CREATE_ERRORS, { sunoapi: true })
  generate(@CurrentPrincipal() principal: Principal, @Body() body: SunoapiGenerateDto, @RequestBaseUrl() base?: string): Promise<SunoapiCreatedDto> {
    return this.music.generate(principal, body, base);
  }

  @Post('extend')
  @HttpCode(200)
  @ApiOperation({
    operationId: 'sunoapiExtend',
    summary: 'Continue one of your clips (sunoapi.org shape)',
    description: `docs.sunoapi.org's Extend Music: audioId is one of your clip ids (a take's id in sunoData, an upload's, a joined song's). The takes hold only the new part, as Suno's extends do: join the chain with POST /music-a/submit/concat. ${ANSWERS}`,
  })
  @ApiBody({ type: SunoapiExtendDto, examples: { extend: { summary: 'Continue a clip from its 5th second (put one of your clip ids)', value: { audioId: '5b6c7d8e-9f0a-4b1c-8d2e-3f4a5b6c7d8e', defaultParamFlag: true, continueAt: 5, prompt: '[Bridge]\nFarther out', style: 'lo-fi', title: 'Tide, later', model: 'V4_5' } } } })
  @ApiOkResponse({ type: SunoapiCreatedDto })
  @ApiErrors(CREATE_ERRORS, { sunoapi: true })
  extend(@CurrentPrincipal() principal: Principal, @Body() body: SunoapiExtendDto, @RequestBaseUrl() base?: string): Promise<SunoapiCreatedDto> {
    return this.music.extend(principal, body, base);
  }

  @Post('upload-extend')
  @HttpCode(200)
  @ApiOperation({
    operationId: 'sunoapiUploadExtend',
    summary: 'Upload an audio clip by URL and continue it (sunoapi.org shape)',
    description:
      `docs.sunoapi.org's Upload And Extend Audio: uploadUrl is registered as an upload (as POST /music-a/uploads/audio-url does), fetched and checked before the answer, then continued at continueAt (its end without). ` +
      `The record's parentMusicId is the upload's clip id. As their docs answer "a longer track", each track in sunoData (and in the first and complete callbacks) is the whole extended track: the upload up to continueAt, then the new part (its audioUrl and duration; its id is the take's clip, whose own audio, the new part alone, GET /music-a/fetch/{id} serves). ${ANSWERS} ${SAMPLE_EXAMPLE_NOTE}`,
  })
  @ApiBody({ type: SunoapiUploadExtendDto, examples: { sample: { summary: 'Continue a sample clip this service serves (2 s) from its 1st second', value: { uploadUrl: sampleUrl('clip.wav'), defaultParamFlag: true, continueAt: 1, instrumental: true, style: 'ambient', title: 'Further', model: 'V4_5' } } } })
  @ApiOkResponse({ type: SunoapiCreatedDto })
  @ApiErrors([...CREATE_ERRORS, 'TIMEOUT'], { sunoapi: true })
  uploadExtend(@CurrentPrincipal() principal: Principal, @Body() body: SunoapiUploadExtendDto, @RequestBaseUrl() base?: string): Promise<SunoapiCreatedDto> {
    return this.music.uploadExtend(principal, body, base);
  }

  @Get('record-info')
  @ApiOperation({
    operationId: 'sunoapiRecordInfo',
    summary: 'Get a music task (sunoapi.org shape)',
    description: "docs.sunoapi.org's Get Music Generation Details: PENDING, TEXT_SUCCESS (started), SUCCESS with both takes in response.sunoData, or a failed state (the takes are made together: FIRST_SUCCESS is passed with SUCCESS). Any of your music tasks, whichever door made it.",
  })
  @ApiOkResponse({ type: SunoapiRecordInfoDto })
  @ApiErrors([...KEYED_ROUTE_ERRORS, 'INVALID_PARAMETER', 'NOT_FOUND'], { sunoapi: true })
  recordInfo(@CurrentPrincipal() principal: Principal, @Query() query: SunoapiRecordInfoQueryDto): Promise<SunoapiRecordInfoDto> {
    return this.music.recordInfo(principal, query.taskId);
  }

  @Get('credit')
  @ApiOperation({
    operationId: 'sunoapiCredit',
    summary: 'Your remaining credits (sunoapi.org shape)',
    description:
      "docs.sunoapi.org's Get Remaining Credits: data is what your key's owner may still spend this month (its monthly credits less those charged; a failed task's are given back), the credit_balance of GET /video-b/v1/credits and credits_remaining of GET /usage; 9007199254740991 when the owner has no monthly limit. A create that would go past it is refused with code 429.",
  })
  @ApiOkResponse({ type: SunoapiCreditDto })
  @ApiErrors(KEYED_ROUTE_ERRORS, { sunoapi: true })
  async credit(@CurrentPrincipal() principal: Principal): Promise<SunoapiCreditDto> {
    return { code: 200, msg: 'success', data: (await this.usage.creditBalance(principal.owner)).credit_balance };
  }
}
