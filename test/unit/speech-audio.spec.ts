import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { finishSpeech, keptAsMade, SpeechUnusable } from '../../src/modules/speech/speech-audio.js';
import { streamedWav } from '../support/vendors/openai/openai-speech.fake.js';
import { speechLike } from '../support/vendors/speech-audio.js';

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

describe('finishSpeech: audio a vendor made that does not decode', () => {
  it('fails saying what is wrong with the audio made, in words a caller reads', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'speech-audio-'));
    try {
      const flac = await speechLike('flac', 1);
      // its STREAMINFO whole, its frames cut off and garbled: the sniff takes it, the decode does not
      const damaged = Buffer.concat([flac.subarray(0, 200), Buffer.alloc(4000, 0x5a)]);
      const refusal = await finishSpeech({ bytes: damaged, format: 'flac' }, 'flac', (prefix, ext) => path.join(dir, `${prefix}.${ext}`)).then(
        () => '',
        (err: Error) => (err instanceof SpeechUnusable ? err.message : String(err)),
      );
      expect(refusal).toMatch(/^the audio made is damaged: /);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('an MP3 with garbage between good frames is damaged (the decoder would skip it), one cut at its end is whole enough to keep', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'speech-audio-'));
    const finish = (bytes: Buffer) =>
      finishSpeech({ bytes, format: 'mp3' }, 'mp3', (prefix, ext) => path.join(dir, `${prefix}-${Math.random()}.${ext}`)).then(
        (done) => `kept ${done.bytes.length} bytes`,
        (err: Error) => (err instanceof SpeechUnusable ? err.message : String(err)),
      );
    try {
      const mp3 = await speechLike('mp3', 2);
      const garbled = Buffer.concat([mp3.subarray(0, 2000), Buffer.alloc(4000, 0x5a), mp3.subarray(2000)]);
      expect(await finish(garbled)).toMatch(/^the audio made is damaged: /);
      const cut = mp3.subarray(0, mp3.length - 300);
      expect(await finish(cut)).toBe(`kept ${cut.length} bytes`);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('finishSpeech: a WAV as OpenAI streams it', () => {
  it('takes its sizes of 0xFFFFFFFF ("unknown") and its samples to the end, written again with exact sizes', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'speech-audio-'));
    try {
      const pcm = await speechLike('pcm', 1.5);
      const done = await finishSpeech({ bytes: streamedWav(pcm), format: 'wav' }, 'wav', (prefix, ext) => path.join(dir, `${prefix}.${ext}`));
      expect([done.durationS, done.bytes.length, done.bytes.readUInt32LE(4), done.bytes.readUInt32LE(40)]).toEqual([1.5, 44 + pcm.length, 36 + pcm.length, pcm.length]);
      expect(done.bytes.subarray(44).equals(pcm)).toBe(true);
      // and asked as MP3, decoded whole
      expect((await finishSpeech({ bytes: streamedWav(pcm), format: 'wav' }, 'mp3', (prefix, ext) => path.join(dir, `${prefix}-mp3.${ext}`))).durationS).toBe(1.5);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
