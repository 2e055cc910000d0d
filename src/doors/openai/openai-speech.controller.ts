import { Body, Controller, HttpCode, Post, Res } from '@nestjs/common';
import type { Response } from 'express';
import { ApiBearerAuth, ApiBody, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import type { Principal } from '../../common/auth/credential.js';
import { CurrentPrincipal } from '../../common/decorators/auth.decorators.js';
import { RequestBaseUrl } from '../../common/decorators/request.decorators.js';
import { BodyLimit } from '../../common/http/json-body.guard.js';
import { ADMISSION_ERRORS, ApiErrors, KEYED_ROUTE_ERRORS } from '../../common/swagger/api-errors.decorator.js';
import { API_KEY_SCHEME } from '../../common/swagger/security-schemes.js';
import { SPEECH_MAX_INPUT } from '../../vendors/contracts/speech-vendor.js';
import { CreateOpenAiSpeechDto } from './dto/openai-speech.dto.js';
import { OpenAiSpeechService } from './openai-speech.service.js';

const HELD_ERRORS = ['CONTENT_REFUSED', 'UPSTREAM_FAILED', 'TIMEOUT'] as const;
export const SPEECH_BODY_LIMIT_BYTES = 2 * SPEECH_MAX_INPUT * 12 + 4 * 1024;
const EXAMPLES = {
  simple: { summary: 'A sentence as MP3', value: { model: 'gpt-4o-mini-tts', input: 'The quick brown fox jumped over the lazy dog.', voice: 'coral' } },
  wav: { summary: 'WAV, with instructions, a little faster', value: { model: 'gpt-4o-mini-tts', input: 'Welcome back! Your video is ready.', voice: 'nova', instructions: 'Speak cheerfully.', response_format: 'wav', speed: 1.2 } },
  sse: { summary: 'Server-sent events', value: { model: 'tts-1', input: 'Streaming speech, one chunk at a time.', voice: 'alloy', stream_format: 'sse' } },
};

/** OpenAI's speech API (`/openai/v1/audio/speech`, so an OpenAI SDK's baseURL is `<gateway>/openai/v1`): held open until the audio is made. */
@ApiTags('speech')
@ApiBearerAuth(API_KEY_SCHEME)
@Controller('openai/v1/audio')
export class OpenAiSpeechController {
  constructor(private readonly speech: OpenAiSpeechService) {}

  @Post('speech')
  @HttpCode(200)
  // the longest body a valid request makes: input and instructions of 4,096 characters each, every one
  // outside the BMP and written as JSON's \uXXXX\uXXXX escapes (12 bytes), 98 kB, with room for the rest
  @BodyLimit(SPEECH_BODY_LIMIT_BYTES)
  @ApiOperation({
    operationId: 'createOpenAiSpeech',
    summary: 'Speak text (OpenAI audio.speech.create)',
    description:
      "Held until the speech task ends (SPEECH_TIMEOUT_S plus 15 s, or SPEECH_HOLD_S; then 504, the task going on), then answered with the audio in response_format, or with stream_format sse as server-sent events. The task, its audio and its cost are in GET /tasks. A voice no configured model speaks, or an input over 4,096 characters, is a 400 naming the field.",
  })
  @ApiBody({ type: CreateOpenAiSpeechDto, examples: EXAMPLES })
  // the audio's types on the 200 only: an error is JSON (ApiErrors), which a client generated from the document reads as such
  @ApiOkResponse({
    description: 'The audio (binary) in response_format, or with stream_format sse server-sent events (speech.audio.delta, then speech.audio.done).',
    content: {
      ...Object.fromEntries(['audio/mpeg', 'audio/ogg', 'audio/aac', 'audio/flac', 'audio/wav', 'audio/pcm'].map((type) => [type, { schema: { type: 'string', format: 'binary' } }])),
      'text/event-stream': { schema: { type: 'string', example: 'data: {"type":"speech.audio.delta","audio":"…"}\n\ndata: {"type":"speech.audio.done","usage":{…}}\n\n' } },
    },
  })
  @ApiErrors([...KEYED_ROUTE_ERRORS, ...ADMISSION_ERRORS, 'INVALID_PARAMETER', ...HELD_ERRORS], { openAi: true })
  create(@CurrentPrincipal() principal: Principal, @Body() dto: CreateOpenAiSpeechDto, @Res() res: Response, @RequestBaseUrl() base?: string): Promise<void> {
    return this.speech.create(principal, dto, res, base);
  }
}
