import { themeWords, writeLyrics } from '../../../src/modules/lyrics/lyrics-templates.js';

/** The sandbox's lyrics: written offline from templates, the same for the same prompt, singing the prompt's words. */
describe('sandbox lyrics templates', () => {
  const prompt = 'A summer road trip along the coast with old friends';

  it("takes the prompt's own words, less the common ones, each once", () => {
    expect(themeWords(prompt)).toEqual(['summer', 'road', 'trip', 'along', 'coast', 'old', 'friends']);
    expect(themeWords('Rain, rain, RAIN!')).toEqual(['rain']);
    // a prompt of common words only keeps them; one without words falls back
    expect(themeWords('it is me')).toEqual(['it', 'is', 'me']);
    expect(themeWords('!!! 42 ???')).toEqual(['night', 'light', 'road']);
  });

  it('writes a title and six sections tagged [Verse], [Chorus] and [Bridge], with every word of the prompt in them', () => {
    const [song] = writeLyrics(prompt, 1);
    expect(song.title).toMatch(/Summer|Road/);
    const tags = song.text.match(/^\[[A-Za-z]+\]$/gm);
    expect(tags).toEqual(['[Verse]', '[Chorus]', '[Verse]', '[Chorus]', '[Bridge]', '[Chorus]']);
    for (const word of themeWords(prompt)) expect(song.text.toLowerCase()).toContain(word);
    // every section has lines
    for (const section of song.text.split('\n\n')) expect(section.split('\n').length).toBeGreaterThan(2);
  });

  it('is deterministic: the same prompt the same lyrics; another prompt, other lyrics', () => {
    expect(writeLyrics(prompt, 2)).toEqual(writeLyrics(prompt, 2));
    expect(writeLyrics('neon city lights at midnight', 1)[0].text).not.toEqual(writeLyrics(prompt, 1)[0].text);
  });

  it("writes as many versions as asked, each its own (at least one)", () => {
    const two = writeLyrics(prompt, 2);
    expect(two).toHaveLength(2);
    expect(two[0].text).not.toEqual(two[1].text);
    expect(writeLyrics(prompt, 0)).toHaveLength(1);
  });

  it('sings words of any script', () => {
    const [song] = writeLyrics('лето море друзья', 1);
    for (const word of ['лето', 'море', 'друзья']) expect(song.text).toContain(word);
  });
});
