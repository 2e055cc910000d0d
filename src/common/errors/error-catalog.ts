import type { ErrorCode } from './app-error.js';

export interface WireError {
  /** HTTP status. */
  status: number;
  /** Numeric code in the `{code, message, request_id}` envelope (Kling's families). */
  code: number;
  /** String code used on routes whose success reply carries a string code (the audio route). */
  name: string;
  /** Short description, for the README and Swagger. */
  meaning: string;
}

/** The one mapping of domain code to wire form. A new ErrorCode without a case here fails to compile. */
export function describeError(code: ErrorCode): WireError {
  switch (code) {
    case 'AUTH_FAILED':
      return { status: 401, code: 1000, name: 'unauthorized', meaning: 'The API key is not known.' };
    case 'AUTH_MISSING':
      return { status: 401, code: 1001, name: 'unauthorized', meaning: 'The Authorization header is missing.' };
    case 'AUTH_MALFORMED':
      return { status: 401, code: 1002, name: 'unauthorized', meaning: 'The Authorization header is not `Bearer <key>` with a well-formed key.' };
    case 'AUTH_REVOKED':
      return { status: 401, code: 1004, name: 'unauthorized', meaning: 'The API key has been revoked.' };
    case 'AUTH_THROTTLED':
      return { status: 429, code: 1005, name: 'too_many_auth_failures', meaning: 'Too many failed authentications from this client address: until Retry-After, a credential from it that is not valid is answered this rather than 401 (a valid key is served as always).' };
    case 'FORBIDDEN':
      return { status: 403, code: 1103, name: 'forbidden', meaning: 'The key may not use this resource (e.g. a normal key on the admin API).' };
    case 'INVALID_REQUEST':
      return { status: 400, code: 1200, name: 'invalid_request', meaning: 'The request is malformed: the body is not valid JSON or not a JSON object.' };
    case 'INVALID_PARAMETER':
      return { status: 400, code: 1201, name: 'invalid_parameter', meaning: 'A parameter is missing or breaks a rule; the message names the field and the rule.' };
    case 'NOT_FOUND':
      return { status: 404, code: 1203, name: 'not_found', meaning: 'The route or the resource does not exist (or belongs to another owner).' };
    case 'NOT_SUPPORTED':
      return { status: 404, code: 1207, name: 'not_supported', meaning: "The operation is in the provider's API (Luma's image generation, say), but this gateway does not offer it." };
    case 'METHOD_NOT_ALLOWED':
      return { status: 405, code: 1210, name: 'method_not_allowed', meaning: 'The route exists, but not for this method: `Allow` lists those it takes.' };
    case 'CONFLICT':
      return { status: 409, code: 1204, name: 'conflict', meaning: 'The request conflicts with an existing resource, e.g. a duplicate external_task_id.' };
    case 'GONE':
      return { status: 410, code: 1209, name: 'gone', meaning: 'The resource existed but its files were removed by retention (RESULT_RETENTION_DAYS): an expired clip cannot be continued or joined.' };
    case 'PAYLOAD_TOO_LARGE':
      return { status: 413, code: 1205, name: 'payload_too_large', meaning: "The body is larger than the route's limit." };
    case 'RANGE_NOT_SATISFIABLE':
      return { status: 416, code: 1208, name: 'range_not_satisfiable', meaning: 'The Range of a media download lies outside the file; Content-Range gives its size.' };
    case 'UNSUPPORTED_MEDIA_TYPE':
      return { status: 415, code: 1206, name: 'unsupported_media_type', meaning: 'The Content-Type is not application/json.' };
    case 'RATE_LIMITED':
      return { status: 429, code: 1302, name: 'rate_limited', meaning: "Too many requests: over the owner's requests per minute; Retry-After says when the window ends." };
    case 'CONCURRENCY_LIMITED':
      return { status: 429, code: 1303, name: 'concurrency_limited', meaning: "Too many unfinished tasks: their slots would pass the owner's max_concurrent_tasks (an expand task holds n)." };
    case 'CREDITS_EXHAUSTED':
      return { status: 429, code: 1102, name: 'resource_pack_exhausted', meaning: "The owner's monthly credits cannot cover this task (resource pack exhausted); Retry-After says when the next month begins. On OpenAI's doors, with x-should-retry: false (OpenAI's SDKs would retry it at once); on ElevenLabs' door 401 quota_exceeded, as ElevenLabs answers it (its SDKs retry a 429)." };
    case 'CONTENT_REFUSED':
      return { status: 400, code: 1301, name: 'moderation_blocked', meaning: "A request answered when its task ends (OpenAI's image and speech doors, ElevenLabs' music door, the sunoapi door's upload by URL): the vendor's moderation refused the request; the message gives its words." };
    case 'UPSTREAM_FAILED':
      return { status: 502, code: 5003, name: 'upstream_failed', meaning: "A request answered when its task ends (OpenAI's image and speech doors, ElevenLabs' music door, the sunoapi door's upload by URL): its task failed (no capable vendor made it); the message says why. Not retried by OpenAI's SDKs (x-should-retry: false): a retry is a new, billed task." };
    case 'TIMEOUT':
      return { status: 504, code: 5002, name: 'timeout', meaning: "A request answered when its task ends (OpenAI's image and speech doors, ElevenLabs' music door, the sunoapi door's upload by URL): the task did not end while the request was held; it goes on, and GET /tasks/{id} (named in the message) shows its end." };
    case 'INTERNAL':
      return { status: 500, code: 5000, name: 'internal_error', meaning: 'An internal error; it is logged with the request id.' };
    case 'UNAVAILABLE':
      return { status: 503, code: 5001, name: 'service_unavailable', meaning: 'A dependency (such as the database) is unavailable; retry later.' };
    default:
      return assertNever(code);
  }
}

function assertNever(value: never): never {
  throw new Error(`Unmapped error code: ${String(value)}`);
}
