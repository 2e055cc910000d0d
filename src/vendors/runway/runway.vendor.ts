import { bearerAuth, type VendorDescriptor } from '../contracts/vendor.js';
import { contentRefusals } from '../contracts/content-refusal.js';

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
  // its content refusals: a failed task's failureCode SAFETY.INPUT.*, SAFETY.OUTPUT.* or INPUT_PREPROCESSING.SAFETY.* (the adapter puts it in brackets after the words)
  contentRefusal: contentRefusals(/\((?:[A-Z_]+\.)*SAFETY(?:\.[A-Z_]+)*\)/),
  pollFloorS: 5,
  probe: () => ({ path: '/v1/organization', notFoundPasses: false, headers: { 'x-runway-version': RUNWAY_VERSION } }),
  auth: bearerAuth,
};
