/**
 * The sandbox's split: a clip's samples cut into `count` bands of its spectrum, lowest first, that sum back to
 * the clip exactly (each band is one low-pass minus the one below it: the sum telescopes to the clip). Pure and
 * deterministic: the same samples, the same stems. `pcm` is interleaved stereo at `sampleRate`.
 */
export function splitBands(pcm: Float32Array, count: number, sampleRate: number): Float32Array[] {
  if (count < 1) throw new RangeError('a split makes at least one stem');
  const cutoffs = bandCutoffs(count);
  const lows = cutoffs.map((hz) => lowPass(pcm, hz, sampleRate));
  const bands: Float32Array[] = [];
  let below: Float32Array = new Float32Array(pcm.length);
  for (let k = 0; k < count; k++) {
    const upTo = k < count - 1 ? lows[k] : pcm;
    const band = new Float32Array(pcm.length);
    for (let i = 0; i < pcm.length; i++) band[i] = upTo[i] - below[i];
    bands.push(band);
    below = upTo;
  }
  return bands;
}

/** The `count - 1` edges between bands: geometric from 200 Hz to 4 kHz (one edge, at 900 Hz, for two bands). */
export function bandCutoffs(count: number): number[] {
  if (count <= 1) return [];
  if (count === 2) return [900];
  const [lo, hi] = [200, 4000];
  return Array.from({ length: count - 1 }, (_, k) => lo * Math.pow(hi / lo, k / (count - 2)));
}

/** A second-order Butterworth low-pass (RBJ's biquad) over each channel of interleaved stereo. */
function lowPass(pcm: Float32Array, hz: number, sampleRate: number): Float32Array {
  const w = (2 * Math.PI * Math.min(hz, sampleRate * 0.45)) / sampleRate;
  const alpha = Math.sin(w) / (2 * Math.SQRT1_2);
  const cos = Math.cos(w);
  const a0 = 1 + alpha;
  const b0 = (1 - cos) / 2 / a0;
  const b1 = (1 - cos) / a0;
  const b2 = b0;
  const a1 = (-2 * cos) / a0;
  const a2 = (1 - alpha) / a0;
  const out = new Float32Array(pcm.length);
  for (let ch = 0; ch < 2; ch++) {
    let [x1, x2, y1, y2] = [0, 0, 0, 0];
    for (let i = ch; i < pcm.length; i += 2) {
      const x = pcm[i];
      const y = b0 * x + b1 * x1 + b2 * x2 - a1 * y1 - a2 * y2;
      out[i] = y;
      [x2, x1, y2, y1] = [x1, x, y1, y];
    }
  }
  return out;
}
