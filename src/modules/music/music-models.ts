/**
 * The models (mv) a music task may name, with the limits Suno-style aggregators document for each:
 * characters of the lyrics or description (prompt), of the style (tags, negative_tags) and of the title;
 * gpt_description_prompt (a description to write lyrics from) is at most 400 characters for all.
 */
export interface MusicModel {
  /** The Suno version it stands for. */
  version: string;
  promptMax: number;
  tagsMax: number;
  titleMax: number;
}

export const MUSIC_MODELS = {
  'chirp-v3-0': { version: 'v3', promptMax: 1250, tagsMax: 120, titleMax: 80 },
  'chirp-v3-5': { version: 'v3.5', promptMax: 3000, tagsMax: 200, titleMax: 80 },
  'chirp-v4': { version: 'v4', promptMax: 3000, tagsMax: 200, titleMax: 80 },
  'chirp-auk': { version: 'v4.5', promptMax: 5000, tagsMax: 1000, titleMax: 100 },
  'chirp-bluejay': { version: 'v4.5+', promptMax: 5000, tagsMax: 1000, titleMax: 100 },
  'chirp-crow': { version: 'v5', promptMax: 5000, tagsMax: 1000, titleMax: 100 },
} as const satisfies Record<string, MusicModel>;

export type MusicModelName = keyof typeof MUSIC_MODELS;
export const MUSIC_MODEL_NAMES = Object.keys(MUSIC_MODELS) as MusicModelName[];
export const DEFAULT_MUSIC_MODEL: MusicModelName = 'chirp-v4';
export const DESCRIPTION_PROMPT_MAX = 400;
/** The largest limits of any model (what the request body may hold at all). */
export const PROMPT_MAX = 5000;
export const TAGS_MAX = 1000;
export const TITLE_MAX = 100;

/** The models' limits as a Markdown-ish line for Swagger and the README. */
export function modelLimitsText(): string {
  return MUSIC_MODEL_NAMES.map((name) => {
    const m: MusicModel = MUSIC_MODELS[name];
    return `${name} (${m.version}): prompt ${m.promptMax}, tags ${m.tagsMax}, title ${m.titleMax}`;
  }).join('; ');
}
