import { keptAsMade } from '../../src/modules/speech/speech-audio.js';

describe('keptAsMade: when a vendor audio is answered as it came', () => {
  it('an encoded format made as asked is kept; another format, or WAV and PCM (written from the samples), are not', () => {
    for (const format of ['mp3', 'opus', 'aac', 'flac'] as const) expect([format, keptAsMade({ format }, format, 3)]).toEqual([format, true]);
    expect(keptAsMade({ format: 'mp3' }, 'opus', 3)).toBe(false);
    expect(keptAsMade({ format: 'pcm' }, 'mp3', 3)).toBe(false);
    expect(keptAsMade({ format: 'wav' }, 'wav', 3)).toBe(false);
    expect(keptAsMade({ format: 'pcm' }, 'pcm', 3)).toBe(false);
  });

  it('only while shorter than the longest kept (1,200 s: the decode stops there, the bytes would not)', () => {
    expect(keptAsMade({ format: 'mp3' }, 'mp3', 1199.999)).toBe(true);
    expect(keptAsMade({ format: 'mp3' }, 'mp3', 1200)).toBe(false);
  });
});
