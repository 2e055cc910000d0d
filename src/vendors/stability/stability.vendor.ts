import { bearerAuth, type VendorDescriptor } from '../contracts/vendor.js';

/** Stability AI's API (Bearer api_key), for expand: its outpaint, answered at once. */
export const STABILITY: VendorDescriptor = {
  protocol: 'stability',
  title: "Stability AI's API",
  makes: 'its outpaint',
  operations: ['expand'],
  credentials: ['api_key'],
  baseUrl: { rule: 'the base before /v2beta/', example: 'https://api.stability.ai' },
  pollFloorS: 0,
  probe: () => ({ path: '/v1/user/balance', notFoundPasses: false }),
  auth: bearerAuth,
};
