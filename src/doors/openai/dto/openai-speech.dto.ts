import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsIn, IsNumber, IsOptional, IsString, Matches, Max, Min, ValidateBy, type ValidationOptions } from 'class-validator';
import { MaxChars } from '../../../common/validation/validators.js';
import { SPEECH_FORMATS, SPEECH_MAX_INPUT, type SpeechFormat } from '../../../vendors/contracts/speech-vendor.js';
import { NullAsAbsent } from '../../../common/validation/body-fields.js';

export const STREAM_FORMATS = ['audio', 'sse'] as const;

const VOICE_RULE = 'voice must be a voice name such as "alloy" (1 to 64 letters, digits and . _ -) or an object {"id": "<a voice id>"} (1 to 128 characters)';

/** OpenAI's `voice`: a name, or `{id}` (a custom or vendor voice). */
function IsVoice(options?: ValidationOptions): PropertyDecorator {
  return ValidateBy(
    {
      name: 'isVoice',
      validator: {
        validate: (value: unknown) =>
          (typeof value === 'string' && /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/.test(value)) ||
          (typeof value === 'object' && value !== null && !Array.isArray(value) && Object.keys(value).length === 1 && typeof (value as { id?: unknown }).id === 'string' && /^\S{1,128}$/.test((value as { id: string }).id)),
        defaultMessage: () => VOICE_RULE,
      },
    },
    options,
  );
}

/** OpenAI's `POST /audio/speech` body (its names; a JSON null is the default, as OpenAI reads it). */
@NullAsAbsent()
export class CreateOpenAiSpeechDto {
  @ApiProperty({ description: 'A speech model GET /models lists (operation speech): gpt-4o-mini-tts, tts-1, tts-1-hd, eleven_multilingual_v2, gemini-2.5-flash-preview-tts … as the channels serve them; `sandbox` in the sandbox speaks anything.', example: 'gpt-4o-mini-tts', maxLength: 64 })
  @IsString({ message: 'model must be a string naming a speech model GET /models lists' })
  @Matches(/^[A-Za-z0-9][A-Za-z0-9._:-]{0,63}$/, { message: 'model must name a speech model GET /models lists (1 to 64 letters, digits and . _ : -)' })
  model!: string;

  @ApiProperty({ description: `The text to speak, at most ${SPEECH_MAX_INPUT} characters.`, minLength: 1, maxLength: SPEECH_MAX_INPUT, example: 'The quick brown fox jumped over the lazy dog.' })
  @IsString({ message: 'input must be a string' })
  @Matches(/\S/, { message: 'input must not be empty or blank' })
  @MaxChars(SPEECH_MAX_INPUT)
  input!: string;

  @ApiProperty({
    oneOf: [{ type: 'string', example: 'coral' }, { type: 'object', properties: { id: { type: 'string' } }, required: ['id'] }],
    description: "A voice name (OpenAI's alloy, ash, ballad, coral, echo, fable, nova, onyx, sage, shimmer, verse, marin, cedar; or a name a channel maps), each model's list in GET /models; or {\"id\": …}, a vendor's own voice id, where the model takes one.",
    example: 'coral',
  })
  @IsVoice()
  voice!: string | { id: string };

  @ApiPropertyOptional({ description: 'How to speak (gpt-4o-mini-tts, Gemini; not tts-1 or tts-1-hd).', example: 'Speak in a cheerful and positive tone.', maxLength: SPEECH_MAX_INPUT })
  @IsOptional()
  @IsString({ message: 'instructions must be a string' })
  @MaxChars(SPEECH_MAX_INPUT)
  instructions?: string;

  @ApiPropertyOptional({ enum: SPEECH_FORMATS, description: 'The audio format (default mp3); pcm is raw 16-bit little-endian mono at 24 kHz.', example: 'mp3' })
  @IsOptional()
  @IsIn(SPEECH_FORMATS, { message: `response_format must be one of ${SPEECH_FORMATS.join(', ')}` })
  response_format?: SpeechFormat;

  @ApiPropertyOptional({ description: 'From 0.25 to 4 (default 1), where the model takes it.', minimum: 0.25, maximum: 4, example: 1 })
  @IsOptional()
  @IsNumber({ allowNaN: false, allowInfinity: false }, { message: 'speed must be a number from 0.25 to 4' })
  @Min(0.25, { message: 'speed must be a number from 0.25 to 4' })
  @Max(4, { message: 'speed must be a number from 0.25 to 4' })
  speed?: number;

  @ApiPropertyOptional({ enum: STREAM_FORMATS, description: '`audio` (default): the audio itself; `sse`: server-sent events, `speech.audio.delta` with Base64 audio then `speech.audio.done` with usage.', example: 'audio' })
  @IsOptional()
  @IsIn(STREAM_FORMATS, { message: 'stream_format must be audio or sse' })
  stream_format?: (typeof STREAM_FORMATS)[number];
}
