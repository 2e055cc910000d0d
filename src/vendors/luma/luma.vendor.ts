import { bearerAuth, type VendorDescriptor } from '../contracts/vendor.js';
import { contentRefusals } from '../contracts/content-refusal.js';

/** Luma's Dream Machine API (Bearer api_key), for video. */
export const LUMA: VendorDescriptor = {
  protocol: 'luma',
  title: "Luma's Dream Machine API",
  operations: ['video'],
  credentials: ['api_key'],
  baseUrl: { rule: 'the base before /generations', example: 'https://api.lumalabs.ai/dream-machine/v1' },
  // its content refusals: a generation's failure_reason: "… not allowed because …", "… moderation …"
  contentRefusal: contentRefusals(/not allowed|moderation/),
  pollFloorS: 0,
  probe: () => ({ path: '/credits', notFoundPasses: false }),
  auth: bearerAuth,
};
