import { type ArgumentsHost, Catch, type ExceptionFilter, HttpException, Logger } from '@nestjs/common';
import type { Request, Response } from 'express';
import { DatabaseStatus } from '../../infra/database/database-status.service.js';
import { AppError, type ErrorCode, type ParamFault } from '../errors/app-error.js';
import { describeError } from '../errors/error-catalog.js';
import { elevenLabsError, elevenLabsStatus } from '../errors/elevenlabs-error.js';
import { openAiApiOf, openAiError } from '../errors/openai-error.js';
import { sunoapiErrorCode } from '../errors/sunoapi-error.js';
import { requestIdOf } from '../middleware/request-id.middleware.js';
import { allowedMethods } from '../http/allowed-methods.js';
import { requestPath } from '../http/request-path.js';

/** Routes whose success reply carries `code` as a string; their errors use string codes too. */
const STRING_CODE_PREFIXES = ['/music-a/'];
/** The OpenAI-style door: its clients (OpenAI's SDKs) read errors as `{"error": {message, type, code, param}}`. */
export const OPENAI_PREFIX = '/openai/';
/** The sunoapi.org-shaped door: its clients read every answer as `{code, msg, data}`, `code` the outcome (one of their codes). */
export const SUNOAPI_PREFIX = '/sunoapi/';
/** ElevenLabs' door: its clients (ElevenLabs' SDKs) read errors as `{"detail": …}`, a refused request as a 422. */
export const ELEVENLABS_PREFIX = '/elevenlabs/';

/** Seconds a client should wait before retrying while the database is unavailable. */
export const DATABASE_RETRY_AFTER_S = 5;

/**
 * The one place where errors become HTTP answers: every error, from any route, for any cause,
 * is answered with `{ code, message, request_id }`. Internal details never leave the process;
 * they are logged with the request id.
 */
@Catch()
export class AllExceptionsFilter implements ExceptionFilter {
  private readonly logger = new Logger('ExceptionsFilter');

  constructor(private readonly database: DatabaseStatus) {}

  catch(exception: unknown, host: ArgumentsHost): void {
    const http = host.switchToHttp();
    const req = http.getRequest<Request>();
    const res = http.getResponse<Response>();
    const { code, message, retryAfterS, fault, allow } = this.classify(exception, req);
    const wire = describeError(code);
    if (code === 'INTERNAL') {
      this.logger.error({ msg: 'request failed', request_id: requestIdOf(req), err: exception instanceof Error ? exception : new Error(String(exception)) });
    }
    if (res.headersSent) {
      res.end();
      return;
    }
    if (retryAfterS !== undefined || wire.status === 429 || wire.status === 503) {
      res.setHeader('Retry-After', String(Math.max(1, Math.ceil(retryAfterS ?? DATABASE_RETRY_AFTER_S))));
    }
    const path = requestPath(req);
    if (allow !== undefined) res.setHeader('Allow', allow.join(', '));
    const challenge = bearerChallenge(code);
    if (challenge !== undefined && !path.startsWith(ELEVENLABS_PREFIX)) res.setHeader('WWW-Authenticate', challenge);
    if (path.startsWith(OPENAI_PREFIX)) {
      // OpenAI's SDKs retry a 429, waiting what Retry-After says when it is under a minute; a refusal that lasts
      // longer (the month's credits spent) is told not to be retried, or the SDK's retries come at once
      if (wire.status === 429 && (retryAfterS ?? 0) > 60) res.setHeader('x-should-retry', 'false');
      res.status(wire.status).json({ error: openAiError(wire.status, wire.name, message, fault, openAiApiOf(path)), request_id: requestIdOf(req) });
      return;
    }
    if (path.startsWith(SUNOAPI_PREFIX)) {
      // their `{code, msg, data}`, and the gateway's `message` and `request_id` beside (the envelope every error carries)
      res.status(wire.status).json({ code: sunoapiErrorCode(wire.status, wire.name), msg: message, data: null, message, request_id: requestIdOf(req) });
      return;
    }
    if (path.startsWith(ELEVENLABS_PREFIX)) {
      const queryKeys = typeof req.query === 'object' && req.query !== null ? Object.keys(req.query) : [];
      res.status(elevenLabsStatus(wire)).json({ ...elevenLabsError(wire, code, message, fault, queryKeys), request_id: requestIdOf(req) });
      return;
    }
    const usesStringCode = STRING_CODE_PREFIXES.some((prefix) => path.startsWith(prefix));
    res.status(wire.status).json({ code: usesStringCode ? wire.name : wire.code, message, request_id: requestIdOf(req) });
  }

  private classify(exception: unknown, req: Request): Classified {
    if (exception instanceof AppError) {
      return { code: exception.code, message: exception.message, retryAfterS: exception.retryAfterS, fault: exception.fault };
    }
    if (exception instanceof HttpException) {
      return fromHttpException(exception, req);
    }
    if (this.database.report(exception)) {
      return { code: 'UNAVAILABLE', message: 'The database is unavailable; retry later', retryAfterS: DATABASE_RETRY_AFTER_S };
    }
    return { code: 'INTERNAL', message: 'Internal server error; quote the request_id when reporting it' };
  }
}

/**
 * The challenge a 401 carries (RFC 9110 §15.5.2 requires one; RFC 6750 §3 gives Bearer's): no error code when
 * no credential came, `invalid_token` when the key is unknown or revoked, `invalid_request` when the header is
 * not one `Bearer <key>` of a well-formed key (another scheme, sent twice). ElevenLabs'
 * door takes its key in `xi-api-key`, a scheme HTTP has no challenge for, and answers as ElevenLabs does.
 */
export function bearerChallenge(code: ErrorCode): string | undefined {
  switch (code) {
    case 'AUTH_MISSING':
      return 'Bearer realm="media-gateway"';
    case 'AUTH_FAILED':
    case 'AUTH_REVOKED':
      return 'Bearer realm="media-gateway", error="invalid_token"';
    case 'AUTH_MALFORMED':
      return 'Bearer realm="media-gateway", error="invalid_request"';
    default:
      return undefined;
  }
}

/** An error in the domain's words, with what its answer's headers need. */
interface Classified {
  code: ErrorCode;
  message: string;
  retryAfterS?: number;
  fault?: ParamFault;
  /** A 405's `Allow`: the methods the path takes. */
  allow?: string[];
}

/** Exceptions raised by Nest itself or by libraries (unknown route, terminus, parse pipes). */
function fromHttpException(exception: HttpException, req: Request): Classified {
  const status = exception.getStatus();
  const body = exception.getResponse();
  const text =
    typeof body === 'string'
      ? body
      : Array.isArray((body as { message?: unknown }).message)
        ? ((body as { message: string[] }).message).join('; ')
        : String((body as { message?: unknown }).message ?? exception.message);
  switch (status) {
    case 400:
      // Express's words for a path parameter whose percent-encoding is not UTF-8 name no parameter
      if (exception.cause instanceof URIError) return { code: 'INVALID_PARAMETER', message: `the path ${requestPath(req)} holds a percent-encoded sequence that is not UTF-8 text (${/'([^']*)'/.exec(text)?.[1] ?? 'a path parameter'})` };
      return { code: 'INVALID_PARAMETER', message: text };
    case 401:
      return { code: 'AUTH_FAILED', message: text };
    case 403:
      return { code: 'FORBIDDEN', message: text };
    case 404: {
      if (!text.startsWith('Cannot ')) return { code: 'NOT_FOUND', message: text };
      // Nest's answer when Express found no route for the method: a path that other methods take is a 405
      const allow = allowedMethods(req);
      if (allow.length > 0) return { code: 'METHOD_NOT_ALLOWED', message: `${req.method} is not allowed on ${requestPath(req)}: it takes ${allow.join(', ')}`, allow };
      return { code: 'NOT_FOUND', message: `No route for ${req.method} ${requestPath(req)}` };
    }
    case 409:
      return { code: 'CONFLICT', message: text };
    case 413:
      return { code: 'PAYLOAD_TOO_LARGE', message: text };
    case 415:
      return { code: 'UNSUPPORTED_MEDIA_TYPE', message: text };
    case 429:
      return { code: 'RATE_LIMITED', message: text };
    case 503:
      return { code: 'UNAVAILABLE', message: text };
    default:
      return status < 500
        ? { code: 'INVALID_REQUEST', message: text }
        : { code: 'INTERNAL', message: 'Internal server error; quote the request_id when reporting it' };
  }
}
