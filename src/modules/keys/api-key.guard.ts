import { type CanActivate, type ExecutionContext, Injectable } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import type { Request, Response } from 'express';
import type { AuthenticatedRequest, Credential } from '../../common/auth/credential.js';
import { KEY_HEADER, ROUTE_ACCESS, type RouteAccess } from '../../common/decorators/auth.decorators.js';
import { AppError } from '../../common/errors/app-error.js';
import { requestPath } from '../../common/http/request-path.js';
import { AppConfig } from '../../infra/config/app-config.js';
import { LimitsService } from '../limits/limits.service.js';
import { AuthFailures } from './auth-failures.js';
import { readBearer } from './bearer.js';
import { secretsEqual } from './key-material.js';
import { KeysService } from './keys.service.js';

/**
 * Resolves the Authorization header (or, on a route marked KeyHeader, the key in that header: ElevenLabs'
 * `xi-api-key` on its door) and enforces each route's access rule, before any body is read
 * (bodies are read by JsonBodyGuard, after it): keyed routes need a valid, unrevoked key;
 * admin routes need ADMIN_API_KEY (404 when it is not configured, 403 for a normal key); key-or-admin
 * routes take either (the admin key is not counted against any owner's rate limit); the metrics route
 * takes METRICS_TOKEN or the admin key (401 for any request when neither is configured, 403 for a team's key); public routes need nothing, and
 * do not look the key up at all. A keyed request is then counted against its owner's rate limit (1302
 * over it). Every refused credential counts against the client's address (AuthFailures): past
 * AUTH_FAILURE_LIMIT in the window, a refused credential from it answers 429 (1005) with Retry-After rather
 * than 401, and is found out without a database lookup (KeysService.resolveCredential); a valid key, the
 * admin key or the metrics token from it is served as always, and a missing header is 401 as always (it
 * guesses nothing).
 */
@Injectable()
export class ApiKeyGuard implements CanActivate {
  constructor(
    private readonly reflector: Reflector,
    private readonly config: AppConfig,
    private readonly keys: KeysService,
    private readonly limits: LimitsService,
    private readonly failures: AuthFailures,
  ) {}

  async canActivate(context: ExecutionContext): Promise<boolean> {
    const access = this.reflector.getAllAndOverride<RouteAccess | undefined>(ROUTE_ACCESS, [context.getHandler(), context.getClass()]);
    if (access === 'public') {
      return true;
    }
    const req = context.switchToHttp().getRequest<Request>();
    if (access === 'metrics') {
      await this.authorizeMetrics(req);
      return true;
    }
    if (!this.config.runsApi) {
      // ROLE=worker serves only the health checks (public routes) and the metrics
      throw new AppError('NOT_FOUND', `No route for ${req.method} ${requestPath(req)}: this instance runs workers only (ROLE=worker)`);
    }
    if (access === 'admin' && !this.config.adminApiKey) {
      throw new AppError('NOT_FOUND', `No route for ${req.method} ${requestPath(req)}`);
    }
    const limitedS = this.failures.retryAfterS(req.ip);
    const keyHeader = this.reflector.getAllAndOverride<string | undefined>(KEY_HEADER, [context.getHandler(), context.getClass()]);
    // Node keeps the first of two Authorization headers and drops the other: which was meant cannot be told (RFC 9110 §5.3 allows one)
    if (req.rawHeaders.filter((name, i) => i % 2 === 0 && name.toLowerCase() === 'authorization').length > 1) {
      throw this.refused(req, new AppError('AUTH_MALFORMED', 'Authorization was sent more than once: send it once, as "Bearer <API_KEY>"'), limitedS);
    }
    const sent = keyHeader ? authorizationWith(req, keyHeader) : { header: req.headers.authorization };
    if ('missing' in sent) throw sent.missing;
    if ('refused' in sent) throw this.refused(req, sent.refused, limitedS);
    const check = await this.keys.resolveCredential(sent.header, limitedS > 0);
    switch (check.kind) {
      case 'none':
        throw check.error;
      case 'rejected':
        throw this.refused(req, check.error, limitedS);
      case 'admin':
        (req as AuthenticatedRequest).credential = check;
        if (access === 'admin' || access === 'key-or-admin') return true;
        throw new AppError('AUTH_FAILED', 'The admin key is only accepted on /admin routes; use an API key here');
      case 'key': {
        if (access === 'admin') throw new AppError('FORBIDDEN', 'This route needs the admin key; an API key may not use it');
        await this.limits.countRequest(check.identity.owner, context.switchToHttp().getResponse<Response>());
        (req as AuthenticatedRequest).credential = { kind: 'key', principal: check.identity } satisfies Credential;
        return true;
      }
    }
  }

  /**
   * GET /metrics: the metrics token or the admin key, compared in memory (no key is looked up for them).
   * Without either configured nothing opens it: every request is 401, saying what the operators set. Any other
   * bearer is looked up as a key: a team's valid key is 403, as on the admin routes, and not counted against
   * its address (it guesses nothing: a scraper given the wrong secret must not lock its team's own calls out);
   * anything else is a refused credential.
   */
  private async authorizeMetrics(req: Request): Promise<void> {
    const { metricsToken, adminApiKey } = this.config;
    const limitedS = this.failures.retryAfterS(req.ip);
    const bearer = readBearer(req.headers.authorization, 'METRICS_TOKEN');
    if ('kind' in bearer) throw bearer.kind === 'rejected' ? this.refused(req, bearer.error, limitedS) : bearer.error;
    if (!metricsToken && !adminApiKey) throw new AppError('AUTH_FAILED', 'No credential opens the metrics on this instance: its operators set METRICS_TOKEN (or ADMIN_API_KEY) to serve them');
    if ((metricsToken && secretsEqual(bearer.token, metricsToken)) || (adminApiKey && secretsEqual(bearer.token, adminApiKey))) return;
    // recognised, not used (its last use is not recorded); a lookup that fails (the database away) leaves the 401
    const check = await this.keys.resolveCredential(req.headers.authorization, limitedS > 0, false).catch(() => undefined);
    if (check?.kind === 'key') throw new AppError('FORBIDDEN', 'The metrics take the metrics token (METRICS_TOKEN) or the admin key; an API key may not read them');
    throw this.refused(req, new AppError('AUTH_FAILED', 'The metrics take the metrics token (METRICS_TOKEN) or the admin key'), limitedS);
  }

  /**
   * A refused credential: counted against the address, and answered with `error`, or, from an address
   * already limited (`limitedS`: what is left of its window), 429 with Retry-After.
   */
  private refused(req: Request, error: Error, limitedS: number): Error {
    this.failures.record(req.ip);
    if (limitedS === 0) return error;
    const { limit, windowS } = this.config.authFailures;
    return new AppError('AUTH_THROTTLED', `Too many failed authentications from your address (${limit} within ${windowS} s): for ${limitedS} s more, a credential from it that is not valid is refused with this answer (a valid key is served as always)`, limitedS);
  }
}

/**
 * The Authorization a route that also takes its key in `keyHeader` (KeyHeader) is read with: the header's key as
 * `Bearer <key>` when no Authorization is sent; Authorization when it is sent alone, or with the same key. Both,
 * naming different keys, is refused (which was meant cannot be told), and so is a value that is not one token.
 */
function authorizationWith(req: Request, keyHeader: string): { header: string | undefined } | { missing: AppError } | { refused: AppError } {
  const raw = req.headers[keyHeader];
  const value = Array.isArray(raw) ? raw.join(',') : raw;
  const authorization = req.headers.authorization;
  const hasAuthorization = authorization !== undefined && authorization.trim() !== '';
  if (value === undefined || value.trim() === '') {
    if (hasAuthorization) return { header: authorization };
    return { missing: new AppError('AUTH_MISSING', `An API key is required: send it in the ${keyHeader} header, or as "Authorization: Bearer <API_KEY>"`) };
  }
  const key = value.trim();
  if (!/^\S+$/.test(key)) return { refused: new AppError('AUTH_MALFORMED', `The ${keyHeader} header must hold an API key alone (mgw_ and 48 letters and digits)`) };
  if (hasAuthorization && /^Bearer +(\S+) *$/i.exec(authorization)?.[1] !== key) {
    return { refused: new AppError('AUTH_MALFORMED', `Both the ${keyHeader} header and Authorization were sent, with different keys: send the key in one of them`) };
  }
  return { header: `Bearer ${key}` };
}
