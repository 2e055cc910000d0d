import { type CallOptions, UpstreamRefused, upstreamMessage } from '../../infra/relay/upstream-client.js';
import { bearerAuth, type VendorDescriptor } from '../contracts/vendor.js';
import { contentRefusals } from '../contracts/content-refusal.js';

/**
 * DashScope's codes that say the account, not the request, was refused, whatever HTTP status they come under:
 * `Arrearage` (an overdue account), `AllocationQuota.FreeTierOnly` (its free tier used up, paid use switched
 * off), `AccessDenied.Unpurchased` (the model not bought). Another account may take the task.
 */
const ACCOUNT_CODES = /^(Arrearage|AllocationQuota\.FreeTierOnly|AccessDenied\.Unpurchased)$/;

/** DashScope's codes of its moderation: the input or output inspected and refused, or suspected of infringing. */
const CONTENT_CODES = /^(DataInspectionFailed|IPInfringementSuspect)$/;

/**
 * DashScope's reading of an answer that is not a success (the UpstreamClient's `refusal`): its errors are
 * `{request_id, code, message}` under an HTTP status; the generic reading (401 and 403 the credentials, 429
 * busy, 400 the request) holds except for the account's codes above.
 */
export const dashscopeRefusal: NonNullable<CallOptions['refusal']> = (status, json) => {
  const code = typeof json.code === 'string' ? json.code : '';
  if (ACCOUNT_CODES.test(code)) return new UpstreamRefused(`${code}: ${upstreamMessage(json) ?? `HTTP ${status}`}`, status, 'account');
  // its moderation refusing a create's input: the code kept with the words (WAN.contentRefusal reads it)
  if (status === 400 && CONTENT_CODES.test(code)) return new UpstreamRefused(`${upstreamMessage(json) ?? 'refused'} (${code})`, status, 'request');
  return undefined;
};

/** Alibaba Cloud Model Studio's DashScope API (Bearer api_key), for Alibaba's Wan (Tongyi Wanxiang) video models. */
export const WAN: VendorDescriptor = {
  protocol: 'wan',
  title: "Alibaba Cloud Model Studio's DashScope API",
  makes: 'Wan',
  operations: ['video'],
  credentials: ['api_key'],
  baseUrl: {
    rule: 'the base before /services/ and /tasks/, with its /api/v1 (a key works in its own region only: https://dashscope.aliyuncs.com/api/v1 in mainland China, https://dashscope-us.aliyuncs.com/api/v1 in Virginia)',
    example: 'https://dashscope-intl.aliyuncs.com/api/v1',
  },
  // its content refusals: DashScope's codes DataInspectionFailed (its moderation of the input or output) and IPInfringementSuspect (the adapter puts the code in brackets after the words)
  contentRefusal: contentRefusals(/DataInspectionFailed|IPInfringementSuspect/),
  // not documented as a limit: its SDK polls every 1 s growing to 5 s; the task query takes 20 QPS an account
  pollFloorS: 5,
  // its list of asynchronous tasks, one per page
  probe: () => ({ path: '/tasks?page_no=1&page_size=1', notFoundPasses: false, refusal: dashscopeRefusal }),
  auth: bearerAuth,
};
