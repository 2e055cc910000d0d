import { createHash } from 'node:crypto';
import type { LyricsText } from '../../vendors/contracts/lyrics-vendor.js';

/** Words too common to carry a song's theme: left out of what the templates sing about. */
const COMMON = new Set(
  'a an and are as at be but by for from has have her his how i in into is it its me my of on or our she so that the their them then there they this to up us was we what when where which who why will with you your about write song lyrics make some like over under just very'.split(' '),
);

/** Words the templates fall back on for a prompt with none of its own (punctuation, digits). */
const FALLBACK = ['night', 'light', 'road'];

/** Lines of a verse: `{a}` and `{b}` are two of the prompt's words. */
const VERSE_LINES = [
  'I walked along the {a} till the morning came',
  'Every {a} I know still whispers your name',
  'We were chasing {a} through the {b} and rain',
  'Underneath the {a}, nothing stays the same',
  'Carry me the {a}, carry me the {b}',
  'Pockets full of {a} and a heart of {b}',
  'Counting every {a} on the way back home',
  'There is {a} in the window, {b} on the phone',
];

/** Lines of a chorus: `{a}` and `{b}` are the prompt's first two words. */
const CHORUS_LINES = [
  'Oh, {a}, {a}, stay with me tonight',
  'Sing it for the {a}, sing it for the {b}',
  'Hold on to the {a}, never let it go',
  'All we ever wanted was {a} and {b}',
  'Turn it up for {a}, let the {b} shine',
  '{A}, {b}, and the two of us',
];

/** Lines of a bridge: `{a}` and `{b}` are the prompt's last words. */
const BRIDGE_LINES = [
  'And if the {a} should fade away',
  'I will find the {b} another day',
  'Slow it down, let the {a} breathe',
  'Nothing but {a} and the {b} beneath',
];

/** Titles: `{A}` and `{B}` are the prompt's first words, capitalized. */
const TITLES = ['{A}', 'The {A} Song', '{A} and {B}', 'Ballad of {A}', '{A} Tonight', 'Songs of {B}'];

/** The song's structure, in its section tags. */
const SECTIONS = ['Verse', 'Chorus', 'Verse', 'Chorus', 'Bridge', 'Chorus'] as const;

/** The words of a prompt the templates sing about: its own words of three letters or more, less the common ones, each once, in its order. */
export function themeWords(prompt: string): string[] {
  const all = (prompt.normalize('NFC').match(/\p{L}[\p{L}\p{M}\p{N}'’-]*/gu) ?? []).map((w) => w.toLocaleLowerCase());
  const keep = all.filter((w) => [...w].length >= 3 && !COMMON.has(w));
  const words = [...new Set(keep.length > 0 ? keep : all)];
  return words.length > 0 ? words : FALLBACK;
}

/**
 * Lyrics written offline from templates, the same for the same prompt: `versions` versions, each a title and six
 * sections tagged [Verse], [Chorus] and [Bridge] whose lines sing the prompt's words (its first words in the title
 * and chorus, the others through the verses, its last in the bridge). Versions differ by the lines they pick.
 */
export function writeLyrics(prompt: string, versions: number): LyricsText[] {
  const words = themeWords(prompt);
  return Array.from({ length: Math.max(1, versions) }, (_, v) => version(prompt, words, v));
}

function version(prompt: string, words: string[], index: number): LyricsText {
  const seed = createHash('sha256').update(`${index}\u0000${prompt}`).digest();
  let cursor = 0;
  const pick = <T>(list: readonly T[]): T => list[seed[cursor++ % seed.length] % list.length];
  const at = (i: number) => words[i % words.length];
  const first = at(0);
  const second = at(1);
  const last = words[words.length - 1];
  const beforeLast = words.length > 1 ? words[words.length - 2] : second;
  const fill = (line: string, a: string, b: string) => line.replace(/\{A\}/g, capitalize(a)).replace(/\{B\}/g, capitalize(b)).replace(/\{a\}/g, a).replace(/\{b\}/g, b);
  // the chorus is the same each time it comes back; each verse goes on through the prompt's words
  const chorus = [pick(CHORUS_LINES), pick(CHORUS_LINES), pick(CHORUS_LINES), pick(CHORUS_LINES)].map((l) => fill(l, first, second));
  const bridge = [pick(BRIDGE_LINES), pick(BRIDGE_LINES)].map((l) => fill(l, beforeLast, last));
  let next = 0;
  const verse = () =>
    Array.from({ length: 4 }, () => {
      const line = fill(pick(VERSE_LINES), at(next), at(next + 1));
      next += 2;
      return line;
    });
  const sections = SECTIONS.map((tag) => `[${tag}]\n${(tag === 'Verse' ? verse() : tag === 'Chorus' ? chorus : bridge).join('\n')}`);
  return { title: fill(pick(TITLES), first, second), text: sections.join('\n\n') };
}

function capitalize(word: string): string {
  return word.charAt(0).toLocaleUpperCase() + word.slice(1);
}
