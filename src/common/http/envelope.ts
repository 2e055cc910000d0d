import { currentRequestId } from '../../infra/logger/request-context.js';

/** The success envelope of the Kling-style routes: `{ code: 0, message, request_id, ...rest }`. */
export function successEnvelope<T extends object>(rest: T): { code: 0; message: string; request_id: string } & T {
  return { code: 0, message: 'SUCCEED', request_id: currentRequestId() ?? '', ...rest };
}
