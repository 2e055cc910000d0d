import { bandCutoffs, splitBands } from '../../src/modules/stems/stems-bands.js';
import { stemNames } from '../../src/modules/stems/providers/sandbox-stems.provider.js';

const RATE = 44_100;

/** Interleaved stereo of two tones, 100 Hz and 3 kHz, for `seconds`. */
function twoTones(seconds: number): Float32Array {
  const frames = Math.round(seconds * RATE);
  const pcm = new Float32Array(frames * 2);
  for (let i = 0; i < frames; i++) {
    const v = 0.4 * Math.sin((2 * Math.PI * 100 * i) / RATE) + 0.4 * Math.sin((2 * Math.PI * 3000 * i) / RATE);
    pcm[2 * i] = v;
    pcm[2 * i + 1] = -v;
  }
  return pcm;
}

function rms(pcm: Float32Array): number {
  return Math.sqrt(pcm.reduce((sum, v) => sum + v * v, 0) / pcm.length);
}

describe("the sandbox's split into bands", () => {
  it('the bands sum back to the clip, sample for sample (within float rounding), for two and for six', () => {
    const pcm = twoTones(0.5);
    for (const count of [2, 6]) {
      const bands = splitBands(pcm, count, RATE);
      expect(bands).toHaveLength(count);
      let worst = 0;
      for (let i = 0; i < pcm.length; i++) worst = Math.max(worst, Math.abs(bands.reduce((s, b) => s + b[i], 0) - pcm[i]));
      expect(worst).toBeLessThan(1e-5);
    }
  });

  it('two bands part the low tone from the high one at 900 Hz: each band holds mostly its own tone', () => {
    const [low, high] = splitBands(twoTones(0.5), 2, RATE);
    expect(splitBands(twoTones(0.5), 2, RATE)[0]).toEqual(low); // the same clip, the same stems
    // each tone alone has an RMS of 0.4/√2 ≈ 0.283; a band holds its own tone and little of the other
    expect(rms(low)).toBeGreaterThan(0.25);
    expect(rms(low)).toBeLessThan(0.32);
    expect(rms(high)).toBeGreaterThan(0.25);
    expect(rms(high)).toBeLessThan(0.32);
    expect(bandCutoffs(2)).toEqual([900]);
    const six = bandCutoffs(6);
    expect(six).toHaveLength(5);
    expect(six[0]).toBeCloseTo(200);
    expect(six[4]).toBeCloseTo(4000);
  });

  it('one band is the clip itself; none is refused', () => {
    const pcm = twoTones(0.1);
    expect(splitBands(pcm, 1, RATE)[0]).toEqual(pcm);
    expect(() => splitBands(pcm, 0, RATE)).toThrow(RangeError);
  });

  it("the sandbox names its stems as the model it mirrors: ElevenLabs' two and six", () => {
    expect(stemNames(null, 'two')).toEqual(['vocals', 'instrumental']);
    expect(stemNames(null, 'all')).toEqual(['vocals', 'drums', 'bass', 'guitar', 'piano', 'other']);
    expect(stemNames('no-such-model', 'all')).toEqual(['vocals', 'instrumental']);
  });
});
