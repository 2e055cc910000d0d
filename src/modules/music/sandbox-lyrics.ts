/**
 * The lyrics the sandbox "sings" when a song is asked by description (Suno's description mode: the vendor writes
 * them): a verse, a chorus and a second verse built from templates around the description's own words, the same
 * for the same description (the take varies the order of the verse lines), so a song made offline has lyrics to
 * show and time as a vendor's would.
 */
const VERSE = ['I walk the {a} at the break of day', 'the {b} is calling me away', 'every {c} a song I keep', 'and {a} carries me to sleep'];
const CHORUS = ['Oh {a}, oh {b}', 'sing it loud and sing it low', 'Oh {c}, stay with me', 'wherever the {a} may go'];
const VERSE2 = ['Down the road the {b} turns gold', 'a {c} story, new and old', 'hold the {a} and let it ring', 'this is the {b} I came to sing'];

/** Words too common to carry a song (a, the, of…), left out of the description's own. */
const COMMON = new Set('a an and are as at be but by for from in into is it its of on or so song that the this to with about music track'.split(' '));

/** The description's words the templates take: its longer words first (ties in its order), three of them, repeated when fewer. */
function themeWords(description: string): [string, string, string] {
  const words = description
    .toLowerCase()
    .split(/[^\p{L}\p{N}'-]+/u)
    .filter((w) => w.length > 1 && !COMMON.has(w));
  const unique = [...new Set(words)];
  const picked = unique
    .map((w, i) => ({ w, i }))
    .sort((x, y) => y.w.length - x.w.length || x.i - y.i)
    .slice(0, 3)
    .sort((x, y) => x.i - y.i)
    .map((x) => x.w);
  const fill = picked.length > 0 ? picked : ['light', 'sea', 'heart'];
  return [fill[0], fill[1 % fill.length], fill[2 % fill.length]];
}

/** Lyrics with section tags written from a description; `take` rotates the verses' lines so two takes differ. */
export function sandboxLyricsFrom(description: string, take = 0): string {
  const [a, b, c] = themeWords(description);
  const fill = (line: string) => line.replaceAll('{a}', a).replaceAll('{b}', b).replaceAll('{c}', c);
  const rotate = (lines: string[]) => lines.map((_, i) => lines[(i + take) % lines.length]);
  return ['[Verse]', ...rotate(VERSE).map(fill), '', '[Chorus]', ...CHORUS.map(fill), '', '[Verse 2]', ...rotate(VERSE2).map(fill)].join('\n');
}

/** A title made up from a description, as a vendor names a song it wrote: its theme words, capitalized ("Calm Sea"). */
export function sandboxTitleFrom(description: string): string {
  const [a, b] = themeWords(description);
  const cap = (w: string) => w.charAt(0).toUpperCase() + w.slice(1);
  return a === b ? cap(a) : `${cap(a)} ${cap(b)}`;
}
