import { createParamDecorator, type ExecutionContext } from '@nestjs/common';
import type { Request } from 'express';

/** `http(s)://host[:port]` as the caller reached the service; used for absolute result links. */
export const RequestBaseUrl = createParamDecorator((_: unknown, ctx: ExecutionContext): string | undefined => {
  const req = ctx.switchToHttp().getRequest<Request>();
  const host = req.get('host');
  return host && /^[A-Za-z0-9.:[\]-]+$/.test(host) ? `${req.protocol}://${host}` : undefined;
});
