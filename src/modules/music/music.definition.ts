import { MusicModelDto } from './dto/music-model.dto.js';
import type { KindDefinition } from '../../common/tasks/task-kind.js';
import { SUNO_AGGREGATOR } from '../../vendors/suno-aggregator/suno-aggregator.vendor.js';

/** Music (a new song or a continuation), as Suno-style aggregators: SUBMITTED → IN_PROGRESS → SUCCESS | FAILURE, two clips. */
export const MUSIC_DEFINITION: KindDefinition = {
  name: 'music',
  states: { queued: 'SUBMITTED', running: 'IN_PROGRESS', succeeded: 'SUCCESS', failed: 'FAILURE' },
  noun: 'music task',
  settings: {
    prefix: 'MUSIC',
    timeoutS: 600,
    prices: { task: { env: 'PRICE_MUSIC', default: 10 } },
    // holdS: how long a door that answers the song itself (ElevenLabs') holds a request; 0: the task's deadline and 15 s
    options: { sandboxDurationS: { env: 'MUSIC_SANDBOX_DURATION_S', default: 10, min: 1, max: 480 }, holdS: { env: 'MUSIC_HOLD_S', default: 0, min: 0, max: 3600 } },
    // RELAY_MUSIC_URL speaks a Suno-style aggregator, the interface its door is
    channels: { configProtocol: SUNO_AGGREGATOR.protocol },
  },
  openapi: { tag: 'music', description: 'Suno-style music: new songs and continuations of clips (two takes each), joined songs (concat), fetched as aggregators answer them.' },
  // the clip ids it gave its takes, what it resolved of the clip it continues (an upload or not, its upstream id and
  // channel), and the fingerprint of the request a door that answers the end keeps (TaskEngine.findRetried)
  request: { bookkeeping: ['clip_ids', 'continues.from_upload', 'continues.upstream_clip_id', 'continues.channel_id', 'request_fingerprint'] },
  routes: { record: '/music-a/fetch/{id}' },
  models: { dto: MusicModelDto },
};
