/**
 * The same error as OpenAI's API words it: `type` (invalid_request_error, authentication_error,
 * permission_error, rate_limit_error, server_error), `code` (the catalog's name), `param` (the field the
 * message names first, when it names one).
 */
export function openAiError(status: number, name: string, message: string): { message: string; type: string; code: string; param: string | null } {
  const type = name === 'moderation_blocked' ? 'image_generation_user_error' : status === 401 ? 'authentication_error' : status === 403 ? 'permission_error' : status === 429 ? 'rate_limit_error' : status >= 500 ? 'server_error' : 'invalid_request_error';
  const param = status === 400 ? (/^([a-z_][a-z0-9_]*(?:\[[a-z_]+\]|\.[a-z0-9_]+)*)(?=:| must | is )/.exec(message)?.[1] ?? null) : null;
  return { message, type, code: name, param };
}
