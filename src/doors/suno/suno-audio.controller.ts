import { Body, Controller, Get, HttpCode, Param, Post } from '@nestjs/common';
import { ApiBearerAuth, ApiBody, ApiOkResponse, ApiOperation, ApiParam, ApiTags } from '@nestjs/swagger';
import type { Principal } from '../../common/auth/credential.js';
import { CurrentPrincipal } from '../../common/decorators/auth.decorators.js';
import { RequestBaseUrl } from '../../common/decorators/request.decorators.js';
import { ADMISSION_ERRORS, ApiErrors, KEYED_ROUTE_ERRORS } from '../../common/swagger/api-errors.decorator.js';
import { SAMPLE_EXAMPLE_NOTE, sampleUrl } from '../../common/swagger/samples.js';
import { AudioUploadDetailResultDto, AudioUploadResultDto, CreateAudioUploadDto } from './dto/audio-upload.dto.js';
import { AudioService } from './suno-audio.service.js';
import { API_KEY_SCHEME } from '../../common/swagger/security-schemes.js';

@ApiTags('audio')
@ApiBearerAuth(API_KEY_SCHEME)
@Controller('music-a/uploads')
export class AudioController {
  constructor(private readonly audio: AudioService) {}

  @Post('audio-url')
  @HttpCode(200)
  @ApiOperation({
    operationId: 'uploadAudioUrl',
    summary: 'Upload an audio clip by URL',
    description:
      'Registers the clip; the returned task id continues or combines music from it. The file is then fetched and checked: pending → ready | failed. Error codes on this route are strings. ' +
      SAMPLE_EXAMPLE_NOTE,
  })
  @ApiBody({ type: CreateAudioUploadDto, examples: { sample: { summary: 'A sample clip this service serves', value: { url: sampleUrl('clip.wav') } } } })
  @ApiOkResponse({ type: AudioUploadResultDto })
  @ApiErrors([...KEYED_ROUTE_ERRORS, ...ADMISSION_ERRORS, 'INVALID_PARAMETER'], { stringCodes: true })
  create(@CurrentPrincipal() principal: Principal, @Body() body: CreateAudioUploadDto, @RequestBaseUrl() base?: string): Promise<AudioUploadResultDto> {
    return this.audio.createUpload(principal, body, base);
  }

  @Get(':id')
  @ApiOperation({ operationId: 'getAudioUpload', summary: 'Get an uploaded clip', description: 'Its status and, once ready, format, duration, size and SHA-256.' })
  @ApiParam({ name: 'id', format: 'uuid' })
  @ApiOkResponse({ type: AudioUploadDetailResultDto })
  @ApiErrors([...KEYED_ROUTE_ERRORS, 'NOT_FOUND', 'INVALID_PARAMETER'], { stringCodes: true })
  get(@CurrentPrincipal() principal: Principal, @Param('id') id: string): Promise<AudioUploadDetailResultDto> {
    return this.audio.getUpload(principal, id);
  }
}
