import { fileStem } from '../../src/doors/suno/suno-clip-audio.service.js';

const id = '5b6c7d8e-9f0a-4b1c-8d2e-3f4a5b6c7d8e';

describe("a clip's WAV/FLAC file name (fileStem)", () => {
  it('is the title, its slashes, backslashes and control characters made spaces, at most 120 characters', () => {
    expect(fileStem({ id, params: { title: 'Morning tide' } })).toBe('Morning tide');
    expect(fileStem({ id, params: { title: ' AC/DC\\live\r\n\u0000  take ' } })).toBe('AC DC live take');
    expect(fileStem({ id, params: { title: 'Été à Noël 🙂' } })).toBe('Été à Noël 🙂');
    expect(fileStem({ id, params: { title: 'x'.repeat(120) } })).toBe('x'.repeat(120));
    expect(fileStem({ id, params: { title: 'x'.repeat(121) } })).toBe('x'.repeat(120));
    // counted in characters: a cut never leaves half of a surrogate pair
    expect(fileStem({ id, params: { title: '🙂'.repeat(121) } })).toBe('🙂'.repeat(120));
    expect(fileStem({ id, params: { title: `${'x'.repeat(119)}🙂🙂` } })).toBe(`${'x'.repeat(119)}🙂`);
    expect(fileStem({ id, params: { title: 'a\ud800b\udc00c' } })).toBe('a\ufffdb\ufffdc');
  });

  it('is the clip id when there is no title left (an upload, an empty or blank title, a title of separators)', () => {
    for (const params of [{}, { url: 'https://e.com/a.wav' }, { title: null }, { title: '' }, { title: ' \t ' }, { title: '///' }, { title: 42 }]) {
      expect(fileStem({ id, params })).toBe(id);
    }
  });
});
