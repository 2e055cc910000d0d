import type { ParamFault, ParamRule } from './app-error.js';

/** OpenAI's own `code` for each broken rule of a parameter, as its API answers a 400 (integer or decimal bounds apart). */
const RULE_CODES: Record<ParamRule, string | { integer: string; decimal: string }> = {
  missing: 'missing_required_parameter',
  type: 'invalid_type',
  value: 'invalid_value',
  below_min: { integer: 'integer_below_min_value', decimal: 'decimal_below_min_value' },
  above_max: { integer: 'integer_above_max_value', decimal: 'decimal_above_max_value' },
  too_long: 'string_above_max_length',
  empty: 'empty_string',
  too_many: 'array_above_max_length',
};

/** Which of OpenAI's APIs an error answers: the Images API words a refused prompt as its own type. */
export type OpenAiApi = 'images' | 'other';

/** The API of an OpenAI-door path (`/openai/v1/images/…` is the Images API). */
export function openAiApiOf(path: string): OpenAiApi {
  return path.startsWith('/openai/v1/images/') ? 'images' : 'other';
}

/** The field a message names first (`size must …`, `image[0]: …`, `input_reference.image_url is …`), when it names one. */
const NAMED_FIELD = /^([a-z_][a-z0-9_]*(?:\[[a-z0-9_]+\]|\.[a-z0-9_]+)*)(?=:| must | is )/;

/**
 * The same error as OpenAI's API words it, so that code written against OpenAI's SDKs reads it as OpenAI's:
 * `type` (invalid_request_error, authentication_error, permission_error, rate_limit_error, insufficient_quota,
 * server_error; image_generation_user_error for a refused prompt on the Images API, `api` 'images', and
 * invalid_request_error on the others); `code` OpenAI's own where it has one — a refused parameter's
 * rule (`fault`: invalid_value when none is known, missing_required_parameter, invalid_type,
 * integer_below_min_value, string_above_max_length…), invalid_api_key for every 401, rate_limit_exceeded,
 * insufficient_quota, moderation_blocked — and else the catalog's name (not_found, timeout…); `param` the
 * refused parameter (`fault`, else the field a 400's message names first).
 */
export function openAiError(status: number, name: string, message: string, fault?: ParamFault, api: OpenAiApi = 'other'): { message: string; type: string; code: string; param: string | null } {
  const type =
    name === 'moderation_blocked'
      ? api === 'images'
        ? 'image_generation_user_error'
        : 'invalid_request_error'
      : name === 'resource_pack_exhausted'
        ? 'insufficient_quota'
        : status === 401
          ? 'authentication_error'
          : status === 403
            ? 'permission_error'
            : status === 429
              ? 'rate_limit_error'
              : status >= 500
                ? 'server_error'
                : 'invalid_request_error';
  const param = fault?.param ?? (status === 400 ? (NAMED_FIELD.exec(message)?.[1] ?? null) : null);
  return { message, type, code: openAiCode(status, name, fault), param };
}

function openAiCode(status: number, name: string, fault?: ParamFault): string {
  if (name === 'invalid_parameter') {
    const code = RULE_CODES[fault?.rule ?? 'value'];
    return typeof code === 'string' ? code : fault?.integer ? code.integer : code.decimal;
  }
  if (status === 401) return 'invalid_api_key';
  if (name === 'not_found' && fault?.param === 'model') return 'model_not_found';
  if (name === 'rate_limited' || name === 'concurrency_limited') return 'rate_limit_exceeded';
  if (name === 'resource_pack_exhausted') return 'insufficient_quota';
  return name;
}
