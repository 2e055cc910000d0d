import { bearerAuth, type VendorDescriptor } from '../contracts/vendor.js';
import { contentRefusals } from '../contracts/content-refusal.js';

/** BytePlus ModelArk's API (Ark; Volcengine Ark in mainland China), for ByteDance's Seedance video models: a Bearer API key. */
export const SEEDANCE: VendorDescriptor = {
  protocol: 'seedance',
  title: 'BytePlus ModelArk (Ark)',
  makes: 'Seedance',
  operations: ['video'],
  credentials: ['api_key'],
  baseUrl: { rule: 'the base before /contents/, with its /api/v3 (an Ark key works in its own region only; https://ark.cn-beijing.volces.com/api/v3 for Volcengine Ark)', example: 'https://ark.ap-southeast.bytepluses.com/api/v3' },
  // its content refusals: ModelArk's error codes Input…SensitiveContentDetected and OutputVideoSensitiveContentDetected (the adapter puts the code in brackets after the words)
  contentRefusal: contentRefusals(/SensitiveContentDetected/),
  // not documented; Ark's own examples poll every few seconds
  pollFloorS: 5,
  // its list of content generation tasks, one per page
  probe: () => ({ path: '/contents/generations/tasks?page_num=1&page_size=1', notFoundPasses: false }),
  auth: bearerAuth,
};
