import type { KindDefinition } from '../../common/tasks/task-kind.js';
import { STEMS_CONFIG_PROTOCOL } from '../../vendors/stems-vendors.js';
import { StemsModelDto } from './dto/stems-model.dto.js';

/** Stems of a stored clip, as Suno-style aggregators word their tasks: SUBMITTED → IN_PROGRESS → SUCCESS | FAILURE, one clip per stem. */
export const STEMS_DEFINITION: KindDefinition = {
  name: 'stems',
  states: { queued: 'SUBMITTED', running: 'IN_PROGRESS', succeeded: 'SUCCESS', failed: 'FAILURE' },
  noun: 'stems task',
  settings: {
    prefix: 'STEMS',
    timeoutS: 900,
    prices: { task: { env: 'PRICE_STEMS', default: 5 } },
    // RELAY_STEMS_URL is an ElevenLabs account (RELAY_API_KEY its key): a gateway channel takes no stems
    channels: { configProtocol: STEMS_CONFIG_PROTOCOL },
  },
  openapi: { tag: 'music', description: 'Stems of a stored clip (vocals and instrumental, or every stem a vendor makes), each kept as a clip of its own.' },
  // the vendor's ids of the clip split and the channel that holds it: what the gateway resolved, not what was asked
  request: { bookkeeping: ['upstream_clip_id', 'upstream_task_id', 'channel_id', 'title'] },
  routes: { record: '/music-a/fetch/{id}' },
  models: { dto: StemsModelDto },
};
