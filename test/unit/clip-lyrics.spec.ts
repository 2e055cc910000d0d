import { keptText, keptTimedWords, spreadWords, sungWords } from '../../src/modules/clips/clip-lyrics.js';
import { sandboxLyricsFrom, sandboxTitleFrom } from '../../src/modules/music/sandbox-lyrics.js';
import { linkedClipIds, taskClips } from '../../src/modules/task-list/task-clips.js';
import type { Clip } from '../../src/generated/prisma/client.js';

describe("a clip's timed lyrics as it keeps them (keptTimedWords)", () => {
  const w = (word: string, startS: number, endS: number) => ({ word, startS, endS });

  it('keeps words within the clip in order of their start, the last one held to its end', () => {
    expect(keptTimedWords([w('b', 2, 3), w('a', 0, 1), w('c', 9.5, 11)], { durationS: 10 })).toEqual([w('a', 0, 1), w('b', 2, 3), w('c', 9.5, 10)]);
  });

  it('drops a word starting at the end of the clip or after, keeps one just before', () => {
    expect(keptTimedWords([w('in', 9.999, 10.2), w('at', 10, 10.5)], { durationS: 10 })).toEqual([w('in', 9.999, 10)]);
  });

  it("counts from the cut of a take that holds the continued clip too: words before it dropped, the others shifted", () => {
    expect(keptTimedWords([w('old', 11.5, 11.9), w('cut', 12, 12.4), w('new', 13.25, 14)], { fromS: 12, durationS: 5 })).toEqual([w('cut', 0, 0.4), w('new', 1.25, 2)]);
  });

  it('drops words without text or with broken times; null when none is left, or none given', () => {
    expect(keptTimedWords([w(' ', 0, 1), w('x', Number.NaN, 1), w('y', 2, 1), w('z', -1, 0.5)], { durationS: 10 })).toBeNull();
    expect(keptTimedWords(undefined, { durationS: 10 })).toBeNull();
    expect(keptTimedWords([], { durationS: 10 })).toBeNull();
  });
});

describe('the sandbox times its lyrics over the take (spreadWords)', () => {
  it('leaves section tags out and spreads the sung words in order within the take', () => {
    const words = spreadWords('[Verse]\nMorning tide\n\n[Chorus 2]\nupon the sand', 20)!;
    expect(words.map((x) => x.word)).toEqual(['Morning', 'tide', 'upon', 'the', 'sand']);
    for (const [i, x] of words.entries()) {
      expect(x.startS).toBeGreaterThanOrEqual(0);
      expect(x.endS).toBeGreaterThan(x.startS);
      expect(x.endS).toBeLessThanOrEqual(20);
      if (i > 0) expect(x.startS).toBeGreaterThanOrEqual(words[i - 1].endS);
    }
  });

  it('has nothing to time in lyrics of tags only, or a take without duration', () => {
    expect(spreadWords('[Intro]\n[Outro]', 10)).toBeNull();
    expect(spreadWords('la la', 0)).toBeNull();
    expect(sungWords('[Verse] one two\n[Bridge]')).toEqual(['one', 'two']);
  });
});

describe('the sandbox writes lyrics from a description (sandboxLyricsFrom)', () => {
  it("sings the description's own words in a verse, a chorus and a second verse; the same for the same description", () => {
    const lyrics = sandboxLyricsFrom('A lighthouse keeper waiting for the storm');
    expect(lyrics).toMatch(/^\[Verse\]\n/);
    expect(lyrics).toContain('[Chorus]');
    expect(lyrics).toContain('[Verse 2]');
    expect(lyrics).toMatch(/lighthouse/);
    expect(lyrics).toMatch(/keeper/);
    expect(sandboxLyricsFrom('A lighthouse keeper waiting for the storm')).toBe(lyrics);
  });

  it('gives the second take other verses, and a description of common words only still lyrics', () => {
    expect(sandboxLyricsFrom('rain on the city', 1)).not.toBe(sandboxLyricsFrom('rain on the city', 0));
    expect(sungWords(sandboxLyricsFrom('a the of')).length).toBeGreaterThan(10);
  });
});

describe('the sandbox names a song asked by description (sandboxTitleFrom)', () => {
  it("names it by the description's theme words, capitalized; one word once; common words alone still a title", () => {
    expect(sandboxTitleFrom('a calm song about the sea')).toBe('Calm Sea');
    expect(sandboxTitleFrom('A lighthouse keeper waiting for the storm')).toBe('Lighthouse Keeper');
    expect(sandboxTitleFrom('rain')).toBe('Rain');
    expect(sandboxTitleFrom('a the of')).toBe('Light Sea');
  });
});

describe('keptText', () => {
  it('trims, cuts at the limit in whole code points, and is null when empty', () => {
    expect(keptText('  Tide  ', 10)).toBe('Tide');
    expect(keptText('😀😀😀', 2)).toBe('😀😀');
    expect(keptText('   ', 10)).toBeNull();
    expect(keptText(undefined, 10)).toBeNull();
  });
});

describe("a task's clips as its detail shows them (taskClips)", () => {
  const clip = (over: Partial<Clip>): Clip =>
    ({ id: 'c0', taskId: 't', owner: 'o', idx: 0, type: 'gen', parentId: null, continueAt: null, duration: 10, upstreamId: null, title: null, lyrics: null, timedLyrics: null, createdAt: new Date(0), ...over }) as Clip;

  it("takes its maker's title and lyrics over those asked, and those asked otherwise; times its words", () => {
    const task = { state: 'succeeded' as const, params: { title: 'Asked', lyrics: 'asked words' } };
    const [own, asked] = taskClips(task, [clip({ title: 'Vendor', lyrics: 'sung words', timedLyrics: [{ word: 'sung', startS: 1, endS: 2 }] }), clip({ id: 'c1', idx: 1 })], new Map());
    expect(own).toEqual(expect.objectContaining({ title: 'Vendor', lyrics: 'sung words', timed_lyrics: [{ word: 'sung', start_s: 1, end_s: 2 }], continues: null, parts: [] }));
    expect(asked).toEqual(expect.objectContaining({ title: 'Asked', lyrics: 'asked words', timed_lyrics: null }));
  });

  it('an instrumental or an upload sings no lyrics asked; a take a one-take model left unmade is left out', () => {
    expect(taskClips({ state: 'succeeded', params: { lyrics: 'x', instrumental: true } }, [clip({})], new Map())[0].lyrics).toBeNull();
    expect(taskClips({ state: 'succeeded', params: { lyrics: 'x' } }, [clip({ type: 'upload' })], new Map())[0].lyrics).toBeNull();
    expect(taskClips({ state: 'succeeded', params: {} }, [clip({}), clip({ id: 'c1', idx: 1, duration: null })], new Map()).map((c) => c.id)).toEqual(['c0']);
    expect(taskClips({ state: 'running', params: {} }, [clip({ duration: null })], new Map())).toHaveLength(1);
  });

  it("names what a continuation continues and a joined song's parts, with the tasks that made them", () => {
    const params = { parts: [{ clip_id: 'p0', type: 'upload', cut_at: 12 }, { clip_id: 'p1', type: 'gen', cut_at: null }] };
    const clips = [clip({ type: 'concat' })];
    expect(linkedClipIds({ params }, clips)).toEqual(['p0', 'p1']);
    const [joined] = taskClips({ state: 'succeeded', params }, clips, new Map([['p0', 'tp0']]));
    expect(joined.parts).toEqual([
      { clip_id: 'p0', task_id: 'tp0', at_s: 12 },
      { clip_id: 'p1', task_id: null, at_s: null },
    ]);
    const cont = [clip({ parentId: 'up', continueAt: 12 })];
    expect(linkedClipIds({ params: {} }, cont)).toEqual(['up']);
    expect(taskClips({ state: 'succeeded', params: {} }, cont, new Map([['up', 'tu']]))[0].continues).toEqual({ clip_id: 'up', task_id: 'tu', at_s: 12 });
  });
});
