import { createParamDecorator, type ExecutionContext, SetMetadata } from '@nestjs/common';
import type { Request } from 'express';
import { credentialOf, type Principal } from '../auth/credential.js';

export const ROUTE_ACCESS = 'route-access';
export type RouteAccess = 'public' | 'admin' | 'key-or-admin' | 'metrics';

/** The route needs no key (health checks). */
export const Public = () => SetMetadata(ROUTE_ACCESS, 'public' satisfies RouteAccess);

/** The route needs the admin key (ADMIN_API_KEY); without it configured, the route answers 404. */
export const AdminOnly = () => SetMetadata(ROUTE_ACCESS, 'admin' satisfies RouteAccess);

/**
 * The route takes the metrics token (METRICS_TOKEN) or the admin key, on every role (workers too): the
 * Prometheus metrics, which name owners and channels. With neither configured, it answers 404.
 */
export const MetricsReader = () => SetMetadata(ROUTE_ACCESS, 'metrics' satisfies RouteAccess);

/**
 * The route takes an API key (the caller sees its own owner's records) or the admin key (every owner's):
 * the cross-operation reads the console uses (`/tasks`). Other keyed routes refuse the admin key.
 */
export const KeyOrAdmin = () => SetMetadata(ROUTE_ACCESS, 'key-or-admin' satisfies RouteAccess);

export const KEY_HEADER = 'key-header';

/**
 * The keyed route also takes its API key as the bare value of the header `name` (lower case), as a vendor's
 * SDKs send it (ElevenLabs': `xi-api-key`), besides `Authorization: Bearer <key>`. Only the routes of the
 * door whose clients send it say so: elsewhere such a header is not read.
 */
export const KeyHeader = (name: string) => SetMetadata(KEY_HEADER, name.toLowerCase());

/** Who reads, on a KeyOrAdmin route: the admin (every owner), or an owner through one of its keys. */
export type Viewer = { admin: true } | { admin: false; owner: string };

/** The viewer of a KeyOrAdmin route, set by the guard. */
export const CurrentViewer = createParamDecorator((_: unknown, ctx: ExecutionContext): Viewer => {
  const credential = credentialOf(ctx.switchToHttp().getRequest<Request>());
  if (credential?.kind === 'admin') return { admin: true };
  if (credential?.kind === 'key') return { admin: false, owner: credential.principal.owner };
  throw new Error('CurrentViewer used on a route that is not keyed');
});

/** The calling principal, set by the guard on every keyed route. */
export const CurrentPrincipal = createParamDecorator((_: unknown, ctx: ExecutionContext): Principal => {
  const credential = credentialOf(ctx.switchToHttp().getRequest<Request>());
  if (credential?.kind !== 'key') {
    throw new Error('CurrentPrincipal used on a route that is not keyed');
  }
  return credential.principal;
});
