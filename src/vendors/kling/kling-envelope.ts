import { z } from 'zod';
import { UpstreamBusy, UpstreamRefused, UpstreamUnavailable, upstreamMessage } from '../../infra/relay/upstream-client.js';
import { readAnswer } from '../contracts/vendor-answer.js';

/** Kling's codes that mean "busy, not taken": 1302 rate, 1303 concurrency (resource pack), 5001 temporarily unavailable. */
export const KLING_BUSY_CODES: ReadonlySet<number> = new Set([1302, 1303, 5001]);

/** Kling's envelope `{code, message, request_id, data}`, as far as it is read: a code that is not a number cannot be told from a success. */
const ENVELOPE = z.object({ code: z.number().optional(), message: z.string().nullish(), data: z.unknown().optional() });

/**
 * The `data` of Kling's envelope `{ code, message, request_id, data }`, as every Kling operation (expand,
 * video) reads it: a non-zero code is a refusal even under HTTP 200 (1000–1004 the credentials, 1100–1102
 * the account: arrears, resource pack exhausted or expired), except the busy codes (wait and retry: nothing
 * was taken) and 5000/5002 (a server error: it may have acted). Null when the envelope carries no object.
 * One reader, so that the operations cannot drift apart again (video read no code: a busy 1303 under 200
 * failed its task, and a 200 with 1102 was polled as work in progress).
 */
export function klingEnvelopeData<T extends object>(json: Record<string, unknown>): T | null {
  const { code, message: words, data } = readAnswer(ENVELOPE, json, 'the request');
  if (code !== undefined && code !== 0) {
    const message = typeof words === 'string' ? `${words} (code ${code})` : `code ${code}`;
    if (KLING_BUSY_CODES.has(code)) throw new UpstreamBusy(`the upstream is busy: ${message}`, undefined, { status: 200, code });
    if (code === 5000 || code === 5002) throw new UpstreamUnavailable(`the upstream failed: ${message}`, true, { status: 200, code });
    throw new UpstreamRefused(message, 400, code >= 1000 && code <= 1004 ? 'auth' : ACCOUNT_CODES.has(code) ? 'account' : 'request');
  }
  return typeof data === 'object' && data !== null && !Array.isArray(data) ? (data as T) : null;
}

/**
 * Whether Kling's refusal of a query means "no such task" (404, or 400 for an id it does not know): a task
 * looked up by our external_task_id that Kling does not have was provably never made.
 */
export function isKlingNotFound(err: unknown): boolean {
  return err instanceof UpstreamRefused && (err.status === 404 || err.status === 400);
}

/** Kling's account codes (exception, arrears, resource pack exhausted or expired). */
const ACCOUNT_CODES: ReadonlySet<number> = new Set([1100, 1101, 1102]);

/**
 * Kling's reading of an answer that is not a success (the UpstreamClient's `refusal`, on every Kling call):
 * its account codes under HTTP 429 refuse the account (out of credit or in arrears: waiting will not help),
 * where the status alone would say busy.
 */
export function klingRefusal(status: number, json: Record<string, unknown>): UpstreamRefused | undefined {
  if (status === 429 && typeof json.code === 'number' && ACCOUNT_CODES.has(json.code)) return new UpstreamRefused(upstreamMessage(json) ?? `HTTP ${status}`, status, 'account');
  return undefined;
}
