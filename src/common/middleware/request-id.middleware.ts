import { randomUUID } from 'node:crypto';
import type { NextFunction, Request, Response } from 'express';
import { Logger } from '@nestjs/common';
import { requestPath } from '../http/request-path.js';

const WELL_FORMED_ID = /^[A-Za-z0-9][A-Za-z0-9._:-]{0,127}$/;
const logger = new Logger('HTTP');

export function requestIdOf(req: Request): string {
  return (req as Request & { id?: string }).id ?? '';
}

/**
 * Gives every request an id (keeping a well-formed incoming X-Request-Id), echoes it in the
 * X-Request-Id header, and logs one line, with it, when the response is finished.
 * Registered on Express directly, so it runs first, for every route, known or not.
 */
export function requestIdMiddleware(req: Request, res: Response, next: NextFunction): void {
  const incoming = req.header('x-request-id');
  const id = incoming && WELL_FORMED_ID.test(incoming) ? incoming : randomUUID();
  (req as Request & { id?: string }).id = id;
  res.setHeader('X-Request-Id', id);
  const started = process.hrtime.bigint();
  // The access line names its request itself: binding the listener to the request's context costs more.
  res.on('finish', () => {
    const durationMs = Number(process.hrtime.bigint() - started) / 1e6;
    logger.log({ msg: 'request completed', request_id: id, method: req.method, path: requestPath(req), status: res.statusCode, duration_ms: Math.round(durationMs * 10) / 10 });
  });
  next();
}
