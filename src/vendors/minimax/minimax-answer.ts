import { z } from 'zod';
import { UpstreamBusy, UpstreamRefused, UpstreamUnavailable } from '../../infra/relay/upstream-client.js';
import { readAnswer } from '../contracts/vendor-answer.js';

/** MiniMax's `base_resp` codes (its error code page): busy ones wait, others refuse or may have acted. */
const BUSY = new Set([1002, 1041, 2045, 2056]); // rate limit, connection limit, rate growth limit, usage limit
const AUTH = new Set([1004, 2049]); // not authorized, invalid API key
const ACCOUNT = new Set([1008, 2038]); // insufficient balance, real-name verification
const MAY_HAVE_ACTED = new Set([1000, 1001, 1024, 1033]); // unknown, timeout, internal, system error

/** Its `base_resp` (`{status_code, status_msg}`, 0 for success), on every answer; absent, nothing was refused. */
export const BASE_RESP = z.object({ base_resp: z.object({ status_code: z.number().optional(), status_msg: z.string().nullish() }).nullish() });

/** The answer when its base_resp says success (0); MiniMax's refusals, waits and failures thrown as the UpstreamClient throws them. */
export function minimaxChecked(json: Record<string, unknown>, create: boolean): Record<string, unknown> {
  const base = readAnswer(BASE_RESP, json, 'the request').base_resp;
  const code = base?.status_code ?? 0;
  if (code === 0) return json;
  const message = `${base?.status_msg || 'error'} (code ${code})`;
  if (BUSY.has(code)) throw new UpstreamBusy(`the upstream is busy: ${message}`, undefined, { status: 200, code });
  if (AUTH.has(code)) throw new UpstreamRefused(message, 401, 'auth');
  if (ACCOUNT.has(code)) throw new UpstreamRefused(message, 402, 'account');
  if (MAY_HAVE_ACTED.has(code)) throw new UpstreamUnavailable(`the upstream failed: ${message}`, create, { status: 200, code });
  // 1026 (input sensitive) and 1027 (output sensitive: a song's answer says it): content refusals; 2013 (invalid parameters), 1042 (invisible characters), …
  throw new UpstreamRefused(code === 1026 || code === 1027 ? `content refused: ${message}` : message, 400, 'request');
}
