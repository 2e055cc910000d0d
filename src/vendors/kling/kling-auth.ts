import { SignJWT } from 'jose';
import { NO_AUTH, type UpstreamAuth } from '../../infra/relay/upstream-client.js';

/** A JWT (valid 1800 s) is used for this long, then minted again: never close to its expiry. */
const JWT_REUSE_S = 300;
/** Accounts whose JWTs are kept (more are rare: the map starts over). */
const MAX_TOKENS = 1000;
const tokens = new Map<string, { token: string; at: number }>();

/**
 * Kling's auth: a JWT from the account's access and secret key, as Kling's sample mints them (HS256, iss =
 * access key, exp = now + 1800 s, nbf = now - 5 s, signed with the secret key), minted again once it is
 * JWT_REUSE_S old, so a poll does not pay for a signature.
 */
export function klingAuth(accessKey: string | undefined, secretKey: string | undefined): UpstreamAuth {
  if (!accessKey || !secretKey) return NO_AUTH;
  const key = `${accessKey}\n${secretKey}`;
  return {
    headers: async () => {
      const now = Math.floor(Date.now() / 1000);
      let minted = tokens.get(key);
      if (!minted || now - minted.at >= JWT_REUSE_S) {
        const token = await new SignJWT({}).setProtectedHeader({ alg: 'HS256', typ: 'JWT' }).setIssuer(accessKey).setExpirationTime(now + 1800).setNotBefore(now - 5).sign(new TextEncoder().encode(secretKey));
        if (tokens.size >= MAX_TOKENS) tokens.clear();
        tokens.set(key, (minted = { token, at: now }));
      }
      return { authorization: `Bearer ${minted.token}` };
    },
  };
}
