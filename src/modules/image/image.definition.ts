import type { KindDefinition } from '../../common/tasks/task-kind.js';
import { GATEWAY } from '../../vendors/gateway/gateway.vendor.js';

/** Image generation and editing, as Kling's image task: submitted → processing → succeed | failed (the OpenAI door holds the request until the end). */
export const IMAGE_DEFINITION: KindDefinition = {
  name: 'image',
  states: { queued: 'submitted', running: 'processing', succeeded: 'succeed', failed: 'failed' },
  noun: 'task',
  settings: {
    prefix: 'IMAGE',
    timeoutS: 300,
    prices: { image: { env: 'PRICE_IMAGE', default: 1 } },
    // RELAY_IMAGE_URL speaks another gateway speaking its OpenAI Images door
    channels: { configProtocol: GATEWAY.protocol },
    costRouting: true,
    // how long OpenAI's Images door holds a request for its task's end (0: the task's deadline and 15 s); see docs/operators/configuration.md
    options: { holdS: { env: 'IMAGE_HOLD_S', default: 0, min: 0, max: 3600 } },
  },
  openapi: { tag: 'image generation', description: "Image generation and editing: OpenAI's Images API (the official openai SDK works with baseURL <this service>/openai/v1) and Kling's image API." },
  // what it read of its inputs (format, size) and the size it derived are its own; the input images and the mask are media
  request: { bookkeeping: ['inputs.*.format', 'inputs.*.width', 'inputs.*.height', 'mask_facts', 'target_size'], inputRoles: /^(input|mask)$/ },
  routes: { record: '/video-a/v1/images/generations/{id}', callbacks: '/video-a/v1/images/generations/{id}/callbacks' },
};
