import type { KindDefinition } from '../../common/tasks/task-kind.js';
import { LUMA } from '../../vendors/luma/luma.vendor.js';
import { ModelDto } from './dto/model.dto.js';

/** Video generation, as Luma's: pending (the spec's sample; Luma's queued) → dreaming → completed | failed. */
export const VIDEO_DEFINITION: KindDefinition = {
  name: 'video',
  states: { queued: 'pending', running: 'dreaming', succeeded: 'completed', failed: 'failed' },
  noun: 'generation',
  settings: {
    prefix: 'VIDEO',
    timeoutS: 1800,
    prices: { second: { env: 'PRICE_VIDEO_SECOND', default: 1 } },
    costRouting: true,
    // RELAY_VIDEO_URL speaks Luma's API (the interface of its Luma door)
    channels: { configProtocol: LUMA.protocol },
  },
  openapi: { tag: 'video generation', description: 'Luma-style video generation; the official lumaai SDK works with baseURL <this service>/video-b/v1.' },
  // ids it gave its images (an upload's is its media's) are its own; the images are media of these roles (fit0: a first frame it fitted)
  request: { bookkeeping: ['firstFrame.id', 'lastFrame.id', 'referenceImages.*.id'], inputRoles: /^(frame[01]|ref\d+|fit0)$/ },
  routes: { record: '/video-b/v1/generations/{id}', callbacks: '/video-b/v1/generations/{id}/callbacks' },
  models: { dto: ModelDto },
};
