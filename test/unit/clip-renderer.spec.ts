import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { blend, renderClip, type ClipSpec, WaveFrames } from '../../src/modules/video/providers/clip-renderer.js';
import { probeAudio, probeVideo } from '../support/media.js';

/** The sandbox's clips honour every field of the normalized request it renders: here the seed and the sound. */
describe('the sandbox clip renderer', () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'mgw-clip-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  let n = 0;
  const render = async (spec: Partial<ClipSpec>) => {
    const file = path.join(dir, `c${n++}.mp4`);
    const clip = await renderClip({ aspectRatio: '16:9', loop: false, title: 'seeded', seconds: 1, height: 90, imageLimits: { maxSide: 8192, maxPixels: 8192 * 8192 }, ...spec }, file);
    return { clip, bytes: readFileSync(file) };
  };

  it('draws the same clip for the same seed, and another for another seed', async () => {
    const [a, b, c] = await Promise.all([render({ seed: 7 }), render({ seed: 7 }), render({ seed: 8 })]);
    expect(a.clip.thumbnail.equals(b.clip.thumbnail)).toBe(true);
    expect(a.clip.thumbnail.equals(c.clip.thumbnail)).toBe(false);
  });

  it('adds a sound track only when audio is asked, as long as the picture', async () => {
    const [silent, sound] = await Promise.all([render({}), render({ audio: true, seconds: 2 })]);
    await expect(probeAudio(silent.bytes)).rejects.toThrow(/no audio stream/);
    expect(await probeAudio(sound.bytes)).toEqual(expect.objectContaining({ sampleRate: 44100 }));
    const video = await probeVideo(sound.bytes);
    expect([video.width, video.height, Math.round(video.durationS)]).toEqual([160, 90, 2]);
  });
});

/** A text clip's frames are rows drawn once and copied: each frame is still the wave drawn pixel by pixel, with the title over it. */
describe("the text clip's wave", () => {
  const width = 37;
  const height = 23;
  // a title: opaque white over a block, half-transparent black over another, nothing elsewhere
  const title = Buffer.alloc(width * height * 4);
  const paint = (x0: number, x1: number, y0: number, y1: number, rgba: number[]) => {
    for (let y = y0; y < y1; y++) for (let x = x0; x < x1; x++) title.set(rgba, (y * width + x) * 4);
  };
  paint(5, 12, 8, 11, [255, 255, 255, 255]);
  paint(20, 30, 14, 16, [0, 0, 0, 128]);

  /** The wave drawn pixel by pixel, as the frame's doc says. */
  const drawn = (phase: number): Buffer => {
    const steps = 1024;
    const wave = [0, 0.33, 0.67].map((offset, c) => Uint8Array.from({ length: steps }, (_, i) => [128, 110, 150][c] + [90, 80, 90][c] * Math.cos(2 * Math.PI * (i / steps + offset))));
    const out = Buffer.alloc(width * height * 3);
    for (let y = 0; y < height; y++) {
      for (let x = 0; x < width; x++) {
        const step = (Math.floor((x / width) * 0.7 * steps) + Math.round((y / height) * 0.3 * steps) + Math.round(phase * steps)) & (steps - 1);
        const alpha = title[(y * width + x) * 4 + 3];
        for (let c = 0; c < 3; c++) out[(y * width + x) * 3 + c] = wave[c][step] + (((title[(y * width + x) * 4 + c] - wave[c][step]) * alpha) >> 8);
      }
    }
    return out;
  };

  it('draws every frame as the wave at its phase, with the title over it, whatever frames came before', () => {
    const wave = new WaveFrames(width, height, title);
    for (const phase of [0, 0.013, 0.5, 0.013, 0.77, 1]) expect(wave.frame(phase).equals(drawn(phase))).toBe(true);
  });

  it('moves with the phase, and comes back to the first frame after one period', () => {
    const wave = new WaveFrames(width, height, title);
    expect(wave.frame(0.25).equals(wave.frame(0))).toBe(false);
    expect(wave.frame(1).equals(wave.frame(0))).toBe(true);
  });
});

/** A two-keyframe clip's cross-fade: each byte mixed, whether the buffers can be read four bytes at a time or not. */
describe("the cross-fade's mix", () => {
  const bytes = (n: number, seed: number) => Buffer.from(Array.from({ length: n }, (_, i) => (i * seed + (i >> 3)) & 255));
  const mixed = (a: Buffer, b: Buffer, mix: number) => Buffer.from(Array.from(a, (v, i) => (v * (256 - Math.round(mix * 256)) + b[i] * Math.round(mix * 256)) >> 8));

  it('mixes each byte, ends included', () => {
    const [a, b] = [bytes(4 * 1000 + 3, 7), bytes(4 * 1000 + 3, 13)];
    for (const mix of [0, 0.2, 0.5, 0.999, 1]) expect(blend(a, b, mix).equals(mixed(a, b, mix))).toBe(true);
    expect(blend(a, b, 0).equals(a)).toBe(true);
    expect(blend(a, b, 1).equals(b)).toBe(true);
  });

  it('mixes buffers that do not start on a word', () => {
    const [a, b] = [bytes(4001, 7).subarray(1), bytes(4002, 13).subarray(2)];
    expect(blend(a, b, 0.3).equals(mixed(a, b, 0.3))).toBe(true);
  });
});
