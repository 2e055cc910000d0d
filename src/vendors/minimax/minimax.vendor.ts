import { bearerAuth, credentialRefusals, type VendorDescriptor } from '../contracts/vendor.js';
import { minimaxChecked } from './minimax-answer.js';
import { contentRefusals } from '../contracts/content-refusal.js';

/** MiniMax's API (Bearer api_key), for video (Hailuo), music (MiniMax Music) and lyrics on one key; its refusals come under HTTP 200 as base_resp. */
export const MINIMAX: VendorDescriptor = {
  protocol: 'minimax',
  title: "MiniMax's API",
  makes: 'Hailuo video, MiniMax Music, its lyrics generation',
  // one base URL and key serve them all: a channel may take them together
  operations: ['video', 'music', 'lyrics'],
  credentials: ['api_key'],
  baseUrl: { rule: 'the base before /v1/ (https://api.minimaxi.com in mainland China)', example: 'https://api.minimax.io' },
  // its content refusals: its base_resp codes 1026 (the input judged sensitive, on a create) and 1027 (the output judged sensitive: a failed video task, a song refused)
  contentRefusal: contentRefusals(/\(code 102[67]\)/),
  // its list of generated videos' files
  pollFloorS: 5,
  probe: () => ({ path: '/v1/files/list?purpose=video_generation', notFoundPasses: false, check: credentialRefusals((json) => minimaxChecked(json, false)) }),
  auth: bearerAuth,
};
