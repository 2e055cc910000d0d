/** One word of a clip's lyrics, timed in seconds from the clip's start (what `clips.timed_lyrics` holds, in order). */
export interface TimedWord {
  word: string;
  startS: number;
  endS: number;
}

/** The longest lyrics and title a clip keeps (a vendor's longer words are cut there), and the most words it times. */
export const CLIP_LYRICS_MAX = 20_000;
export const CLIP_TITLE_MAX = 256;
export const CLIP_TIMED_WORDS_MAX = 5_000;

/** Times rounded to the millisecond (vendors give ms or float seconds; nothing finer is meaningful). */
function ms(seconds: number): number {
  return Math.round(seconds * 1000) / 1000;
}

/**
 * A vendor's timed words as a clip keeps them: times counted from `fromS` (a take that holds the continued clip up
 * to the cut as well keeps only what follows it, so its words are shifted and those sung before the cut dropped),
 * words not within the clip's `durationS` dropped and the last one's end held to it, words without text or with
 * times that are not numbers, negative or reversed dropped, in order of their start. Null when no word is left.
 */
export function keptTimedWords(words: readonly TimedWord[] | undefined, clip: { fromS?: number | null; durationS: number }): TimedWord[] | null {
  if (!words || words.length === 0) return null;
  const from = clip.fromS ?? 0;
  const kept: TimedWord[] = [];
  for (const w of words) {
    if (typeof w.word !== 'string' || !w.word.trim() || !Number.isFinite(w.startS) || !Number.isFinite(w.endS) || w.endS < w.startS) continue;
    const startS = ms(w.startS - from);
    if (startS < 0 || startS >= clip.durationS) continue;
    kept.push({ word: w.word.trim(), startS, endS: ms(Math.min(w.endS - from, clip.durationS)) });
  }
  kept.sort((a, b) => a.startS - b.startS);
  return kept.length > 0 ? kept.slice(0, CLIP_TIMED_WORDS_MAX) : null;
}

/** The sung words of lyrics: section tags (`[Verse]`, `[Chorus 2]`) and lines of them left out, the rest split on white space. */
export function sungWords(lyrics: string): string[] {
  return lyrics
    .split('\n')
    .map((line) => line.replace(/\[[^\]]*\]/g, ' ').trim())
    .flatMap((line) => (line ? line.split(/\s+/) : []));
}

/**
 * Lyrics timed over a clip as a sandbox sings them: the sung words spread evenly from 5 % of the clip to 95 %,
 * each held for 80 % of its share (a short breath between words). Null when the lyrics have no word.
 */
export function spreadWords(lyrics: string, durationS: number): TimedWord[] | null {
  const words = sungWords(lyrics).slice(0, CLIP_TIMED_WORDS_MAX);
  if (words.length === 0 || !(durationS > 0)) return null;
  const start = durationS * 0.05;
  const share = (durationS * 0.9) / words.length;
  return words.map((word, i) => ({ word, startS: ms(start + i * share), endS: ms(start + i * share + share * 0.8) }));
}

/** Text a clip keeps: trimmed, cut at `max` characters (whole code points); null when empty. */
export function keptText(text: string | null | undefined, max: number): string | null {
  if (typeof text !== 'string') return null;
  const trimmed = text.trim();
  if (!trimmed) return null;
  return trimmed.length <= max ? trimmed : Array.from(trimmed).slice(0, max).join('').trim();
}
