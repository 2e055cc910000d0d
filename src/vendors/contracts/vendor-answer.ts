import type { z } from 'zod';
import { UnusableAnswer } from './vendor.js';

/**
 * A vendor's answer read by its schema (zod: made for parsing untrusted JSON, its issues carry the path of the
 * field they are about): the parsed value, or UnusableAnswer naming the first field it could not use and why,
 * as `the upstream's <what> could not be used: data.task_result.videos.0.url: Invalid input: expected string,
 * received number`. Schemas read only what the adapter uses, and let the rest pass (a vendor adding a field
 * breaks nothing).
 */
export function readAnswer<S extends z.ZodType>(schema: S, json: unknown, what: string): z.output<S> {
  const parsed = schema.safeParse(json);
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0];
  const field = issue.path.length > 0 ? issue.path.map(String).join('.') : 'the answer';
  throw new UnusableAnswer(`the upstream's ${what} could not be used: ${field}: ${issue.message}`);
}
