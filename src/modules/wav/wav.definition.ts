import type { KindDefinition } from '../../common/tasks/task-kind.js';

/**
 * WAV: one stored audio of a music task (a take, or the whole track an upload-extend answered) converted to
 * 16-bit PCM WAV by the gateway itself and stored as the task's result. The sunoapi.org-shaped door's
 * `POST /sunoapi/api/v1/wav/generate` makes these tasks; their words are that family's (PENDING, SUCCESS,
 * GENERATE_WAV_FAILED: a WAV task is not reported as running apart).
 */
export const WAV_DEFINITION: KindDefinition = {
  name: 'wav',
  states: { queued: 'PENDING', running: 'PENDING', succeeded: 'SUCCESS', failed: 'GENERATE_WAV_FAILED' },
  noun: 'WAV conversion',
  settings: {
    prefix: 'WAV',
    timeoutS: 300,
    prices: { task: { env: 'PRICE_WAV', default: 1 } },
    relays: false,
  },
  openapi: { tag: 'music', description: '' },
  // where the converted audio is read from: the gateway's own note, resolved at acceptance
  request: { bookkeeping: ['source'] },
  routes: { record: '/sunoapi/api/v1/wav/record-info?taskId={id}' },
};
