/**
 * What PostgreSQL cannot store, made storable. Its text and JSONB types hold UTF-8 without U+0000: a
 * JS string with a lone UTF-16 surrogate fails as JSONB ("Unicode low surrogate must follow a high
 * surrogate") and silently becomes U+FFFD in a text column, and NUL fails in both. Callers' strings are
 * refused at the boundary (JsonBodyGuard, AppValidationPipe); these repair strings that are not the
 * caller's to fix (an upstream's messages, ids and result documents) where a repository writes them.
 */

const REPLACEMENT = '\uFFFD';

/** Whether PostgreSQL stores `text` exactly as it is (native checks, no regex). */
export function isStorableText(text: string): boolean {
  return text.isWellFormed() && !text.includes('\u0000');
}

/** `text` with each lone surrogate and each NUL replaced by U+FFFD, so it is stored, visibly marked. */
export function storableText(text: string): string;
export function storableText(text: string | null): string | null;
export function storableText(text: string | null): string | null {
  if (text === null || isStorableText(text)) return text;
  return text.toWellFormed().replaceAll('\u0000', REPLACEMENT);
}

/**
 * JSON.stringify of `value` (for a JSONB parameter) with every string, object key included, made
 * storable: JSON.stringify escapes a lone surrogate and NUL as \udXXX and \u0000, which JSONB refuses.
 */
export function storableJson(value: unknown): string {
  return JSON.stringify(value, (_key, v: unknown) => (typeof v === 'string' ? storableText(v) : isPlainObject(v) ? withStorableKeys(v) : v));
}

/** The object itself when every key is storable (the common case: no copy), else a copy with repaired keys. */
function withStorableKeys(object: Record<string, unknown>): Record<string, unknown> {
  const keys = Object.keys(object);
  if (keys.every(isStorableText)) return object;
  return Object.fromEntries(keys.map((k) => [storableText(k), object[k]]));
}

function isPlainObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}
