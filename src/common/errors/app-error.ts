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
  'METHOD_NOT_ALLOWED',
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

/**
 * The rule a refused parameter broke, where a door's clients read it apart from the message (OpenAI's
 * SDKs read `code` and `param`): `missing` a required field absent, `type` a value of the wrong JSON type
 * (a decimal where a whole number is due, too), `below_min` / `above_max` a number out of its range,
 * `too_long` a string over its length, `empty` an empty string, `too_many` a list over its count, `value`
 * anything else (not one of the values taken, not made by any configured model).
 */
export type ParamRule = 'missing' | 'type' | 'value' | 'below_min' | 'above_max' | 'too_long' | 'empty' | 'too_many';

/** Which parameter a 400 refuses (its path as the door names it: `input_reference.image_url`) and by which rule. */
export interface ParamFault {
  param: string;
  rule: ParamRule;
  /** For below_min and above_max: the value was a whole number. */
  integer?: boolean;
}

export class AppError extends Error {
  constructor(
    readonly code: ErrorCode,
    message: string,
    /** For refusals that may succeed later (limits, overload, outages): when to try again. */
    readonly retryAfterS?: number,
    /** For INVALID_PARAMETER: the parameter and the rule, when known apart from the message. */
    readonly fault?: ParamFault,
  ) {
    super(message);
    this.name = 'AppError';
  }

  /** An INVALID_PARAMETER naming its parameter and rule (the message still says both, in words). */
  static invalidParameter(message: string, fault: ParamFault): AppError {
    return new AppError('INVALID_PARAMETER', message, undefined, fault);
  }
}
