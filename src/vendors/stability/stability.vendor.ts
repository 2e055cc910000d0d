import { bearerAuth, type VendorDescriptor } from '../contracts/vendor.js';
import { contentRefusals } from '../contracts/content-refusal.js';

/** Stability AI's API (Bearer api_key), for expand (its outpaint), image (its Stable Image models) and music (Stable Audio 2.5), answered at once. */
export const STABILITY: VendorDescriptor = {
  protocol: 'stability',
  title: "Stability AI's API",
  makes: 'its outpaint, Stable Image Ultra and Core, Stable Diffusion 3.5, Stable Audio 2.5',
  operations: ['expand', 'image', 'music'],
  credentials: ['api_key'],
  baseUrl: { rule: 'the base before /v2beta/', example: 'https://api.stability.ai' },
  // its content refusals: its 403 `content_moderation`, and a 200 whose finish-reason is CONTENT_FILTERED (a blurred image, a filtered song)
  contentRefusal: contentRefusals(/content_moderation|CONTENT_FILTERED/),
  pollFloorS: 0,
  probe: () => ({ path: '/v1/user/balance', notFoundPasses: false }),
  auth: bearerAuth,
};
