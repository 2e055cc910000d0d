import type { KindDefinition } from '../../common/tasks/task-kind.js';

/** Concat: joins clips into one song, in the gateway itself (the clips' audio is in its store). */
export const CONCAT_DEFINITION: KindDefinition = {
  name: 'concat',
  states: { queued: 'SUBMITTED', running: 'IN_PROGRESS', succeeded: 'SUCCESS', failed: 'FAILURE' },
  noun: 'concat task',
  settings: {
    prefix: 'CONCAT',
    timeoutS: 300,
    prices: { task: { env: 'PRICE_CONCAT', default: 1 } },
    relays: false,
    options: { maxDurationS: { env: 'CONCAT_MAX_DURATION_S', default: 600, min: 10, max: 3600 } },
  },
  openapi: { tag: 'music', description: '' },
  // what it resolved at acceptance: the parts, the song's id, and the description it takes from its last part
  request: { bookkeeping: ['parts', 'song_id', 'title', 'style', 'lyrics', 'model'] },
  routes: { record: '/music-a/fetch/{id}' },
};
