import { createParamDecorator, type ExecutionContext } from '@nestjs/common';
import type { Request } from 'express';
import { requestIdOf } from '../middleware/request-id.middleware.js';

/** The longest Host kept: a DNS name (253) with a port; the base is stored in tasks.base_url, varchar(512). */
const MAX_HOST_CHARS = 260;

/**
 * `http(s)://host[:port]` as the caller reached the service; used for absolute result links. A Host header
 * that is not a plain host (other characters, or longer than any real one) gives none: it is stored with
 * the task, and a 600-character Host used to fail that insert.
 */
export const RequestBaseUrl = createParamDecorator((_: unknown, ctx: ExecutionContext): string | undefined => {
  const req = ctx.switchToHttp().getRequest<Request>();
  const host = req.get('host');
  // behind a trusted proxy (TRUST_PROXY) the protocol is its X-Forwarded-Proto: only http or https is kept
  const protocol = req.protocol === 'https' ? 'https' : 'http';
  return host && host.length <= MAX_HOST_CHARS && /^[A-Za-z0-9.:[\]-]+$/.test(host) ? `${protocol}://${host}` : undefined;
});

/** The request's id (X-Request-Id), for an answer that carries it in its body (Kling's envelope). */
export const RequestId = createParamDecorator((_: unknown, ctx: ExecutionContext): string => requestIdOf(ctx.switchToHttp().getRequest<Request>()));
