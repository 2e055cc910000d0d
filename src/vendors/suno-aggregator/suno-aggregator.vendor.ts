import { UpstreamBusy, UpstreamRefused } from '../../infra/relay/upstream-client.js';
import { bearerAuth, credentialRefusals, type VendorDescriptor } from '../contracts/vendor.js';
import { contentRefusals } from '../contracts/content-refusal.js';

/**
 * Suno-style aggregators answer some refusals under HTTP 200 as `{ code: <number>, msg }`: 429 is busy (not
 * taken), 401/403 refuse the credentials and 402 the account's credit (another channel may take the task).
 */
export function checkAggregatorAnswer(json: Record<string, unknown>): void {
  const code = json.code;
  if (typeof code !== 'number') return;
  const words = String(json.msg ?? json.message ?? `code ${code}`);
  if (code === 429) throw new UpstreamBusy(`the upstream is busy: ${words}`, undefined, { status: 200, code });
  if (code === 401 || code === 403) throw new UpstreamRefused(words, code, 'auth');
  if (code === 402) throw new UpstreamRefused(words, code, 'account');
}

/** The aggregators' fetch of a task that does not exist: its 404 means the credentials were accepted. */
export const AGGREGATOR_PROBE = { path: '/fetch/00000000-0000-4000-8000-000000000000', notFoundPasses: true, check: credentialRefusals(checkAggregatorAnswer) };

/** A Suno-style aggregator (Bearer api_key), for audio uploads, music and lyrics. */
export const SUNO_AGGREGATOR: VendorDescriptor = {
  protocol: 'suno',
  title: 'a Suno-style aggregator',
  operations: ['audio', 'music', 'lyrics'],
  credentials: ['api_key'],
  baseUrl: { rule: 'the base before /uploads/audio-url, /submit/music and /submit/lyrics', example: 'https://aggregator.example/suno' },
  // its content refusals: an aggregator's fail_reason words only ("… inappropriate …", "… sensitive …")
  contentRefusal: contentRefusals(),
  pollFloorS: 0,
  probe: () => AGGREGATOR_PROBE,
  auth: bearerAuth,
};
