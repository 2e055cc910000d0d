import type { IncomingMessage } from 'node:http';
import { type CallHandler, type ExecutionContext, Injectable, type NestInterceptor, SetMetadata } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import express, { type Request, type RequestHandler, type Response } from 'express';
import type { Observable } from 'rxjs';
import { AppConfig } from '../../infra/config/app-config.js';
import { AppError } from '../errors/app-error.js';

/** The body limit of every route that does not say otherwise (BodyLimit). */
export const DEFAULT_BODY_LIMIT_BYTES = 100 * 1024;

/** Objects and arrays nested deeper than this are refused before the body is parsed (validation recurses). */
export const MAX_JSON_DEPTH = 64;

/** Seconds a client refused for overload should wait. */
const OVERLOAD_RETRY_AFTER_S = 2;

const BODY_LIMIT = Symbol('body-limit');

/** A route that takes a bigger JSON body than DEFAULT_BODY_LIMIT_BYTES. */
export const BodyLimit = (bytes: number) => SetMetadata(BODY_LIMIT, bytes);

function formatBytes(bytes: number): string {
  return bytes >= 1024 * 1024 ? `${Math.round((bytes / (1024 * 1024)) * 10) / 10} MB` : `${Math.round(bytes / 1024)} kB`;
}

/**
 * Reads JSON bodies, after the guard (so a caller without a valid key, or over its rate limit, never
 * makes the service read a body) and before the pipes, with the route's limit (BodyLimit), and turns
 * every failure into an AppError: 413 for an oversized body, 415 for a non-JSON Content-Type, 400 for
 * malformed JSON or JSON nested deeper than MAX_JSON_DEPTH. A missing Content-Type is read as JSON,
 * since the spec marks it optional, and so is a JSON object sent as application/x-www-form-urlencoded
 * (what `curl -d` sends by default).
 *
 * Large bodies (on routes whose limit is above the default) are admitted under BODY_INFLIGHT_MAX_BYTES:
 * the declared size is reserved before a byte is read and given back when the answer is sent, so a
 * burst of big images is answered 503 with Retry-After instead of exhausting memory or the database pool.
 */
@Injectable()
export class JsonBodyInterceptor implements NestInterceptor {
  private readonly parsers = new Map<number, RequestHandler>();
  private inflightBytes = 0;

  constructor(
    private readonly reflector: Reflector,
    private readonly config: AppConfig,
  ) {}

  async intercept(context: ExecutionContext, next: CallHandler): Promise<Observable<unknown>> {
    if (context.getType() === 'http') {
      const req = context.switchToHttp().getRequest<Request>();
      if (hasBody(req)) await this.read(req, context.switchToHttp().getResponse<Response>(), this.reflector.get<number>(BODY_LIMIT, context.getHandler()) ?? DEFAULT_BODY_LIMIT_BYTES);
    }
    return next.handle();
  }

  private async read(req: Request, res: Response, limit: number): Promise<void> {
    const contentType = req.headers['content-type'];
    // curl -d sends form-urlencoded by default; a JSON body under that type is read as JSON.
    const formType = contentType !== undefined && req.is('application/x-www-form-urlencoded') !== false;
    if (contentType !== undefined && !formType && !req.is(['application/json', 'application/*+json'])) {
      throw unsupportedType(contentType);
    }
    if (limit > DEFAULT_BODY_LIMIT_BYTES) this.admit(req, res, limit);
    await new Promise<void>((resolve, reject) => {
      this.parserFor(limit)(req, res, (err?: unknown) => {
        if (!err) return resolve();
        reject(formType && (err as { type?: string }).type === 'entity.parse.failed' ? unsupportedType(contentType!) : toAppError(err, limit));
      });
    });
  }

  /** Reserves the body's declared size (the route's limit when it is not declared) until the answer is sent. */
  private admit(req: Request, res: Response, limit: number): void {
    const declared = Number(req.headers['content-length']);
    if (Number.isFinite(declared) && declared > limit) return; // the parser answers 413 without reading it
    const bytes = Number.isFinite(declared) && declared > 0 ? declared : limit;
    if (this.inflightBytes > 0 && this.inflightBytes + bytes > this.config.bodyInflightMaxBytes) {
      req.resume(); // discard the body as it arrives, so the client can read the answer
      throw new AppError('UNAVAILABLE', `The service is busy reading other large requests (${formatBytes(this.inflightBytes)} in flight); retry in ${OVERLOAD_RETRY_AFTER_S} s`, OVERLOAD_RETRY_AFTER_S);
    }
    this.inflightBytes += bytes;
    res.once('close', () => (this.inflightBytes -= bytes));
  }

  private parserFor(limit: number): RequestHandler {
    let parser = this.parsers.get(limit);
    if (!parser) {
      parser = express.json({ limit, strict: true, type: () => true, verify: refuseDeepNesting });
      this.parsers.set(limit, parser);
    }
    return parser;
  }
}

/** body-parser's verify hook: throws before JSON.parse (and the recursive validation after it) sees a too-deep body. */
function refuseDeepNesting(_req: IncomingMessage, _res: unknown, body: Buffer): void {
  if (nestingDepthExceeds(body, MAX_JSON_DEPTH)) {
    throw Object.assign(new Error(`Request body is nested too deeply: at most ${MAX_JSON_DEPTH} levels of objects and arrays`), { type: 'entity.too.deep' });
  }
}

/**
 * Whether a JSON text nests objects and arrays deeper than `max`, counted on the raw bytes without
 * parsing: string contents (a 13 MB Base64 image among them) are skipped with native searches.
 */
export function nestingDepthExceeds(body: Buffer, max: number): boolean {
  let depth = 0;
  for (let i = 0; i < body.length; i++) {
    const c = body[i];
    if (c === 0x22) {
      // a string: jump to its closing quote (one not escaped by an odd run of backslashes)
      let end = i;
      for (;;) {
        end = body.indexOf(0x22, end + 1);
        if (end === -1) return false; // unterminated: JSON.parse reports it
        let backslashes = 0;
        while (body[end - 1 - backslashes] === 0x5c) backslashes++;
        if (backslashes % 2 === 0) break;
      }
      i = end;
    } else if (c === 0x5b || c === 0x7b) {
      if (++depth > max) return true;
    } else if (c === 0x5d || c === 0x7d) {
      depth--;
    }
  }
  return false;
}

function unsupportedType(contentType: string): AppError {
  return new AppError('UNSUPPORTED_MEDIA_TYPE', `Content-Type "${contentType}" is not supported; send the body as application/json`);
}

function hasBody(req: Request): boolean {
  return req.headers['transfer-encoding'] !== undefined || Number(req.headers['content-length'] ?? 0) > 0;
}

function toAppError(err: unknown, limit: number): AppError {
  const type = (err as { type?: string }).type;
  switch (type) {
    case 'entity.too.large':
      return new AppError('PAYLOAD_TOO_LARGE', `Request body is larger than this route's limit of ${formatBytes(limit)}`);
    case 'charset.unsupported':
    case 'encoding.unsupported':
      return new AppError('UNSUPPORTED_MEDIA_TYPE', `${(err as Error).message}; send UTF-8 JSON`);
    case 'entity.parse.failed':
      return new AppError('INVALID_REQUEST', `Request body is not valid JSON: ${(err as Error).message}`);
    case 'entity.too.deep':
      return new AppError('INVALID_REQUEST', (err as Error).message);
    default:
      return new AppError('INVALID_REQUEST', `Request body could not be read: ${(err as Error).message ?? 'unknown error'}`);
  }
}
