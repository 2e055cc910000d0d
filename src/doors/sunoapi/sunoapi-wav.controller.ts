import { Body, Controller, Get, HttpCode, Post, Query } from '@nestjs/common';
import { ApiBearerAuth, ApiBody, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import type { Principal } from '../../common/auth/credential.js';
import { CurrentPrincipal } from '../../common/decorators/auth.decorators.js';
import { RequestBaseUrl } from '../../common/decorators/request.decorators.js';
import { ADMISSION_ERRORS, ApiErrors, KEYED_ROUTE_ERRORS } from '../../common/swagger/api-errors.decorator.js';
import { API_KEY_SCHEME } from '../../common/swagger/security-schemes.js';
import { SunoapiCreatedDto } from './dto/sunoapi-generate.dto.js';
import { SunoapiWavGenerateDto, SunoapiWavRecordInfoDto, SunoapiWavRecordInfoQueryDto } from './dto/sunoapi-wav.dto.js';
import { SunoapiWavService } from './sunoapi-wav.service.js';

/** The sunoapi.org family's WAV conversion routes, under `/sunoapi/api/v1/wav`. */
@ApiTags('music')
@ApiBearerAuth(API_KEY_SCHEME)
@Controller('sunoapi/api/v1/wav')
export class SunoapiWavController {
  constructor(private readonly wav: SunoapiWavService) {}

  @Post('generate')
  @HttpCode(200)
  @ApiOperation({
    operationId: 'sunoapiWavGenerate',
    summary: 'Convert a track to WAV (sunoapi.org shape)',
    description:
      "docs.sunoapi.org's Convert to WAV Format: audioId is a track (an id in response.sunoData) of your music task taskId. Answers `{code: 200, msg: \"success\", data: {taskId}}` at once: a WAV task (PRICE_WAV credits) that converts the track's audio as this door answered it (an upload-extend's whole track, else the take) to 16-bit PCM WAV at its own rate and channels and stores it; " +
      'poll GET /sunoapi/api/v1/wav/record-info?taskId= until SUCCESS (response.audioWavUrl), or give callBackUrl: POSTed once at the end, `{code: 200, msg: "success", data: {audioWavUrl, task_id}}` (`{code: 500, msg, data: {task_id}}` when it fails). ' +
      "Each request is its own conversion. Another owner's task or track, or an unknown one, is 404; a track of another task, or one not complete, 400; one whose audio expired 410. GET /music-a/clips/{clip_id}/audio?format=wav converts a take on request instead.",
  })
  @ApiBody({ type: SunoapiWavGenerateDto, examples: { wav: { summary: 'Convert a take (put your taskId and one of its sunoData ids)', value: { taskId: '5b6c7d8e-9f0a-4b1c-8d2e-3f4a5b6c7d8e', audioId: '7d8e9f0a-1b2c-4d3e-8f4a-5b6c7d8e9f0a', callBackUrl: 'https://example.com/hooks/wav' } } } })
  @ApiOkResponse({ type: SunoapiCreatedDto })
  @ApiErrors([...KEYED_ROUTE_ERRORS, ...ADMISSION_ERRORS, 'INVALID_PARAMETER', 'NOT_FOUND', 'GONE'], { sunoapi: true })
  generate(@CurrentPrincipal() principal: Principal, @Body() body: SunoapiWavGenerateDto, @RequestBaseUrl() base?: string): Promise<SunoapiCreatedDto> {
    return this.wav.generate(principal, body, base);
  }

  @Get('record-info')
  @ApiOperation({
    operationId: 'sunoapiWavRecordInfo',
    summary: 'Get a WAV conversion (sunoapi.org shape)',
    description: "docs.sunoapi.org's Get WAV Conversion Details: successFlag PENDING until the WAV is stored, then SUCCESS with response.audioWavUrl (a signed link), or GENERATE_WAV_FAILED with errorCode 500 and errorMessage.",
  })
  @ApiOkResponse({ type: SunoapiWavRecordInfoDto })
  @ApiErrors([...KEYED_ROUTE_ERRORS, 'INVALID_PARAMETER', 'NOT_FOUND'], { sunoapi: true })
  recordInfo(@CurrentPrincipal() principal: Principal, @Query() query: SunoapiWavRecordInfoQueryDto): Promise<SunoapiWavRecordInfoDto> {
    return this.wav.recordInfo(principal, query.taskId);
  }
}
