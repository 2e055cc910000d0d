import { NO_AUTH, type UpstreamAuth } from '../../infra/relay/upstream-client.js';
import type { VendorDescriptor } from '../contracts/vendor.js';
import { contentRefusals } from '../contracts/content-refusal.js';

/** BFL's auth: the account's key in its own header, `x-key` (not Bearer). */
export function bflAuth(credentials: Readonly<Record<string, string | undefined>>): UpstreamAuth {
  const key = credentials.api_key;
  if (!key) return NO_AUTH;
  const headers = { 'x-key': key };
  return { headers: () => headers };
}

/**
 * Black Forest Labs' API (docs.bfl.ai) for its FLUX models: `x-key` api_key; `https://api.bfl.ai` routes to
 * a cluster (its regional hosts are `api.eu.bfl.ai` and `api.us.bfl.ai`), which is why a task is always asked
 * about at the `polling_url` its create answered.
 */
export const BFL: VendorDescriptor = {
  protocol: 'bfl',
  title: "Black Forest Labs' API",
  makes: 'FLUX',
  operations: ['image'],
  credentials: ['api_key'],
  baseUrl: { rule: 'the base before /v1/ (https://api.eu.bfl.ai or https://api.us.bfl.ai to keep the data in one region)', example: 'https://api.bfl.ai' },
  // its content refusals: a task ends `Content Moderated` (its output) or `Request Moderated` (its input)
  contentRefusal: contentRefusals(/Content Moderated|Request Moderated/),
  // it publishes no limit on polls (its 429 counts active tasks, 24 an account); its own examples poll every 0.5 s
  pollFloorS: 0.5,
  // the account's balance: a refused key answers 403, an account without credit still answers its balance
  probe: () => ({ path: '/v1/credits', notFoundPasses: false }),
  auth: bflAuth,
};
