import { createParamDecorator, type ExecutionContext } from '@nestjs/common';
import type { Request } from 'express';
import { requestIdOf } from '../middleware/request-id.middleware.js';

/** `http(s)://host[:port]` as the caller reached the service; used for absolute result links. */
export const RequestBaseUrl = createParamDecorator((_: unknown, ctx: ExecutionContext): string | undefined => {
  const req = ctx.switchToHttp().getRequest<Request>();
  const host = req.get('host');
  return host && /^[A-Za-z0-9.:[\]-]+$/.test(host) ? `${req.protocol}://${host}` : undefined;
});

/** The request's id (X-Request-Id), for an answer that carries it in its body (Kling's envelope). */
export const RequestId = createParamDecorator((_: unknown, ctx: ExecutionContext): string => requestIdOf(ctx.switchToHttp().getRequest<Request>()));
