import type { MusicModelSpec } from '../contracts/music-vendor.js';

/** The models Mureka's instrumental route takes (`POST /v1/instrumental/generate`: auto, mureka-7.5, 7.6, 8; not o2). */
export const MUREKA_INSTRUMENTAL_MODELS: readonly string[] = ['auto', 'mureka-7.5', 'mureka-7.6', 'mureka-8', 'mureka-9'];

/**
 * What Mureka's models make (`POST /v1/song/generate` takes `model`: auto, mureka-7.5, mureka-7.6, mureka-o2,
 * mureka-8, mureka-9): lyrics sung (3,000 characters; `lyrics` is required, so a description song has its
 * lyrics written first by `POST /v1/lyrics/generate`), a style `prompt` of 1,024 characters, instrumentals by
 * its instrumental route (not o2), continuations of its own songs and of uploads (`POST /v1/song/extend`, which
 * takes no model: Mureka's own), `n` takes a task (1–3, 2 by default: two are asked), MP3; it takes no duration.
 */
function mureka(id: string): MusicModelSpec {
  return {
    id,
    lyrics: true,
    description: true,
    instrumental: MUREKA_INSTRUMENTAL_MODELS.includes(id),
    continueUpload: true,
    continueOwn: true,
    durationS: null,
    takes: 2,
    lyricsMax: 3000,
    descriptionMax: 1024,
    styleMax: 1024,
    format: 'mp3',
    // its generate takes lyrics, a model and a prompt of styles: no style to avoid
    avoidStyle: false,
  };
}

export const MUREKA_MODELS: readonly MusicModelSpec[] = ['auto', 'mureka-7.5', 'mureka-7.6', 'mureka-o2', 'mureka-8', 'mureka-9'].map(mureka);
