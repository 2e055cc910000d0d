import { AppError } from '../errors/app-error.js';

/** At most this many faults are named in one answer (a 100 kB body can hold thousands). */
const MAX_NAMED = 10;

const LONE_SURROGATE = 'must not contain a lone UTF-16 surrogate (\\ud800 to \\udfff without its pair)';
const NUL = 'must not contain the NUL character (\\u0000)';

/**
 * Why PostgreSQL could not store `text` as the caller sent it, as the rule it breaks, or undefined.
 * A lone surrogate is valid JSON but not Unicode: JSONB refuses it and a text column would keep U+FFFD
 * instead, so the caller could not find its value again; text of either kind cannot hold NUL.
 */
export function unstorableRule(text: string): string | undefined {
  if (!text.isWellFormed()) return LONE_SURROGATE;
  if (text.includes('\u0000')) return NUL;
  return undefined;
}

/**
 * Refuses (400 INVALID_PARAMETER) a parsed JSON body holding a string or an object key that PostgreSQL
 * could not store, naming each by its path (`keyframes.frame0.url`, `clip_ids[2]`) and the rule. Called
 * once, where every body is parsed, so every route, with a DTO or without, gets the same rule.
 */
export function assertStorableStrings(body: unknown): void {
  const problems: string[] = [];
  collect(body, '', problems);
  if (problems.length === 0) return;
  const more = problems.length > MAX_NAMED ? `; and ${problems.length - MAX_NAMED} more` : '';
  throw new AppError('INVALID_PARAMETER', problems.slice(0, MAX_NAMED).join('; ') + more);
}

/** Walks the body (its depth is bounded by JsonBodyGuard before it is parsed). */
function collect(value: unknown, path: string, problems: string[]): void {
  if (typeof value === 'string') {
    const rule = unstorableRule(value);
    if (rule) problems.push(`${path || 'the body'} ${rule}`);
  } else if (Array.isArray(value)) {
    value.forEach((item, i) => collect(item, `${path}[${i}]`, problems));
  } else if (typeof value === 'object' && value !== null) {
    for (const [key, item] of Object.entries(value)) {
      const keyPath = path ? `${path}.${segment(key)}` : segment(key);
      const rule = unstorableRule(key);
      if (rule) problems.push(`${keyPath} (an object key) ${rule}`);
      collect(item, keyPath, problems);
    }
  }
}

/**
 * A key as it appears in a path: as it is when it is a plain name, else quoted and escaped as JSON
 * (JSON.stringify writes a lone surrogate as \udXXX and NUL as \u0000), so a message never carries them.
 */
function segment(key: string): string {
  return /^[\w$-]+$/.test(key) ? key : JSON.stringify(key);
}
