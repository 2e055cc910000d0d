import type { z } from 'zod';
import { UnusableAnswer } from './vendor.js';

/** A field's path as vendors' documents write it: `data[0].b64_json`; the answer itself when the path is empty. */
export function fieldPath(path: readonly PropertyKey[]): string {
  if (path.length === 0) return 'answer';
  return path.map((key, i) => (typeof key === 'number' ? `[${key}]` : `${i === 0 ? '' : '.'}${String(key)}`)).join('');
}

/**
 * A vendor's answer read by its schema (zod: made for untrusted JSON, each failure with the path of the field it
 * could not use): the parsed answer, or UnusableAnswer naming that field and what was wrong with it, in the
 * words a task's owner reads (`what`: the answer, as "the create request", "the poll").
 */
export function readAnswer<T>(schema: z.ZodType<T>, json: unknown, what: string): T {
  const parsed = schema.safeParse(json);
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0];
  throw new UnusableAnswer(`the upstream answered ${what} without a usable ${fieldPath(issue.path)} (${issue.message.replace(/^Invalid input: /, '')})`);
}
