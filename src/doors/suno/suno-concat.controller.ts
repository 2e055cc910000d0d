import { Body, Controller, HttpCode, Post } from '@nestjs/common';
import { ApiBearerAuth, ApiBody, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import type { Principal } from '../../common/auth/credential.js';
import { CurrentPrincipal } from '../../common/decorators/auth.decorators.js';
import { RequestBaseUrl } from '../../common/decorators/request.decorators.js';
import { ADMISSION_ERRORS, ApiErrors, KEYED_ROUTE_ERRORS } from '../../common/swagger/api-errors.decorator.js';
import { API_KEY_SCHEME } from '../../common/swagger/security-schemes.js';
import { MusicSubmitResultDto } from './dto/music-task.dto.js';
import { ConcatService } from './suno-concat.service.js';
import { SubmitConcatDto } from './dto/submit-concat.dto.js';

@ApiTags('music')
@ApiBearerAuth(API_KEY_SCHEME)
@Controller('music-a/submit')
export class ConcatController {
  constructor(private readonly concat: ConcatService) {}

  @Post('concat')
  @HttpCode(200)
  @ApiOperation({
    operationId: 'submitConcat',
    summary: 'Join clips into one song',
    description:
      'clip_id (Suno): the last clip of a continuation chain; the song is the chain from its first clip, each part cut where the next continues it (the CONCAT clip\'s metadata.concat_history lists them). ' +
      'clip_ids: clips joined whole, end to end. Fetch the task with GET /music-a/fetch/{task_id}. Error codes on this route are strings.',
  })
  @ApiBody({
    type: SubmitConcatDto,
    examples: {
      chain: { summary: 'The whole song of a continuation chain (put your last clip id)', value: { clip_id: '5b6c7d8e-9f0a-4b1c-8d2e-3f4a5b6c7d8e' } },
      list: { summary: 'Clips end to end (put your clip ids)', value: { clip_ids: ['5b6c7d8e-9f0a-4b1c-8d2e-3f4a5b6c7d8e', '6c7d8e9f-0a1b-4c2d-8e3f-4a5b6c7d8e9f'] } },
    },
  })
  @ApiOkResponse({ type: MusicSubmitResultDto })
  @ApiErrors([...KEYED_ROUTE_ERRORS, ...ADMISSION_ERRORS, 'INVALID_REQUEST', 'INVALID_PARAMETER', 'NOT_FOUND', 'GONE'], { stringCodes: true })
  submit(@CurrentPrincipal() principal: Principal, @Body() body: SubmitConcatDto, @RequestBaseUrl() base?: string): Promise<MusicSubmitResultDto> {
    return this.concat.submit(principal, body, base);
  }
}
