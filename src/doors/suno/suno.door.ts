/** The Suno-style door's name (an aggregator's API under `/music-a`); music, concat and upload tasks store no door: it is their only one. */
export const SUNO_DOOR = 'suno';
