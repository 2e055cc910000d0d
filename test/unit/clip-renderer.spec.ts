import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { renderClip, type ClipSpec } from '../../src/modules/video/providers/clip-renderer.js';
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
