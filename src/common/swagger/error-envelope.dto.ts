import { ApiProperty } from '@nestjs/swagger';

export class ErrorEnvelopeDto {
  @ApiProperty({ description: 'Error code (see the error-code table).', example: 1201 })
  code!: number;

  @ApiProperty({ description: 'What is wrong, naming the field and the rule.', example: 'left_expansion_ratio must be between 0 and 2' })
  message!: string;

  @ApiProperty({ description: 'Id of this request; also in the X-Request-Id header. Quote it when reporting a problem.', example: '9f0d7a9e-3b1c-4c55-8f7e-2b1d0c9a8e71' })
  request_id!: string;
}

/** Error envelope of the audio route, whose success reply has a string `code`. */
export class StringCodeErrorEnvelopeDto {
  @ApiProperty({ description: 'Error code as a string (see the error-code table).', example: 'invalid_parameter' })
  code!: string;

  @ApiProperty({ example: 'url must be an http or https URL' })
  message!: string;

  @ApiProperty({ example: '9f0d7a9e-3b1c-4c55-8f7e-2b1d0c9a8e71' })
  request_id!: string;
}

/** The error inside the OpenAI-style door's envelope, as OpenAI's SDKs read it. */
export class OpenAiErrorDto {
  @ApiProperty({ example: 'size must be WxH in pixels, each side 10 to 9999, such as "1280x720" or "720x1280"' })
  message!: string;

  @ApiProperty({ enum: ['invalid_request_error', 'authentication_error', 'permission_error', 'rate_limit_error', 'insufficient_quota', 'server_error', 'image_generation_user_error'], example: 'invalid_request_error' })
  type!: string;

  @ApiProperty({
    description:
      "OpenAI's own code where it has one: a refused parameter's rule (invalid_value, missing_required_parameter, invalid_type, integer_below_min_value, integer_above_max_value, decimal_below_min_value, decimal_above_max_value, string_above_max_length, empty_string, array_above_max_length), invalid_api_key (401), rate_limit_exceeded, insufficient_quota, moderation_blocked; else the error code's name (see the error-code table).",
    example: 'invalid_value',
  })
  code!: string;

  @ApiProperty({ type: String, nullable: true, description: 'The refused parameter (400s).', example: 'size' })
  param!: string | null;
}

/** Error envelope of the OpenAI-style door (`/openai/v1`). */
export class OpenAiErrorEnvelopeDto {
  @ApiProperty({ type: OpenAiErrorDto })
  error!: OpenAiErrorDto;

  @ApiProperty({ description: 'Id of this request; also in the X-Request-Id header.', example: '9f0d7a9e-3b1c-4c55-8f7e-2b1d0c9a8e71' })
  request_id!: string;
}

/** Error answer of the sunoapi.org-shaped door (`/sunoapi/api/v1`): the family's `{code, msg, data}`, `code` one of theirs, with the service's `message` and `request_id` beside. */
export class SunoapiErrorEnvelopeDto {
  @ApiProperty({
    description: "The family's code: 400 parameters, 401 unauthorized, 404 not found, 405 too many unfinished tasks, 413 body too large, 429 insufficient credits, 430 call frequency too high, 455 unavailable, 500 server error (the HTTP status is ours: the error-code table's).",
    example: 400,
  })
  code!: number;

  @ApiProperty({ description: 'What is wrong, naming the field and the rule.', example: 'style is required in custom mode (customMode true)' })
  msg!: string;

  @ApiProperty({ type: Object, nullable: true, description: 'Always null on an error.', example: null })
  data!: null;

  @ApiProperty({ description: 'The same words as msg (the envelope every error of this service carries).', example: 'style is required in custom mode (customMode true)' })
  message!: string;

  @ApiProperty({ description: 'Id of this request; also in the X-Request-Id header.', example: '9f0d7a9e-3b1c-4c55-8f7e-2b1d0c9a8e71' })
  request_id!: string;
}

/** ElevenLabs' error (`detail` of its door's answers but 422s). */
export class ElevenLabsErrorDetailDto {
  @ApiProperty({
    description: "ElevenLabs' word where it has one (invalid_api_key, needs_authorization, quota_exceeded, too_many_concurrent_requests, bad_prompt), else the error code's name (see the error-code table).",
    example: 'invalid_api_key',
  })
  status!: string;

  @ApiProperty({ example: 'API key is not valid' })
  message!: string;
}

/** Error envelope of ElevenLabs' door (`/elevenlabs/v1`), as ElevenLabs' SDKs read it. */
export class ElevenLabsErrorEnvelopeDto {
  @ApiProperty({ type: ElevenLabsErrorDetailDto })
  detail!: ElevenLabsErrorDetailDto;

  @ApiProperty({ description: 'Id of this request; also in the X-Request-Id header.', example: '9f0d7a9e-3b1c-4c55-8f7e-2b1d0c9a8e71' })
  request_id!: string;
}

/** One refused field of a 422 on ElevenLabs' door, as ElevenLabs (FastAPI) words it. */
export class ElevenLabsValidationItemDto {
  @ApiProperty({ description: 'The rule broken, in pydantic\'s words: missing, type_error, value_error, greater_than_equal, less_than_equal, string_too_long, string_too_short, too_long, json_invalid.', example: 'less_than_equal' })
  type!: string;

  @ApiProperty({ description: 'Where: "body" or "query", then the field\'s path.', type: 'array', items: { oneOf: [{ type: 'string' }, { type: 'integer' }] }, example: ['body', 'music_length_ms'] })
  loc!: (string | number)[];

  @ApiProperty({ description: 'Every fault of the request in words, each naming its field and rule.', example: 'music_length_ms must be a whole number from 3000 to 600000' })
  msg!: string;
}

/** A refused request on ElevenLabs' door (422), as its SDKs type it (`UnprocessableEntityError`). */
export class ElevenLabsValidationErrorEnvelopeDto {
  @ApiProperty({ type: [ElevenLabsValidationItemDto] })
  detail!: ElevenLabsValidationItemDto[];

  @ApiProperty({ description: 'Id of this request; also in the X-Request-Id header.', example: '9f0d7a9e-3b1c-4c55-8f7e-2b1d0c9a8e71' })
  request_id!: string;
}
