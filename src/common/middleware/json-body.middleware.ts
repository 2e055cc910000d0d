import { AsyncResource } from 'node:async_hooks';
import { Inject, Injectable, type NestMiddleware } from '@nestjs/common';
import express, { type NextFunction, type Request, type RequestHandler, type Response } from 'express';
import { credentialOf } from '../auth/credential.js';
import { AppError } from '../errors/app-error.js';
import { requestPath } from '../http/request-path.js';

/** Routes that take a bigger body than the default; matched on method and exact path. */
export interface BodyLimitRule {
  method: string;
  path: string;
  bytes: number;
}

export const DEFAULT_BODY_LIMIT_BYTES = 100 * 1024;

/** Injection token for the list of BodyLimitRule that AppModule gathers from the feature modules. */
export const BODY_LIMIT_RULES = Symbol('BODY_LIMIT_RULES');

function formatBytes(bytes: number): string {
  return bytes >= 1024 * 1024 ? `${Math.round((bytes / (1024 * 1024)) * 10) / 10} MB` : `${Math.round(bytes / 1024)} kB`;
}

/**
 * Parses JSON bodies, for callers with a valid credential only, with a per-route size limit, and turns every parser failure into an AppError
 * so it reaches the global filter: 413 for an oversized body, 415 for a non-JSON Content-Type,
 * 400 for malformed JSON. A missing Content-Type is read as JSON, since the spec marks it optional,
 * and so is a JSON object sent as application/x-www-form-urlencoded (what `curl -d` sends by default).
 */
@Injectable()
export class JsonBodyMiddleware implements NestMiddleware {
  private readonly parsers = new Map<number, RequestHandler>();

  constructor(@Inject(BODY_LIMIT_RULES) private readonly rules: BodyLimitRule[]) {}

  async use(req: Request, res: Response, next: NextFunction): Promise<void> {
    // Keep the request context (and its request id) across the parser's stream callbacks.
    const done = AsyncResource.bind(next);
    if (!hasBody(req)) {
      return done();
    }
    const credential = credentialOf(req)?.kind;
    if (credential !== 'key' && credential !== 'admin') {
      // Without a valid credential the body is discarded unparsed (so the client can finish sending
      // and read the answer); the guard answers 401, or 404 on a disabled route.
      req.resume();
      return done();
    }
    const contentType = req.headers['content-type'];
    // curl -d sends form-urlencoded by default; a JSON body under that type is read as JSON.
    const formType = contentType !== undefined && req.is('application/x-www-form-urlencoded') !== false;
    if (contentType !== undefined && !formType && !req.is(['application/json', 'application/*+json'])) {
      throw unsupportedType(contentType);
    }
    const limit = this.limitFor(req);
    await new Promise<void>((resolve, reject) => {
      this.parserFor(limit)(req, res, (err?: unknown) => {
        if (!err) return resolve();
        reject(formType && (err as { type?: string }).type === 'entity.parse.failed' ? unsupportedType(contentType) : toAppError(err, limit));
      });
    });
    done();
  }

  private limitFor(req: Request): number {
    const path = requestPath(req).toLowerCase().replace(/\/+$/, ''); // Express routes ignore case and a trailing slash
    const rule = this.rules.find((r) => r.method === req.method && r.path === path);
    return rule?.bytes ?? DEFAULT_BODY_LIMIT_BYTES;
  }

  private parserFor(limit: number): RequestHandler {
    let parser = this.parsers.get(limit);
    if (!parser) {
      parser = express.json({ limit, strict: true, type: () => true });
      this.parsers.set(limit, parser);
    }
    return parser;
  }
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
    default:
      return new AppError('INVALID_REQUEST', `Request body could not be read: ${(err as Error).message ?? 'unknown error'}`);
  }
}
