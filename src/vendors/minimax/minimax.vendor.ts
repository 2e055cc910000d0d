import { bearerAuth, credentialRefusals, type VendorDescriptor } from '../contracts/vendor.js';
import { minimaxChecked } from './minimax-answer.js';

/** MiniMax's API (Bearer api_key), for video (Hailuo); its refusals come under HTTP 200 as base_resp. */
export const MINIMAX: VendorDescriptor = {
  protocol: 'minimax',
  title: "MiniMax's API",
  makes: 'Hailuo',
  operations: ['video'],
  credentials: ['api_key'],
  baseUrl: { rule: 'the base before /v1/ (https://api.minimaxi.com in mainland China)', example: 'https://api.minimax.io' },
  // its list of generated videos' files
  pollFloorS: 5,
  probe: () => ({ path: '/v1/files/list?purpose=video_generation', notFoundPasses: false, check: credentialRefusals((json) => minimaxChecked(json, false)) }),
  auth: bearerAuth,
};
