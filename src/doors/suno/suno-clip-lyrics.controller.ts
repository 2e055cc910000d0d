import { Controller, Get, Param } from '@nestjs/common';
import { ApiBearerAuth, ApiOkResponse, ApiOperation, ApiParam, ApiTags } from '@nestjs/swagger';
import type { Principal } from '../../common/auth/credential.js';
import { CurrentPrincipal } from '../../common/decorators/auth.decorators.js';
import { ApiErrors, KEYED_ROUTE_ERRORS } from '../../common/swagger/api-errors.decorator.js';
import { API_KEY_SCHEME } from '../../common/swagger/security-schemes.js';
import { ClipLyricsResultDto } from './dto/clip-lyrics.dto.js';
import { ClipLyricsService } from './suno-clip-lyrics.service.js';

@ApiTags('music')
@ApiBearerAuth(API_KEY_SCHEME)
@Controller('music-a/clips')
export class ClipLyricsController {
  constructor(private readonly lyrics: ClipLyricsService) {}

  @Get(':clip_id/lyrics')
  @ApiOperation({
    operationId: 'getClipTimedLyrics',
    summary: "A clip's lyrics, timed word by word",
    description:
      "The words of a complete take made here, each with its start and end in seconds from the clip's start, in the order sung, as Suno's aligned lyrics give them (aligned_words). " +
      'Kept where the model that made it times its words (Mureka; the sandbox, which times the lyrics asked or those it wrote from the description). ' +
      'A clip without timed lyrics (an upload, a joined song, an instrumental, a model that times none) is 404 saying why; another owner\'s clip or an unknown one is 404, one still running 400. Error codes on this route are strings.',
  })
  @ApiParam({ name: 'clip_id', format: 'uuid', description: 'A clip id: data[].id of GET /music-a/fetch/{task_id}.' })
  @ApiOkResponse({ type: ClipLyricsResultDto })
  @ApiErrors([...KEYED_ROUTE_ERRORS, 'INVALID_PARAMETER', 'NOT_FOUND'], { stringCodes: true })
  timed(@CurrentPrincipal() principal: Principal, @Param('clip_id') clipId: string): Promise<ClipLyricsResultDto> {
    return this.lyrics.timed(principal, clipId);
  }
}
