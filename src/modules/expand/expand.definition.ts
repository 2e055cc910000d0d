import type { KindDefinition } from '../../common/tasks/task-kind.js';
import { GATEWAY } from '../../vendors/gateway/gateway.vendor.js';

/** Image expand, as Kling's task: submitted → processing → succeed | failed. */
export const EXPAND_DEFINITION: KindDefinition = {
  name: 'expand',
  states: { queued: 'submitted', running: 'processing', succeeded: 'succeed', failed: 'failed' },
  noun: 'task',
  settings: {
    prefix: 'EXPAND',
    timeoutS: 600,
    prices: { image: { env: 'PRICE_EXPAND_IMAGE', default: 1 } },
    // RELAY_EXPAND_URL speaks another gateway speaking its door (Kling's expand): Kling's own needs RELAY_KLING_* keys
    channels: { configProtocol: GATEWAY.protocol },
    costRouting: true,
    // the expanded image's area in pixels; the default (4096 x 4096) and its reasons: docs/operators/configuration.md
    options: { maxOutputPixels: { env: 'EXPAND_MAX_OUTPUT_PIXELS', default: 16_777_216, min: 90_000, max: 268_402_689 } },
  },
  openapi: { tag: 'image expand', description: 'Kling-style image expansion (outpainting).' },
  // what it read of the input image at acceptance (its bytes are in expand_inputs, not media)
  request: { bookkeeping: ['image_format', 'image_width', 'image_height'] },
  routes: { record: '/video-a/v1/images/editing/expand/{id}', callbacks: '/video-a/v1/images/editing/expand/{id}/callbacks' },
};
