import type { KindDefinition } from '../../common/tasks/task-kind.js';
import { SUNO_AGGREGATOR } from '../../vendors/suno-aggregator/suno-aggregator.vendor.js';

/** Audio clip upload: pending (waiting, or being fetched and checked) → ready | failed. */
export const AUDIO_DEFINITION: KindDefinition = {
  name: 'audio',
  states: { queued: 'pending', running: 'pending', succeeded: 'ready', failed: 'failed' },
  noun: 'upload',
  settings: {
    prefix: 'AUDIO',
    timeoutS: 300,
    prices: { upload: { env: 'PRICE_AUDIO_UPLOAD', default: 1 } },
    // RELAY_AUDIO_URL speaks a Suno-style aggregator, the interface its door is
    channels: { configProtocol: SUNO_AGGREGATOR.protocol },
    options: {
      maxDurationS: { env: 'AUDIO_MAX_DURATION_S', default: 600, min: 1, max: 3600 },
      // how long a door holds a request for an upload's check (the sunoapi.org-style door's upload-extend); 0: the deadline and 15 s
      holdS: { env: 'AUDIO_HOLD_S', default: 0, min: 0, max: 3600 },
    },
  },
  openapi: { tag: 'audio', description: 'Suno-style audio clip upload by URL.' },
  routes: { record: '/music-a/uploads/{id}' },
};
