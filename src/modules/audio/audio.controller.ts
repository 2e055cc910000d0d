import { Body, Controller, HttpCode, Post } from '@nestjs/common';
import { ApiBearerAuth, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import type { Principal } from '../../common/auth/credential.js';
import { CurrentPrincipal } from '../../common/decorators/auth.decorators.js';
import { ApiErrors, KEYED_ROUTE_ERRORS } from '../../common/swagger/api-errors.decorator.js';
import { AudioUploadResultDto, CreateAudioUploadDto } from './dto/audio-upload.dto.js';
import { AudioService } from './audio.service.js';

@ApiTags('audio')
@ApiBearerAuth('api-key')
@Controller('music-a/uploads')
export class AudioController {
  constructor(private readonly audio: AudioService) {}

  @Post('audio-url')
  @HttpCode(200)
  @ApiOperation({ summary: 'Upload an audio clip by URL', description: 'Registers the clip; the returned task id continues or combines music from it. Error codes on this route are strings.' })
  @ApiOkResponse({ type: AudioUploadResultDto })
  @ApiErrors([...KEYED_ROUTE_ERRORS, 'INVALID_PARAMETER'], { stringCodes: true })
  create(@CurrentPrincipal() principal: Principal, @Body() body: CreateAudioUploadDto): Promise<AudioUploadResultDto> {
    return this.audio.createUpload(principal, body);
  }
}
