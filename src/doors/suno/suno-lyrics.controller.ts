import { Body, Controller, HttpCode, Post } from '@nestjs/common';
import { ApiBearerAuth, ApiBody, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import type { Principal } from '../../common/auth/credential.js';
import { CurrentPrincipal } from '../../common/decorators/auth.decorators.js';
import { RequestBaseUrl } from '../../common/decorators/request.decorators.js';
import { ADMISSION_ERRORS, ApiErrors, KEYED_ROUTE_ERRORS } from '../../common/swagger/api-errors.decorator.js';
import { API_KEY_SCHEME } from '../../common/swagger/security-schemes.js';
import { MusicSubmitResultDto } from './dto/music-task.dto.js';
import { SubmitLyricsDto } from './dto/submit-lyrics.dto.js';
import { LyricsService } from './suno-lyrics.service.js';

@ApiTags('lyrics')
@ApiBearerAuth(API_KEY_SCHEME)
@Controller('music-a/submit')
export class LyricsController {
  constructor(private readonly lyrics: LyricsService) {}

  @Post('lyrics')
  @HttpCode(200)
  @ApiOperation({
    operationId: 'submitLyrics',
    summary: 'Write lyrics from a prompt',
    description:
      "new-api's /submit/lyrics: a title and lyrics with section tags ([Verse], [Chorus], [Bridge]) written from the prompt; fetch the task with GET /music-a/fetch/{task_id} (action LYRICS) until SUCCESS, " +
      'its lyrics in data.text and data.title. Sing them with POST /music-a/submit/music (prompt). Error codes on this route are strings.',
  })
  @ApiBody({
    type: SubmitLyricsDto,
    examples: {
      simple: { summary: 'Lyrics about a theme', value: { prompt: 'a summer road trip along the coast with old friends' } },
      model: { summary: 'With a model', value: { prompt: 'rain on a city night, missing someone', mv: 'suno_lyrics' } },
    },
  })
  @ApiOkResponse({ type: MusicSubmitResultDto })
  @ApiErrors([...KEYED_ROUTE_ERRORS, ...ADMISSION_ERRORS, 'INVALID_REQUEST', 'INVALID_PARAMETER'], { stringCodes: true })
  submit(@CurrentPrincipal() principal: Principal, @Body() body: SubmitLyricsDto, @RequestBaseUrl() base?: string): Promise<MusicSubmitResultDto> {
    return this.lyrics.submit(principal, body, base);
  }
}
