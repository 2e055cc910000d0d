import { UpstreamRefused, upstreamMessage } from '../../infra/relay/upstream-client.js';
import { contentRefusals } from '../contracts/content-refusal.js';
import { bearerAuth, type VendorDescriptor } from '../contracts/vendor.js';

/**
 * Mureka's answers that the status alone would misread. Its errors are `{error: {message}, trace_id}`; its
 * documented codes: 400 the request, 401 the key, 403 a region it does not serve, 429 either "Rate limit
 * reached for requests" (busy: the UpstreamClient's reading) or "You exceeded your current quota, please check
 * your billing details" (out of credits: the account's, waiting will not help), 500 and 503 its servers.
 */
export function murekaRefusal(status: number, json: Record<string, unknown>): UpstreamRefused | undefined {
  const words = upstreamMessage(json);
  if (status === 429 && words && /quota|billing|credit/i.test(words)) return new UpstreamRefused(`the account is out of credits: ${words}`, status, 'account');
  return undefined;
}

/** Mureka's API (platform.mureka.ai: Bearer api_key), for music (songs, instrumentals and continuations, tasks queried by id) and lyrics (written at once). */
export const MUREKA: VendorDescriptor = {
  protocol: 'mureka',
  title: "Mureka's API",
  makes: 'its song and instrumental models (mureka-7.5, 7.6, o2, 8, 9, or auto), and its lyrics',
  operations: ['music', 'lyrics'],
  credentials: ['api_key'],
  baseUrl: { rule: 'the base before /v1/', example: 'https://api.mureka.ai' },
  // its content refusals: it documents no code of its own (a failed task's failed_reason is its words)
  contentRefusal: contentRefusals(),
  // it publishes no polling limit (a song takes about a minute): the schedule alone decides
  pollFloorS: 0,
  // its account billing (balance, concurrency): free, and proves the key; out of credits is its 429 "exceeded your current quota"
  probe: () => ({ path: '/v1/account/billing', notFoundPasses: false, refusal: murekaRefusal }),
  auth: bearerAuth,
};
