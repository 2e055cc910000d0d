import { UpstreamBusy, UpstreamRefused, UpstreamUnavailable } from '../../infra/relay/upstream-client.js';
import { contentRefusals } from '../contracts/content-refusal.js';
import { bearerAuth, credentialRefusals, type VendorDescriptor } from '../contracts/vendor.js';

/** A 429's words that say the account is out of credit (sunoapi.org's 429 "insufficient credits"), not that it is rate-limited (kie.ai's 429). */
const CREDIT_WORDS = /credit|balance|insufficient|积分|余额/i;

/**
 * The answers of the sunoapi.org family (sunoapi.org, api.box, kie.ai) carry their own `code` in the body,
 * `{code, msg, data}`, under HTTP 200: 200 is a success; the others are read as the UpstreamClient reads
 * statuses. 401/403 refuse the credentials; 402, and sunoapi.org's 429 ("insufficient credits"), the
 * account's credit (kie.ai's 429 is its rate limit: words about credit tell them apart); 405 (calls over the
 * limit), 430 (call frequency too high) and 455 (maintenance) are busy, nothing taken; 500 and above a
 * failure there (`create`: it may have acted); the rest (400 parameters, 404 path, 413 prompt too long, 422
 * validation, …) refuse the request, in their words with the code.
 */
export function checkSunoapiAnswer(json: Record<string, unknown>, create = false): void {
  const code = json.code;
  if (typeof code !== 'number' || code === 200) return;
  const said = [json.msg, json.message].find((w): w is string => typeof w === 'string' && w.trim() !== '');
  const words = `${said ?? 'error'} (code ${code})`;
  const answer = { status: 200, code };
  if (code === 401 || code === 403) throw new UpstreamRefused(words, code, 'auth');
  if (code === 402 || (code === 429 && CREDIT_WORDS.test(words))) throw new UpstreamRefused(words, 402, 'account');
  if (code === 405 || code === 429 || code === 430) throw new UpstreamBusy(`the upstream is busy: ${words}`, undefined, answer);
  if (code === 455) throw new UpstreamBusy(`the upstream is under maintenance: ${words}`, undefined, answer);
  if (code >= 500) throw new UpstreamUnavailable(`the upstream failed: ${words}`, create, answer);
  throw new UpstreamRefused(words, code >= 400 && code < 500 ? code : 400, 'request');
}

/**
 * Its reading of an answer that is not a success (the UpstreamClient's `refusal`): its body's code and `msg`
 * where it sends them under another HTTP status (a 429 with "insufficient credits" refuses the account, where
 * the status alone would say busy); busy and failed codes are left to the status.
 */
export function sunoapiRefusal(status: number, json: Record<string, unknown>): UpstreamRefused | undefined {
  try {
    checkSunoapiAnswer(json);
  } catch (err) {
    if (err instanceof UpstreamRefused) return new UpstreamRefused(err.message, status, err.kind);
  }
  return undefined;
}

/**
 * A Suno-style aggregator in sunoapi.org's shape (sunoapi.org, api.box, kie.ai; Bearer api_key), for music:
 * `POST /api/v1/generate`, `/generate/extend`, `/generate/upload-extend`, `GET /api/v1/generate/record-info`;
 * lyrics: `POST /api/v1/lyrics`, `GET /api/v1/lyrics/record-info`; and for stems its vocal removal of its own
 * takes (`POST /api/v1/vocal-removal/generate`, `GET …/record-info`).
 */
export const SUNOAPI: VendorDescriptor = {
  protocol: 'sunoapi',
  title: "a Suno-style aggregator in sunoapi.org's shape",
  makes: "Suno's V3_5 to V5 and its lyrics, through sunoapi.org, api.box or kie.ai",
  operations: ['music', 'lyrics', 'stems'],
  credentials: ['api_key'],
  baseUrl: { rule: 'the base before /api/v1/ (https://api.api.box for api.box, https://api.kie.ai for kie.ai)', example: 'https://api.sunoapi.org' },
  // its content refusals: a task's SENSITIVE_WORD_ERROR ("Content contains prohibited words"), and its callbacks'
  // and answers' words for lyrics with copyrighted material, an upload matching an existing work, an artist's name
  contentRefusal: contentRefusals(/SENSITIVE_WORD_ERROR|prohibited words|copyrighted|matches existing work|artist name/),
  // it allows 3 queries a second per task: any schedule is slower
  pollFloorS: 0,
  // its balance (`{code: 200, msg, data: <credits>}`): free; a refused key answers 401 (a key out of credit shows on a create: its 429)
  probe: () => ({ path: '/api/v1/generate/credit', notFoundPasses: false, refusal: sunoapiRefusal, check: credentialRefusals(checkSunoapiAnswer) }),
  auth: bearerAuth,
};
