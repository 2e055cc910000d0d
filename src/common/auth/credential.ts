import type { Request } from 'express';
import type { AppError } from '../errors/app-error.js';

/** Whose key it is. Every key of one owner sees the same records. */
export interface KeyIdentity {
  owner: string;
  keyId: string;
}

/** Who is calling: the owner of the key. */
export type Principal = KeyIdentity;

/** What the Authorization header turned out to be. */
export type KeyCheck = { kind: 'none'; error: AppError } | { kind: 'rejected'; error: Error } | { kind: 'admin' } | { kind: 'key'; identity: KeyIdentity };

/** The credential of a request, resolved by the guard before the body is read. */
export type Credential = Exclude<KeyCheck, { kind: 'key' }> | { kind: 'key'; principal: Principal };

export type AuthenticatedRequest = Request & { credential?: Credential };

export function credentialOf(req: Request): Credential | undefined {
  return (req as AuthenticatedRequest).credential;
}
