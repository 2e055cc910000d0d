import type { Request } from 'express';
import type { AppError } from '../errors/app-error.js';

/** Who is calling: the owner of the key. Every key of one owner sees the same records. */
export interface Principal {
  owner: string;
  keyId: string;
}

/** What the Authorization header of a request turned out to be; resolved once, before the body is read. */
export type Credential =
  | { kind: 'none'; error: AppError }
  | { kind: 'rejected'; error: Error }
  | { kind: 'admin' }
  | { kind: 'key'; principal: Principal };

export type AuthenticatedRequest = Request & { credential?: Credential };

export function credentialOf(req: Request): Credential | undefined {
  return (req as AuthenticatedRequest).credential;
}
