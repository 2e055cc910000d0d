import { Body, Controller, HttpCode, Post } from '@nestjs/common';
import { ApiBearerAuth, ApiBody, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import type { Principal } from '../../common/auth/credential.js';
import { CurrentPrincipal } from '../../common/decorators/auth.decorators.js';
import { RequestBaseUrl } from '../../common/decorators/request.decorators.js';
import { ADMISSION_ERRORS, ApiErrors, KEYED_ROUTE_ERRORS } from '../../common/swagger/api-errors.decorator.js';
import { API_KEY_SCHEME } from '../../common/swagger/security-schemes.js';
import { MusicSubmitResultDto } from './dto/music-task.dto.js';
import { SubmitStemsDto } from './dto/submit-stems.dto.js';
import { StemsService } from './suno-stems.service.js';

@ApiTags('music')
@ApiBearerAuth(API_KEY_SCHEME)
@Controller('music-a/submit')
export class StemsController {
  constructor(private readonly stems: StemsService) {}

  @Post('stems')
  @HttpCode(200)
  @ApiOperation({
    operationId: 'submitStems',
    summary: 'Split a clip into stems',
    description:
      'A clip stored here (a take, an upload, a joined song) split into its stems by a vendor that separates them (ElevenLabs; the sandbox offline): two (vocals and instrumental) or all it makes. ' +
      'Fetch the task with GET /music-a/fetch/{task_id} until SUCCESS: its clips are the stems (action STEMS), each titled by its stem\'s name, continued, joined or downloaded as any clip. Error codes on this route are strings.',
  })
  @ApiBody({
    type: SubmitStemsDto,
    examples: {
      two: { summary: 'Vocals and instrumental (put one of your clip ids)', value: { clip_id: '5b6c7d8e-9f0a-4b1c-8d2e-3f4a5b6c7d8e' } },
      all: { summary: 'Every stem the model makes (put one of your clip ids)', value: { clip_id: '5b6c7d8e-9f0a-4b1c-8d2e-3f4a5b6c7d8e', stems: 'all' } },
    },
  })
  @ApiOkResponse({ type: MusicSubmitResultDto })
  @ApiErrors([...KEYED_ROUTE_ERRORS, ...ADMISSION_ERRORS, 'INVALID_REQUEST', 'INVALID_PARAMETER', 'NOT_FOUND', 'GONE'], { stringCodes: true })
  submit(@CurrentPrincipal() principal: Principal, @Body() body: SubmitStemsDto, @RequestBaseUrl() base?: string): Promise<MusicSubmitResultDto> {
    return this.stems.submit(principal, body, base);
  }
}
