import { createParamDecorator, type ExecutionContext, SetMetadata } from '@nestjs/common';
import type { Request } from 'express';
import { credentialOf, type Principal } from '../auth/credential.js';

export const ROUTE_ACCESS = 'route-access';
export type RouteAccess = 'public' | 'admin';

/** The route needs no key (health checks). */
export const Public = () => SetMetadata(ROUTE_ACCESS, 'public' satisfies RouteAccess);

/** The route needs the admin key (ADMIN_API_KEY); without it configured, the route answers 404. */
export const AdminOnly = () => SetMetadata(ROUTE_ACCESS, 'admin' satisfies RouteAccess);

/** The calling principal, set by the guard on every keyed route. */
export const CurrentPrincipal = createParamDecorator((_: unknown, ctx: ExecutionContext): Principal => {
  const credential = credentialOf(ctx.switchToHttp().getRequest<Request>());
  if (credential?.kind !== 'key') {
    throw new Error('CurrentPrincipal used on a route that is not keyed');
  }
  return credential.principal;
});
