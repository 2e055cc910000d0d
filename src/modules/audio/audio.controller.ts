import { Body, Controller, Get, HttpCode, Param, Post } from '@nestjs/common';
import { ApiBearerAuth, ApiOkResponse, ApiOperation, ApiParam, ApiTags } from '@nestjs/swagger';
import type { Principal } from '../../common/auth/credential.js';
import { CurrentPrincipal } from '../../common/decorators/auth.decorators.js';
import { ApiErrors, KEYED_ROUTE_ERRORS } from '../../common/swagger/api-errors.decorator.js';
import { AudioUploadDetailResultDto, AudioUploadResultDto, CreateAudioUploadDto } from './dto/audio-upload.dto.js';
import { AudioService } from './audio.service.js';

@ApiTags('audio')
@ApiBearerAuth('api-key')
@Controller('music-a/uploads')
export class AudioController {
  constructor(private readonly audio: AudioService) {}

  @Post('audio-url')
  @HttpCode(200)
  @ApiOperation({
    summary: 'Upload an audio clip by URL',
    description: 'Registers the clip; the returned task id continues or combines music from it. The file is then fetched and checked: pending → ready | failed. Error codes on this route are strings.',
  })
  @ApiOkResponse({ type: AudioUploadResultDto })
  @ApiErrors([...KEYED_ROUTE_ERRORS, 'INVALID_PARAMETER'], { stringCodes: true })
  create(@CurrentPrincipal() principal: Principal, @Body() body: CreateAudioUploadDto): Promise<AudioUploadResultDto> {
    return this.audio.createUpload(principal, body);
  }

  @Get(':id')
  @ApiOperation({ summary: 'Get an uploaded clip', description: 'Its status and, once ready, format, duration, size and SHA-256.' })
  @ApiParam({ name: 'id', format: 'uuid' })
  @ApiOkResponse({ type: AudioUploadDetailResultDto })
  @ApiErrors([...KEYED_ROUTE_ERRORS, 'NOT_FOUND'], { stringCodes: true })
  get(@CurrentPrincipal() principal: Principal, @Param('id') id: string): Promise<AudioUploadDetailResultDto> {
    return this.audio.getUpload(principal, id);
  }
}
