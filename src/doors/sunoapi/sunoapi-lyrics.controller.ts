import { Body, Controller, HttpCode, Post } from '@nestjs/common';
import { ApiBearerAuth, ApiBody, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import type { Principal } from '../../common/auth/credential.js';
import { CurrentPrincipal } from '../../common/decorators/auth.decorators.js';
import { ApiErrors, KEYED_ROUTE_ERRORS } from '../../common/swagger/api-errors.decorator.js';
import { API_KEY_SCHEME } from '../../common/swagger/security-schemes.js';
import { SunoapiTimestampedLyricsBodyDto, SunoapiTimestampedLyricsDto } from './dto/sunoapi-lyrics.dto.js';
import { SunoapiLyricsService } from './sunoapi-lyrics.service.js';

/** The sunoapi.org family's timestamped lyrics, under `/sunoapi` as its other routes. */
@ApiTags('music')
@ApiBearerAuth(API_KEY_SCHEME)
@Controller('sunoapi/api/v1/generate')
export class SunoapiLyricsController {
  constructor(private readonly lyrics: SunoapiLyricsService) {}

  @Post('get-timestamped-lyrics')
  @HttpCode(200)
  @ApiOperation({
    operationId: 'sunoapiTimestampedLyrics',
    summary: "A take's lyrics, timed word by word (sunoapi.org shape)",
    description:
      "docs.sunoapi.org's Get Timestamped Lyrics: the words of a complete take of one of your music tasks (whichever door made it), each with its start and end in seconds on the track its record answers (an upload-extend's whole track: from its continueAt), in the order sung, as the model that made it timed them (sunoapi.org's family, Mureka; the sandbox times the lyrics it sings). " +
      'A take without timed words (an instrumental, a model that times none) answers alignedWords empty, as theirs does for an instrumental. Errors `{code, msg, data: null}`: an unknown task, or a take not of that task, 404; a take still running 400.',
  })
  @ApiBody({ type: SunoapiTimestampedLyricsBodyDto, examples: { take: { summary: "A take of one of your tasks (put a taskId and one of its record's sunoData ids)", value: { taskId: '5b6c7d8e-9f0a-4b1c-8d2e-3f4a5b6c7d8e', audioId: '7d8e9f0a-1b2c-4d3e-8f4a-5b6c7d8e9f0a' } } } })
  @ApiOkResponse({ type: SunoapiTimestampedLyricsDto })
  @ApiErrors([...KEYED_ROUTE_ERRORS, 'INVALID_PARAMETER', 'NOT_FOUND'], { sunoapi: true })
  timestamped(@CurrentPrincipal() principal: Principal, @Body() body: SunoapiTimestampedLyricsBodyDto): Promise<SunoapiTimestampedLyricsDto> {
    return this.lyrics.timestamped(principal, body.taskId, body.audioId);
  }
}
