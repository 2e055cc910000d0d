import { Body, Controller, HttpCode, Post } from '@nestjs/common';
import { ApiBearerAuth, ApiBody, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import type { Principal } from '../../common/auth/credential.js';
import { CurrentPrincipal } from '../../common/decorators/auth.decorators.js';
import { RequestBaseUrl } from '../../common/decorators/request.decorators.js';
import { ADMISSION_ERRORS, ApiErrors, KEYED_ROUTE_ERRORS } from '../../common/swagger/api-errors.decorator.js';
import { API_KEY_SCHEME } from '../../common/swagger/security-schemes.js';
import { MusicSubmitResultDto } from './dto/music-task.dto.js';
import { SubmitMusicDto } from './dto/submit-music.dto.js';
import { MusicService } from './suno-music.service.js';

@ApiTags('music')
@ApiBearerAuth(API_KEY_SCHEME)
@Controller('music-a/submit')
export class MusicController {
  constructor(private readonly music: MusicService) {}

  @Post('music')
  @HttpCode(200)
  @ApiOperation({
    operationId: 'submitMusic',
    summary: 'Make a new song, or continue a clip',
    description:
      'Suno-API body. Two clips (takes) are made; fetch the task with GET /music-a/fetch/{task_id} until SUCCESS. A continuation (continue_clip_id, continue_at) holds only its new part; ' +
      'join the chain into one song with POST /music-a/submit/concat. Error codes on this route are strings.',
  })
  @ApiBody({
    type: SubmitMusicDto,
    examples: {
      song: { summary: 'A new song', value: { prompt: '[Verse]\nMorning light upon the bay\n[Chorus]\nHold the tide', tags: 'lo-fi, piano, calm', title: 'Morning tide', mv: 'chirp-v4' } },
      description: { summary: 'A new song from a description', value: { gpt_description_prompt: 'a cheerful song about a bicycle ride', make_instrumental: true } },
      continuation: { summary: 'Continue a clip from its 5th second (put one of your clip ids)', value: { continue_clip_id: '5b6c7d8e-9f0a-4b1c-8d2e-3f4a5b6c7d8e', continue_at: 5, prompt: '[Bridge]\nFarther out', tags: 'lo-fi' } },
    },
  })
  @ApiOkResponse({ type: MusicSubmitResultDto })
  @ApiErrors([...KEYED_ROUTE_ERRORS, ...ADMISSION_ERRORS, 'INVALID_REQUEST', 'INVALID_PARAMETER', 'NOT_FOUND', 'GONE'], { stringCodes: true })
  submit(@CurrentPrincipal() principal: Principal, @Body() body: SubmitMusicDto, @RequestBaseUrl() base?: string): Promise<MusicSubmitResultDto> {
    return this.music.submit(principal, body, base);
  }
}
