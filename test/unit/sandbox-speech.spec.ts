import { createHash } from 'node:crypto';
import { standIn } from '../../src/modules/speech/providers/sandbox-speech.provider.js';
import { SPEECH_RATE } from '../../src/modules/speech/speech-audio.js';

/** The sandbox's speech where espeak-ng is missing: the stand-in its doc describes, computed by rotations rather than sines. */
describe("the sandbox speech's stand-in", () => {
  /** The stand-in as its doc describes it, each sample computed with sines. */
  const described = (input: string, voice: string, charsPerS: number): Int16Array => {
    const base = 100 + (createHash('sha256').update(voice).digest()[0] % 120);
    const perChar = SPEECH_RATE / charsPerS;
    const samples: number[] = [];
    for (const token of input.match(/[\p{L}\p{N}]{1,3}|[.,;:!?…]|\s+|./gu) ?? []) {
      const voiced = /^[\p{L}\p{N}]+$/u.test(token);
      const n = Math.round((/^[.,;:!?…]$/u.test(token) ? (token === ',' ? 1.5 : 3) : [...token].length) * perChar);
      const pitch = base * (1 + ((token.codePointAt(0)! % 7) - 3) * 0.03);
      const formant = 500 + (token.codePointAt(token.length - 1)! % 5) * 250;
      for (let i = 0; i < n; i++) {
        const t = i / SPEECH_RATE;
        const v = Math.sin(2 * Math.PI * pitch * t) * 0.6 + Math.sin(2 * Math.PI * pitch * 2 * t) * 0.25 + Math.sin(2 * Math.PI * formant * t) * 0.15 * Math.sin(2 * Math.PI * pitch * t);
        samples.push(voiced ? Math.round(v * Math.sin((Math.PI * i) / n) ** 0.5 * 9000) : 0);
      }
    }
    while (samples.length < SPEECH_RATE / 4) samples.push(0);
    return Int16Array.from(samples);
  };
  const pcm = (bytes: Buffer) => new Int16Array(bytes.buffer, bytes.byteOffset, bytes.length / 2);

  it('is the described sound within one step of 16 bits, sample for sample', () => {
    for (const [input, voice] of [
      ['Hello, world! Ça va? 123 résumé…', 'alloy'],
      ['a'.repeat(60), 'nova'],
    ]) {
      const made = pcm(standIn(input, voice, 15));
      const expected = described(input, voice, 15);
      expect(made.length).toBe(expected.length);
      let worst = 0;
      for (let i = 0; i < made.length; i++) worst = Math.max(worst, Math.abs(made[i] - expected[i]));
      expect(worst).toBeLessThanOrEqual(1);
      expect(made.some((v) => Math.abs(v) > 4000)).toBe(true);
    }
  });

  it('lasts about as long as the text takes, a quarter second at least, the same for the same request', () => {
    const text = 'The quick brown fox jumps over the lazy dog. '.repeat(2);
    const spoken = standIn(text, 'alloy', 15);
    const seconds = spoken.length / 2 / SPEECH_RATE;
    expect(seconds).toBeGreaterThan((text.length / 15) * 0.9);
    expect(seconds).toBeLessThan((text.length / 15) * 1.3);
    expect(standIn('', 'alloy', 15).length).toBe((SPEECH_RATE / 4) * 2);
    expect(spoken.equals(standIn(text, 'alloy', 15))).toBe(true);
    expect(spoken.equals(standIn(text, 'echo', 15))).toBe(false);
  });

  it('counts characters as the input limit does, by code point: an emoji lasts as long as a letter', () => {
    expect(standIn('🙂'.repeat(30), 'alloy', 15).length).toBe(standIn('x'.repeat(30), 'alloy', 15).length);
  });
});
