/**
 * Domain error codes. They say what went wrong and know nothing of HTTP;
 * the global filter (error-catalog.ts) maps each one to a status and a wire code.
 */
export const ERROR_CODES = [
  'AUTH_FAILED',
  'AUTH_MISSING',
  'AUTH_MALFORMED',
  'AUTH_REVOKED',
  'AUTH_THROTTLED',
  'FORBIDDEN',
  'INVALID_REQUEST',
  'INVALID_PARAMETER',
  'NOT_FOUND',
  'NOT_SUPPORTED',
  'CONFLICT',
  'GONE',
  'PAYLOAD_TOO_LARGE',
  'RANGE_NOT_SATISFIABLE',
  'UNSUPPORTED_MEDIA_TYPE',
  'RATE_LIMITED',
  'CONCURRENCY_LIMITED',
  'CREDITS_EXHAUSTED',
  'CONTENT_REFUSED',
  'UPSTREAM_FAILED',
  'TIMEOUT',
  'INTERNAL',
  'UNAVAILABLE',
] as const;

export type ErrorCode = (typeof ERROR_CODES)[number];

export class AppError extends Error {
  constructor(
    readonly code: ErrorCode,
    message: string,
    /** For refusals that may succeed later (limits, overload, outages): when to try again. */
    readonly retryAfterS?: number,
  ) {
    super(message);
    this.name = 'AppError';
  }
}
