import type { MusicModelSpec } from '../contracts/music-vendor.js';

/**
 * What Suno's models make as Suno-style aggregators in new-api's shape serve them (mv): lyrics sung or written from
 * a description (400 characters), instrumental, continuations of the clips the aggregator holds (its takes, and
 * uploads registered with it: named by its ids, never sent as bytes), two takes a task, MP3; no duration is
 * taken (the model decides). The limits are the aggregators' documented ones per version; chirp-v4 first, the
 * model a request naming none was always made with.
 */
function suno(id: string, lyricsMax: number, styleMax: number): MusicModelSpec {
  return { id, lyrics: true, description: true, instrumental: true, continueUpload: false, continueOwn: true, durationS: null, takes: 2, lyricsMax, descriptionMax: 400, styleMax, format: 'mp3' };
}

export const SUNO_MODELS: readonly MusicModelSpec[] = [
  suno('chirp-v4', 3000, 200),
  suno('chirp-v3-0', 1250, 120),
  suno('chirp-v3-5', 3000, 200),
  suno('chirp-auk', 5000, 1000),
  suno('chirp-bluejay', 5000, 1000),
  suno('chirp-crow', 5000, 1000),
];
