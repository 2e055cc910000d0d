import type { KindDefinition } from '../../common/tasks/task-kind.js';
import { GATEWAY_LYRICS_PROTOCOL } from '../../vendors/lyrics-vendors.js';
import { LyricsModelDto } from './dto/lyrics-model.dto.js';

/** Lyrics generation, as Suno-style aggregators word it: SUBMITTED → IN_PROGRESS → SUCCESS | FAILURE; the words are its result, no media. */
export const LYRICS_DEFINITION: KindDefinition = {
  name: 'lyrics',
  states: { queued: 'SUBMITTED', running: 'IN_PROGRESS', succeeded: 'SUCCESS', failed: 'FAILURE' },
  noun: 'lyrics task',
  settings: {
    prefix: 'LYRICS',
    // vendors write lyrics in seconds; an aggregator's queue may hold them a few minutes
    timeoutS: 300,
    // credits per task, whichever vendor writes it and however many versions its model writes
    prices: { task: { env: 'PRICE_LYRICS', default: 1 } },
    // RELAY_LYRICS_URL speaks a Suno-style aggregator, the interface its door is
    channels: { configProtocol: GATEWAY_LYRICS_PROTOCOL },
  },
  openapi: { tag: 'lyrics', description: "Lyrics generation as Suno-style aggregators word it (new-api's /submit/lyrics): a prompt in, a title and lyrics with section tags out, fetched with the music tasks." },
  routes: { record: '/music-a/fetch/{id}' },
  models: { dto: LyricsModelDto },
};
