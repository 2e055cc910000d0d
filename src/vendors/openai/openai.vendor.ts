import { UpstreamRefused } from '../../infra/relay/upstream-client.js';
import { bearerAuth, type VendorDescriptor } from '../contracts/vendor.js';
import { contentRefusals } from '../contracts/content-refusal.js';

interface OpenAIError {
  message?: unknown;
  type?: unknown;
  code?: unknown;
}

/**
 * OpenAI's answers that the status alone would misread (`{error: {message, type, param, code}}`): a refusal by
 * its safety system is a 400 about the request (`moderation_blocked` for the GPT image models,
 * `content_policy_violation` for the dall-e models that were); an account out of credit answers 429
 * `insufficient_quota`, the status of its rate limits, and waiting will not help; an organization not verified
 * for the GPT image models (403 "must be verified", which `GET /models` does not reveal) or in a country it does
 * not serve is the account's, not its key's. Tell them apart by `code`, never by status (OpenAI's error codes
 * guide). The rest is the UpstreamClient's reading: 401 credentials, 429 busy, 5xx failed.
 */
export function openaiRefusal(status: number, json: Record<string, unknown>): UpstreamRefused | undefined {
  const error = (typeof json.error === 'object' && json.error ? json.error : {}) as OpenAIError;
  const code = typeof error.code === 'string' ? error.code : '';
  const type = typeof error.type === 'string' ? error.type : '';
  const message = typeof error.message === 'string' && error.message ? error.message : code || `HTTP ${status}`;
  if (status === 400 && (code === 'moderation_blocked' || code === 'content_policy_violation')) {
    return new UpstreamRefused(`the upstream's safety system refused the request (${code}): ${message}`, status, 'request');
  }
  if (status === 429 && (code === 'insufficient_quota' || type === 'insufficient_quota')) return new UpstreamRefused(`the account is out of credit (insufficient_quota): ${message}`, status, 'account');
  if (status === 403 && (/verif/i.test(message) || code === 'unsupported_country_region_territory')) return new UpstreamRefused(message, status, 'account');
  return undefined;
}

/**
 * OpenAI's API (a Bearer API key; `OpenAI-Organization` and `OpenAI-Project` are not needed: a project key
 * names its project), for images (the Images API's generations and edits) and speech (its Speech API), answered at once.
 */
export const OPENAI: VendorDescriptor = {
  protocol: 'openai',
  title: "OpenAI's API",
  makes: 'its GPT image models and its speech models',
  operations: ['image', 'speech'],
  credentials: ['api_key'],
  baseUrl: { rule: 'the base before /images/ and /audio/, with its /v1', example: 'https://api.openai.com/v1' },
  // its content refusals: its safety system's `moderation_blocked` (the GPT image models) and `content_policy_violation` (the dall-e models that were)
  contentRefusal: contentRefusals(/moderation_blocked|content_policy_violation/),
  // it answers at once: nothing is polled
  pollFloorS: 0,
  // free, and proves the key (not the organization's verification, which a generation's 403 reveals)
  probe: () => ({ path: '/models', notFoundPasses: false, refusal: openaiRefusal }),
  auth: bearerAuth,
};
