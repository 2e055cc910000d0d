/** The success envelope of the Kling-style routes: `{ code: 0, message, request_id, ...rest }` (see @RequestId). */
export function successEnvelope<T extends object>(requestId: string, rest: T): { code: 0; message: string; request_id: string } & T {
  return { code: 0, message: 'SUCCEED', request_id: requestId, ...rest };
}
