import type { KeyCheck } from '../../common/auth/credential.js';
import { AppError } from '../../common/errors/app-error.js';

/** What a refused Authorization header is: missing, or not `Bearer <token>`. */
export type BearerRefusal = Extract<KeyCheck, { kind: 'none' | 'rejected' }>;

/** The token of `Authorization: Bearer <token>` (the scheme in any case), or why there is none; `what` names the token in the messages. */
export function readBearer(header: string | undefined, what: string): { token: string } | BearerRefusal {
  if (header === undefined || header.trim() === '') {
    return { kind: 'none', error: new AppError('AUTH_MISSING', `Authorization header is required: send "Authorization: Bearer <${what}>"`) };
  }
  const match = /^Bearer +(\S+) *$/i.exec(header);
  if (!match) {
    return { kind: 'rejected', error: new AppError('AUTH_MALFORMED', `Authorization header must have the form "Bearer <${what}>"`) };
  }
  return { token: match[1] };
}
