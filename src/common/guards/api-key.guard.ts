import { type CanActivate, type ExecutionContext, Injectable } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import type { Request } from 'express';
import { AppConfig } from '../../infra/config/app-config.js';
import { credentialOf } from '../auth/credential.js';
import { ROUTE_ACCESS, type RouteAccess } from '../decorators/auth.decorators.js';
import { AppError } from '../errors/app-error.js';
import { requestPath } from '../http/request-path.js';

/**
 * Enforces each route's access rule on the credential that CredentialsMiddleware resolved:
 * keyed routes need a valid, unrevoked key; admin routes need ADMIN_API_KEY (404 when it is not
 * configured, 403 for a normal key); public routes need nothing.
 */
@Injectable()
export class ApiKeyGuard implements CanActivate {
  constructor(
    private readonly reflector: Reflector,
    private readonly config: AppConfig,
  ) {}

  canActivate(context: ExecutionContext): boolean {
    const access = this.reflector.getAllAndOverride<RouteAccess | undefined>(ROUTE_ACCESS, [context.getHandler(), context.getClass()]);
    if (access === 'public') {
      return true;
    }
    const req = context.switchToHttp().getRequest<Request>();
    if (!this.config.runsApi) {
      // ROLE=worker serves only the health checks (public routes)
      throw new AppError('NOT_FOUND', `No route for ${req.method} ${requestPath(req)}: this instance runs workers only (ROLE=worker)`);
    }
    const credential = credentialOf(req);
    if (access === 'admin' && !this.config.adminApiKey) {
      throw new AppError('NOT_FOUND', `No route for ${req.method} ${requestPath(req)}`);
    }
    switch (credential?.kind) {
      case 'none':
      case 'rejected':
        throw credential.error;
      case 'admin':
        if (access === 'admin') return true;
        throw new AppError('AUTH_FAILED', 'The admin key is only accepted on /admin routes; use an API key here');
      case 'key':
        if (access !== 'admin') return true;
        throw new AppError('FORBIDDEN', 'This route needs the admin key; an API key may not use it');
      case undefined:
        throw new AppError('AUTH_MISSING', 'Authorization header is required: send "Authorization: Bearer <API_KEY>"');
    }
  }
}
