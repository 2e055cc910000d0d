import { credentialRefusals, type VendorDescriptor } from '../contracts/vendor.js';
import { klingAuth } from './kling-auth.js';
import { klingEnvelopeData, klingRefusal } from './kling-envelope.js';
import { contentRefusals } from '../contracts/content-refusal.js';

/** Kling's API: a JWT from the account's access and secret key (minted by the UpstreamClient), for expand, video and image. */
export const KLING: VendorDescriptor = {
  protocol: 'kling',
  title: "Kling's API",
  operations: ['expand', 'video', 'image'],
  credentials: ['access_key', 'secret_key'],
  baseUrl: { rule: 'the base before /v1/, for expand, video and image alike', example: 'https://api-singapore.klingai.com' },
  // its content refusals: its code 1301 ("the content security policy of the platform", on a create) and a failed task's "Failure to pass the risk control system"
  contentRefusal: contentRefusals(/\(code 1301\)|content security|risk control/),
  // it publishes no limit on queries: the schedule (RELAY_POLL_MS and the age back-off) alone decides
  pollFloorS: 0,
  configCredentials: { access_key: 'RELAY_KLING_ACCESS_KEY', secret_key: 'RELAY_KLING_SECRET_KEY' },
  // they are RELAY_EXPAND_URL's (as before the vendor layer): RELAY_VIDEO_URL speaks the Luma door's interface
  configFor: ['expand'],
  // its list of expand tasks (without expand: of text2video tasks; image alone: of image generations), one per page; refusals also come under HTTP 200
  probe: (operations) => ({
    path: operations.includes('expand') ? '/v1/images/editing/expand?pageNum=1&pageSize=1' : operations.includes('video') ? '/v1/videos/text2video?pageNum=1&pageSize=1' : '/v1/images/generations?pageNum=1&pageSize=1',
    notFoundPasses: false,
    refusal: klingRefusal,
    check: credentialRefusals(klingEnvelopeData),
  }),
  auth: (c) => klingAuth(c.access_key, c.secret_key),
};
