import { Injectable, type NestMiddleware } from '@nestjs/common';
import type { NextFunction, Request, Response } from 'express';
import type { AuthenticatedRequest } from '../auth/credential.js';
import { KeysService } from '../../modules/keys/keys.service.js';

/**
 * Resolves the Authorization header before the body is read, so an unauthenticated caller
 * cannot make the service read a large body; the guard then applies each route's rule.
 */
@Injectable()
export class CredentialsMiddleware implements NestMiddleware {
  constructor(private readonly keys: KeysService) {}

  async use(req: Request, _res: Response, next: NextFunction): Promise<void> {
    try {
      (req as AuthenticatedRequest).credential = await this.keys.resolveCredential(req.headers.authorization);
    } catch (err) {
      // e.g. the database is down: keyed routes fail with it (503), public ones (health) still answer.
      (req as AuthenticatedRequest).credential = { kind: 'rejected', error: err as Error };
    }
    next();
  }
}
