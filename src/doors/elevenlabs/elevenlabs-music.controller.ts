import { Body, Controller, HttpCode, Post, Query, Res } from '@nestjs/common';
import type { Response } from 'express';
import { ApiBearerAuth, ApiBody, ApiOkResponse, ApiOperation, ApiProduces, ApiSecurity, ApiTags } from '@nestjs/swagger';
import type { Principal } from '../../common/auth/credential.js';
import { CurrentPrincipal, KeyHeader } from '../../common/decorators/auth.decorators.js';
import { RequestBaseUrl } from '../../common/decorators/request.decorators.js';
import { ADMISSION_ERRORS, ApiErrors, KEYED_ROUTE_ERRORS } from '../../common/swagger/api-errors.decorator.js';
import { API_KEY_SCHEME, ELEVENLABS_KEY_SCHEME } from '../../common/swagger/security-schemes.js';
import { ElevenLabsComposeMusicDto, ElevenLabsMusicQueryDto } from './dto/elevenlabs-music.dto.js';
import { ElevenLabsMusicService } from './elevenlabs-music.service.js';

const HELD_ERRORS = ['CONTENT_REFUSED', 'UPSTREAM_FAILED', 'TIMEOUT'] as const;
const ERRORS = [...KEYED_ROUTE_ERRORS, ...ADMISSION_ERRORS, 'INVALID_PARAMETER', ...HELD_ERRORS] as const;
const EXAMPLES = {
  prompt: { summary: 'A song from a prompt, 30 s', value: { prompt: 'An upbeat lo-fi track about a morning bike ride, warm piano', music_length_ms: 30_000 } },
  instrumental: { summary: 'An instrumental, 20 s', value: { prompt: 'Calm ambient pads for a meditation app', music_length_ms: 20_000, force_instrumental: true } },
  plan: {
    summary: 'A composition plan: two sections, 20 s in all',
    value: {
      composition_plan: {
        positive_global_styles: ['lo-fi', 'piano'],
        negative_global_styles: ['heavy metal'],
        sections: [
          { section_name: 'Verse', positive_local_styles: ['soft'], negative_local_styles: [], duration_ms: 10_000, lines: ['Morning light upon the bay', 'Wheels turning on the way'] },
          { section_name: 'Chorus', positive_local_styles: ['anthemic'], negative_local_styles: ['drums'], duration_ms: 10_000, lines: ['Hold the tide'] },
        ],
      },
    },
  },
};
const HOW =
  "ElevenLabs' body (its SDKs work with baseUrl <gateway>/elevenlabs and the team's key as apiKey, sent in xi-api-key). The request becomes a music task, served by any configured music vendor that makes it; it is held until the task ends " +
  '(MUSIC_TIMEOUT_S plus 15 s, or MUSIC_HOLD_S; then 504, the task going on), then answered with the first take\'s audio (MP3), its task id in the song-id header; the task and its songs are in GET /tasks and GET /music-a/fetch/{id}. ' +
  'prompt: the vendor writes the lyrics; composition_plan: its lines are sung as the sections\' lyrics, its sections\' durations are the length, a plan without lines is an instrumental. ' +
  'model_id is used where a configured model has that name. A field no configured model makes (a length, an instrumental …) is a 422 naming it, as is a request the serving vendor refuses (in its words). Errors are ElevenLabs\' shape: {"detail": {status, message}}, a refused request {"detail": [{type, loc, msg}]}.';

/** ElevenLabs' music API (`/elevenlabs/v1/music`, so an ElevenLabs SDK's baseUrl is `<gateway>/elevenlabs`): held open until the song is made. */
@ApiTags('music')
@ApiBearerAuth(API_KEY_SCHEME)
@ApiSecurity(ELEVENLABS_KEY_SCHEME)
@KeyHeader('xi-api-key')
@Controller('elevenlabs/v1/music')
export class ElevenLabsMusicController {
  constructor(private readonly music: ElevenLabsMusicService) {}

  @Post()
  @HttpCode(200)
  @ApiOperation({ operationId: 'composeElevenLabsMusic', summary: 'Compose a song (ElevenLabs music.compose)', description: HOW })
  @ApiBody({ type: ElevenLabsComposeMusicDto, examples: EXAMPLES })
  @ApiProduces('audio/mpeg', 'application/json')
  @ApiOkResponse({ description: 'The song (binary MP3); the song-id header is its task id.', schema: { type: 'string', format: 'binary' } })
  @ApiErrors(ERRORS, { elevenLabs: true })
  compose(@CurrentPrincipal() principal: Principal, @Query() query: ElevenLabsMusicQueryDto, @Body() dto: ElevenLabsComposeMusicDto, @Res() res: Response, @RequestBaseUrl() base?: string): Promise<void> {
    void query.output_format; // every output_format taken is answered as the MP3 made
    return this.music.compose(principal, dto, res, false, base);
  }

  @Post('stream')
  @HttpCode(200)
  @ApiOperation({ operationId: 'streamElevenLabsMusic', summary: 'Compose a song, streamed (ElevenLabs music.stream)', description: `${HOW} This route answers the same audio in chunks (Transfer-Encoding: chunked) once the song is made.` })
  @ApiBody({ type: ElevenLabsComposeMusicDto, examples: EXAMPLES })
  @ApiProduces('audio/mpeg', 'application/json')
  @ApiOkResponse({ description: 'The song (binary MP3), chunked; the song-id header is its task id.', schema: { type: 'string', format: 'binary' } })
  @ApiErrors(ERRORS, { elevenLabs: true })
  stream(@CurrentPrincipal() principal: Principal, @Query() query: ElevenLabsMusicQueryDto, @Body() dto: ElevenLabsComposeMusicDto, @Res() res: Response, @RequestBaseUrl() base?: string): Promise<void> {
    void query.output_format;
    return this.music.compose(principal, dto, res, true, base);
  }
}
