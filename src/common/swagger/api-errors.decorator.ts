import { applyDecorators } from '@nestjs/common';
import { ApiResponse } from '@nestjs/swagger';
import type { ErrorCode } from '../errors/app-error.js';
import { describeError } from '../errors/error-catalog.js';
import { elevenLabsError, elevenLabsStatus } from '../errors/elevenlabs-error.js';
import { type OpenAiApi, openAiError } from '../errors/openai-error.js';
import { sunoapiErrorCode } from '../errors/sunoapi-error.js';
import { ElevenLabsErrorEnvelopeDto, ElevenLabsValidationErrorEnvelopeDto, ErrorEnvelopeDto, OpenAiErrorEnvelopeDto, StringCodeErrorEnvelopeDto, SunoapiErrorEnvelopeDto } from './error-envelope.dto.js';

/** Errors every keyed JSON route can answer. */
export const KEYED_ROUTE_ERRORS: readonly ErrorCode[] = [
  'AUTH_MISSING',
  'AUTH_MALFORMED',
  'AUTH_FAILED',
  'AUTH_REVOKED',
  'AUTH_THROTTLED',
  'INVALID_REQUEST',
  'UNSUPPORTED_MEDIA_TYPE',
  'PAYLOAD_TOO_LARGE',
  'RATE_LIMITED',
  'INTERNAL',
  'UNAVAILABLE',
];

/** What a route that creates a task adds: the owner's concurrency and credit limits. */
export const ADMISSION_ERRORS: readonly ErrorCode[] = ['CONCURRENCY_LIMITED', 'CREDITS_EXHAUSTED'];

/** Documents the error replies of an operation: one response per status, an example per code. */
export function ApiErrors(codes: readonly ErrorCode[], options: { stringCodes?: boolean; openAi?: boolean | OpenAiApi; sunoapi?: boolean; elevenLabs?: boolean } = {}): MethodDecorator & ClassDecorator {
  const byStatus = new Map<number, ErrorCode[]>();
  for (const code of new Set(codes)) {
    const status = options.elevenLabs ? elevenLabsStatus(describeError(code)) : describeError(code).status;
    byStatus.set(status, [...(byStatus.get(status) ?? []), code]);
  }
  const decorators = [...byStatus.entries()]
    .sort(([a], [b]) => a - b)
    .map(([status, group]) =>
      ApiResponse({
        status,
        type: options.elevenLabs ? (status === 422 ? ElevenLabsValidationErrorEnvelopeDto : ElevenLabsErrorEnvelopeDto) : options.openAi ? OpenAiErrorEnvelopeDto : options.sunoapi ? SunoapiErrorEnvelopeDto : options.stringCodes ? StringCodeErrorEnvelopeDto : ErrorEnvelopeDto,
        description: group.map((c) => `\`${options.sunoapi ? sunoapiErrorCode(status, describeError(c).name) : wireCode(c, options.stringCodes)}\` ${describeError(c).meaning}`).join(' · '),
        examples: Object.fromEntries(
          group.map((c) => [
            c,
            {
              summary: describeError(c).meaning,
              value: options.elevenLabs
                ? { ...elevenLabsError(describeError(c), c, describeError(c).meaning, undefined), request_id: '9f0d7a9e-3b1c-4c55-8f7e-2b1d0c9a8e71' }
                : options.openAi
                ? { error: openAiError(status, describeError(c).name, describeError(c).meaning, undefined, options.openAi === 'images' ? 'images' : 'other'), request_id: '9f0d7a9e-3b1c-4c55-8f7e-2b1d0c9a8e71' }
                : options.sunoapi
                  ? { code: sunoapiErrorCode(status, describeError(c).name), msg: describeError(c).meaning, data: null, message: describeError(c).meaning, request_id: '9f0d7a9e-3b1c-4c55-8f7e-2b1d0c9a8e71' }
                  : { code: wireCode(c, options.stringCodes), message: describeError(c).meaning, request_id: '9f0d7a9e-3b1c-4c55-8f7e-2b1d0c9a8e71' },
            },
          ]),
        ),
      }),
    );
  return applyDecorators(...decorators);
}

function wireCode(code: ErrorCode, stringCodes?: boolean): string | number {
  return stringCodes ? describeError(code).name : describeError(code).code;
}
