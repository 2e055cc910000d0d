import type { MusicModelSpec } from '../contracts/music-vendor.js';

/** A model as the sunoapi.org family serves it, with the longest title it takes (the music contract has no title limit yet). */
export interface SunoapiModelSpec extends MusicModelSpec {
  readonly titleMax: number;
}

/**
 * What Suno's models make through the sunoapi.org family (its `model`): lyrics sung (custom mode) or written
 * from a description (non-custom mode, 500 characters), instrumental, continuations of its own clips
 * (`/generate/extend`) and of uploads (`/generate/upload-extend`, by a link it fetches), two takes a task
 * ("each request returns exactly 2 songs"), MP3; no duration is taken (the model decides). The limits are
 * docs.sunoapi.org's per model: V3_5 and V4 take 3000 characters of lyrics, 200 of style and 80 of title;
 * V4_5, V4_5PLUS and V5 take 5000, 1000 and 100. Custom mode and a continuation with parameters of its own
 * require a style and a title: a request without a style is not for these models (`needsStyle`), a missing title is
 * made up by the adapter (`sunoapiTitle`).
 */
function model(id: string, lyricsMax: number, styleMax: number, titleMax: number): SunoapiModelSpec {
  return { id, lyrics: true, description: true, instrumental: true, continueUpload: true, continueOwn: true, durationS: null, takes: 2, lyricsMax, descriptionMax: 500, styleMax, titleMax, format: 'mp3', needsStyle: true };
}

export const SUNOAPI_MODELS: readonly SunoapiModelSpec[] = [
  model('V3_5', 3000, 200, 80),
  model('V4', 3000, 200, 80),
  model('V4_5', 5000, 1000, 100),
  model('V4_5PLUS', 5000, 1000, 100),
  model('V5', 5000, 1000, 100),
];
