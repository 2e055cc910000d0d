import { bearerAuth, type VendorDescriptor } from '../contracts/vendor.js';

/** The API version every call names (the `X-Runway-Version` header, as the SDK sends it). */
export const RUNWAY_VERSION = '2024-11-06';

/** Runway's API (Bearer api_key and its version header), for video: its own models, Google's Veo, ByteDance's Seedance. */
export const RUNWAY: VendorDescriptor = {
  protocol: 'runway',
  title: "Runway's API",
  makes: "its models, Google's Veo, ByteDance's Seedance",
  operations: ['video'],
  credentials: ['api_key'],
  baseUrl: { rule: 'the base before /v1/', example: 'https://api.dev.runwayml.com' },
  pollFloorS: 5,
  probe: () => ({ path: '/v1/organization', notFoundPasses: false, headers: { 'x-runway-version': RUNWAY_VERSION } }),
  auth: bearerAuth,
};
