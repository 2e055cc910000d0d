import { NO_AUTH, type UpstreamAuth, UpstreamRefused } from '../../infra/relay/upstream-client.js';
import type { VendorDescriptor } from '../contracts/vendor.js';
import { contentRefusals } from '../contracts/content-refusal.js';

interface GoogleError {
  code?: unknown;
  message?: unknown;
  status?: unknown;
  details?: unknown;
}

/** The `details` of a Google API error (`ErrorInfo.reason`, `QuotaFailure.violations`). */
function detailsOf(error: GoogleError): Record<string, unknown>[] {
  return Array.isArray(error.details) ? error.details.filter((d): d is Record<string, unknown> => typeof d === 'object' && d !== null) : [];
}

/**
 * Google's answers that the status alone would misread (`{error: {code, message, status, details}}`): a key that
 * is not valid is a 400 INVALID_ARGUMENT whose ErrorInfo says API_KEY_INVALID; a project or region it does not
 * serve is a 400 FAILED_PRECONDITION ("User location is not supported", "Image generation is not available in
 * your country") — the account's, not the request's; a 429 RESOURCE_EXHAUSTED whose quota is `limit: 0` is a
 * free-tier key, which has no image quota at all (it needs billing), where any other 429 is a rate limit that
 * passes (busy). The rest is the UpstreamClient's reading: 403 PERMISSION_DENIED credentials, 503 UNAVAILABLE
 * ("The model is overloaded") busy, 404 an unknown model.
 */
export function googleRefusal(status: number, json: Record<string, unknown>): UpstreamRefused | undefined {
  const error = (typeof json.error === 'object' && json.error ? json.error : {}) as GoogleError;
  const message = typeof error.message === 'string' && error.message ? error.message : `HTTP ${status}`;
  const details = detailsOf(error);
  if (status === 400 && (details.some((d) => d.reason === 'API_KEY_INVALID') || /API key not valid|API Key not found/i.test(message))) return new UpstreamRefused(message, status, 'auth');
  if (status === 400 && error.status === 'FAILED_PRECONDITION') return new UpstreamRefused(message, status, 'account');
  if (status === 429) {
    const violations = details.flatMap((d) => (Array.isArray(d.violations) ? (d.violations as Record<string, unknown>[]) : []));
    const none = /\blimit: 0\b/.test(message) || violations.some((v) => v && String(v.quotaValue) === '0');
    if (none) return new UpstreamRefused(`the account has no quota for this model (limit: 0; a free-tier key has none for image models): ${message}`, status, 'account');
  }
  return undefined;
}

/** An API key in `x-goog-api-key` (as Google's SDKs send it; `?key=` would put it in logged URLs). */
function googleKey(apiKey: string | undefined): UpstreamAuth {
  if (!apiKey) return NO_AUTH;
  const headers = { 'x-goog-api-key': apiKey };
  return { headers: () => headers };
}

/** Google's Gemini API (Google AI Studio's keys; not Vertex AI, whose calls take OAuth), for images (its Gemini image models, "Nano Banana"), video (Veo), speech (its TTS models) and music (Lyria 3). */
export const GOOGLE: VendorDescriptor = {
  protocol: 'gemini',
  title: "Google's Gemini API",
  makes: 'its Gemini image and speech models, Veo and Lyria 3',
  operations: ['image', 'video', 'speech', 'music'],
  credentials: ['api_key'],
  baseUrl: { rule: 'the base before /models/, with its /v1beta', example: 'https://generativelanguage.googleapis.com/v1beta' },
  // its content refusals: Gemini's blockReason of the prompt or a finishReason of its filters (the image, speech and music adapters name them), Veo's raiMediaFiltered outputs ("the upstream's safety filters removed the video") and its errors' "violate … usage guidelines"
  contentRefusal: contentRefusals(/blockReason|finishReason (IMAGE_)?(SAFETY|PROHIBITED_CONTENT|RECITATION)|\b(BLOCKLIST|SPII)\b|safety filters|raiMediaFiltered/),
  // images, speech and music answer at once (nothing polled); Veo's operations: not documented, Google's own examples poll every 10 s
  pollFloorS: 5,
  // free, and proves the key (not billing: a free-tier key lists the image models it has no quota for)
  probe: () => ({ path: '/models?pageSize=1', notFoundPasses: false, refusal: googleRefusal }),
  auth: (c) => googleKey(c.api_key),
};
