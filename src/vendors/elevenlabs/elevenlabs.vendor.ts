import { z } from 'zod';
import { NO_AUTH, type UpstreamAuth, UpstreamRefused } from '../../infra/relay/upstream-client.js';
import { contentRefusals } from '../contracts/content-refusal.js';
import type { VendorDescriptor } from '../contracts/vendor.js';

/**
 * ElevenLabs' errors: `{detail: {status, message}}` (a FastAPI app: a request its schema refuses is a 422 whose
 * `detail` is a list of `{loc, msg, type}`). Read leniently: an answer of another shape is left to the
 * UpstreamClient's reading.
 */
const ERROR = z.object({
  detail: z.union([
    z.object({
      status: z.string().optional(),
      message: z.string().optional(),
      // Music's refusals of copyrighted material carry what it would take instead (none for harmful content)
      data: z
        .object({
          prompt_suggestion: z.string().nullish().catch(undefined),
          composition_plan_suggestion: z.object({ positive_global_styles: z.array(z.string()).optional() }).nullish().catch(undefined),
        })
        .nullish()
        .catch(undefined),
    }),
    z.array(z.object({ loc: z.array(z.union([z.string(), z.number()])).optional(), msg: z.string().optional() })),
    z.string(),
  ]),
});

/**
 * An error answer's code and words: `detail.status` and `detail.message`, or a 422's first field and rule; and
 * where Music refused a prompt or a plan (`bad_prompt`, `bad_composition_plan`), what it suggests instead
 * (`detail.data.prompt_suggestion`, or the styles of `detail.data.composition_plan_suggestion`).
 */
export function elevenlabsError(json: Record<string, unknown>): { status: string; message: string; suggestion?: string } | undefined {
  const parsed = ERROR.safeParse(json);
  if (!parsed.success) return undefined;
  const { detail } = parsed.data;
  if (typeof detail === 'string') return { status: '', message: detail };
  if (Array.isArray(detail)) {
    const first = detail[0];
    const field = first?.loc?.filter((l) => l !== 'body').join('.');
    return { status: 'validation_error', message: first ? `${field ? `${field}: ` : ''}${first.msg ?? 'invalid'}` : 'invalid request' };
  }
  const suggestedStyles = detail.data?.composition_plan_suggestion?.positive_global_styles;
  const suggestion = detail.data?.prompt_suggestion || (suggestedStyles?.length ? `styles ${suggestedStyles.join(', ')}` : undefined);
  return { status: detail.status ?? '', message: detail.message ?? detail.status ?? '', ...(suggestion ? { suggestion } : {}) };
}

/**
 * ElevenLabs' answers that the status alone would misread: an account out of credits answers 401
 * `quota_exceeded` ("This request exceeds your quota of 10000. You have 0 credits remaining …"), and a free
 * account it flagged 401 `detected_unusual_activity` — the account's, not the key's; a prompt its moderation
 * refused is a 400 `bad_prompt` ("… violated our Terms of Service"; Music's copyrighted material, with a
 * suggestion, kept in the words) or Music's `bad_composition_plan`, a content refusal. The rest is the
 * UpstreamClient's reading: 401 `invalid_api_key` or `missing_permissions` credentials, 429
 * `too_many_concurrent_requests` or `system_busy` busy, 404 `voice_not_found` and 400/422 the request.
 */
export function elevenlabsRefusal(status: number, json: Record<string, unknown>): UpstreamRefused | undefined {
  const error = elevenlabsError(json);
  if (!error) return undefined;
  const words = `${error.message || `HTTP ${status}`}${error.status ? ` (${error.status})` : ''}`;
  if (error.status === 'quota_exceeded') return new UpstreamRefused(`the account is out of credits: ${words}`, status, 'account');
  if (error.status === 'detected_unusual_activity' || error.status === 'payment_required') return new UpstreamRefused(`the account may not generate: ${words}`, status, 'account');
  if (error.status === 'bad_prompt' || error.status === 'bad_composition_plan') {
    return new UpstreamRefused(`the upstream's moderation refused the text: ${words}${error.suggestion ? `; it suggests: ${error.suggestion}` : ''}`, status, 'request');
  }
  if (status === 400 || status === 404 || status === 422) return new UpstreamRefused(words, status, 'request');
  return undefined;
}

/**
 * The probe's reading: a restricted key without the Models permission is refused the list of models (401
 * `missing_permissions`), yet may speak: the test fails saying so, and the channel is not disabled for it.
 */
function probeRefusal(status: number, json: Record<string, unknown>): UpstreamRefused | undefined {
  const error = elevenlabsError(json);
  if (error?.status === 'missing_permissions') return new UpstreamRefused(`the key may not list models (give it the Models permission to test it): ${error.message}`, status, 'request');
  return elevenlabsRefusal(status, json);
}

/** An API key in `xi-api-key`, as ElevenLabs' API and SDKs send it. */
function xiApiKey(apiKey: string | undefined): UpstreamAuth {
  if (!apiKey) return NO_AUTH;
  const headers = { 'xi-api-key': apiKey };
  return { headers: () => headers };
}

/**
 * ElevenLabs' API (an API key in `xi-api-key`), for speech (its text-to-speech endpoint), music (Eleven Music's
 * compose endpoint) and stems (its stem separation), all answered at once: one account, one base URL and one key serve them.
 */
export const ELEVENLABS: VendorDescriptor = {
  protocol: 'elevenlabs',
  title: "ElevenLabs' API",
  makes: 'its speech models (Multilingual v2, Flash v2.5, Turbo v2.5, v3), Eleven Music (music_v1) and its stem separation',
  operations: ['speech', 'music', 'stems'],
  credentials: ['api_key'],
  baseUrl: { rule: 'the base before /v1/', example: 'https://api.elevenlabs.io' },
  // its content refusals: its moderation's `bad_prompt` ("Your prompt appears to have violated our Terms of
  // Service"; Music's copyrighted material too) and Music's `bad_composition_plan`
  contentRefusal: contentRefusals(/\bbad_prompt\b|\bbad_composition_plan\b/),
  // it answers at once: nothing is polled
  pollFloorS: 0,
  // free, and proves the key (not its credits: a create's 401 quota_exceeded does, and disables the channel)
  probe: () => ({ path: '/v1/models', notFoundPasses: false, refusal: probeRefusal }),
  auth: (c) => xiApiKey(c.api_key),
};
