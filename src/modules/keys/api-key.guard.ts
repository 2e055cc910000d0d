import { type CanActivate, type ExecutionContext, Injectable } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import type { Request, Response } from 'express';
import type { AuthenticatedRequest, Credential } from '../../common/auth/credential.js';
import { ROUTE_ACCESS, type RouteAccess } from '../../common/decorators/auth.decorators.js';
import { AppError } from '../../common/errors/app-error.js';
import { requestPath } from '../../common/http/request-path.js';
import { AppConfig } from '../../infra/config/app-config.js';
import { LimitsService } from '../limits/limits.service.js';
import { AuthFailures } from './auth-failures.js';
import { readBearer } from './bearer.js';
import { secretsEqual } from './key-material.js';
import { KeysService } from './keys.service.js';

/**
 * Resolves the Authorization header and enforces each route's access rule, before any body is read
 * (bodies are read by JsonBodyGuard, after it): keyed routes need a valid, unrevoked key;
 * admin routes need ADMIN_API_KEY (404 when it is not configured, 403 for a normal key); key-or-admin
 * routes take either (the admin key is not counted against any owner's rate limit); the metrics route
 * takes METRICS_TOKEN or the admin key (401 for any request when neither is configured); public routes need nothing, and
 * do not look the key up at all. A keyed request is then counted against its owner's rate limit (1302
 * over it). Every refused credential counts against the client's address (AuthFailures): past
 * AUTH_FAILURE_LIMIT in the window, every request from it that needs a credential answers 429 (1005)
 * before anything is looked up.
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
      this.authorizeMetrics(req);
      return true;
    }
    if (!this.config.runsApi) {
      // ROLE=worker serves only the health checks (public routes) and the metrics
      throw new AppError('NOT_FOUND', `No route for ${req.method} ${requestPath(req)}: this instance runs workers only (ROLE=worker)`);
    }
    if (access === 'admin' && !this.config.adminApiKey) {
      throw new AppError('NOT_FOUND', `No route for ${req.method} ${requestPath(req)}`);
    }
    this.refuseIfLimited(req);
    const check = await this.keys.resolveCredential(req.headers.authorization);
    switch (check.kind) {
      case 'none':
        throw check.error;
      case 'rejected':
        this.failures.record(req.ip);
        throw check.error;
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
   * GET /metrics: the metrics token or the admin key, compared in memory (no key is looked up). Without
   * either configured nothing opens it: every request is 401, saying what the operators set.
   */
  private authorizeMetrics(req: Request): void {
    const { metricsToken, adminApiKey } = this.config;
    this.refuseIfLimited(req);
    const bearer = readBearer(req.headers.authorization, 'METRICS_TOKEN');
    if ('kind' in bearer) {
      if (bearer.kind === 'rejected') this.failures.record(req.ip);
      throw bearer.error;
    }
    if (!metricsToken && !adminApiKey) throw new AppError('AUTH_FAILED', 'No credential opens the metrics on this instance: its operators set METRICS_TOKEN (or ADMIN_API_KEY) to serve them');
    if ((metricsToken && secretsEqual(bearer.token, metricsToken)) || (adminApiKey && secretsEqual(bearer.token, adminApiKey))) return;
    this.failures.record(req.ip);
    throw new AppError('AUTH_FAILED', 'The metrics take the metrics token (METRICS_TOKEN) or the admin key');
  }

  private refuseIfLimited(req: Request): void {
    const retryAfterS = this.failures.retryAfterS(req.ip);
    if (retryAfterS > 0) {
      throw new AppError('AUTH_THROTTLED', `Too many failed authentications from your address (${this.config.authFailures.limit} within ${this.config.authFailures.windowS} s): every credential from it is refused for ${retryAfterS} s more`, retryAfterS);
    }
  }
}
