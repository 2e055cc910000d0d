import { Controller, Get, Headers, Param, Query, Res } from '@nestjs/common';
import type { Response } from 'express';
import { ApiBearerAuth, ApiHeader, ApiOkResponse, ApiOperation, ApiParam, ApiResponse, ApiTags } from '@nestjs/swagger';
import type { Principal } from '../../common/auth/credential.js';
import { CurrentPrincipal } from '../../common/decorators/auth.decorators.js';
import { ApiErrors, KEYED_ROUTE_ERRORS } from '../../common/swagger/api-errors.decorator.js';
import { API_KEY_SCHEME } from '../../common/swagger/security-schemes.js';
import { ClipAudioQueryDto } from './dto/clip-audio.dto.js';
import { ClipAudioService } from './suno-clip-audio.service.js';

const AUDIO_CONTENT = Object.fromEntries(['audio/wav', 'audio/flac'].map((type) => [type, { schema: { type: 'string', format: 'binary' } }]));

@ApiTags('music')
@ApiBearerAuth(API_KEY_SCHEME)
@Controller('music-a/clips')
export class ClipAudioController {
  constructor(private readonly audio: ClipAudioService) {}

  @Get(':clip_id/audio')
  @ApiOperation({
    operationId: 'getClipAudio',
    summary: 'Download a clip as WAV or FLAC',
    description:
      'Any complete clip of yours made here (a take, an upload, a joined song), converted from its stored audio: format=wav is 16-bit PCM WAV, format=flac 16-bit FLAC, both at the clip\'s own sample rate and channel count (an MP3 take decodes to the same samples any decoder gives; a 16-bit upload comes back sample for sample). ' +
      'Served as an attachment named after the clip\'s title (else its id), with Content-Length; ETag with If-None-Match answers 304 without converting again. ' +
      'Another owner\'s clip or an unknown one is 404, a clip whose audio expired (RESULT_RETENTION_DAYS) 410, one still running 400. Error codes on this route are strings.',
  })
  @ApiParam({ name: 'clip_id', format: 'uuid', description: 'A clip id: data[].id of GET /music-a/fetch/{task_id} (an upload\'s clip id is its task id).' })
  @ApiHeader({ name: 'If-None-Match', required: false, description: 'The ETag of the copy the client has.' })
  @ApiOkResponse({ description: 'The audio, as an attachment (Content-Disposition).', content: AUDIO_CONTENT })
  @ApiResponse({ status: 304, description: 'The copy named in If-None-Match is current.' })
  @ApiErrors([...KEYED_ROUTE_ERRORS, 'INVALID_PARAMETER', 'NOT_FOUND', 'GONE', 'CONFLICT', 'UNAVAILABLE'], { stringCodes: true })
  download(
    @CurrentPrincipal() principal: Principal,
    @Param('clip_id') clipId: string,
    @Query() query: ClipAudioQueryDto,
    @Res() res: Response,
    @Headers('if-none-match') ifNoneMatch?: string,
  ): Promise<void> {
    return this.audio.send(principal, clipId, query.format, res, ifNoneMatch);
  }
}
