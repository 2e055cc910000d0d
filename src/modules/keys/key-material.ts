import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';

const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';
export const KEY_SCHEME = 'mgw_';
const ID_LENGTH = 8;
const SECRET_LENGTH = 40;
/** `mgw_` + 8 characters of visible id + 40 characters (about 238 bits) of secret. */
export const KEY_SHAPE = new RegExp(`^${KEY_SCHEME}[A-Za-z0-9]{${ID_LENGTH + SECRET_LENGTH}}$`);

/** Uniform base62 from random bytes (bytes >= 248 are dropped so every character is equally likely). */
function randomBase62(length: number): string {
  let out = '';
  while (out.length < length) {
    for (const byte of randomBytes(length * 2)) {
      if (byte < 248 && out.length < length) out += ALPHABET[byte % 62];
    }
  }
  return out;
}

export interface NewKeyMaterial {
  key: string;
  prefix: string;
  hash: string;
}

export function generateKey(): NewKeyMaterial {
  const key = KEY_SCHEME + randomBase62(ID_LENGTH + SECRET_LENGTH);
  return { key, prefix: prefixOf(key), hash: hashKey(key) };
}

/** The visible, non-secret part: scheme and id. */
export function prefixOf(key: string): string {
  return key.slice(0, KEY_SCHEME.length + ID_LENGTH);
}

export function hashKey(key: string): string {
  return createHash('sha256').update(key, 'utf8').digest('hex');
}

/** Compares two secrets in time that does not depend on where they differ (both are hashed to equal length first). */
export function secretsEqual(a: string, b: string): boolean {
  return timingSafeEqual(createHash('sha256').update(a).digest(), createHash('sha256').update(b).digest());
}

/** Compares a presented key with a stored hex hash in constant time. */
export function keyMatchesHash(key: string, storedHash: string): boolean {
  const presented = Buffer.from(hashKey(key), 'hex');
  const stored = Buffer.from(storedHash, 'hex');
  return stored.length === presented.length && timingSafeEqual(presented, stored);
}
