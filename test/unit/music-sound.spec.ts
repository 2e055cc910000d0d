import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import sharp from 'sharp';
import { measureAudio, NoAudio, pinAudio } from '../../src/infra/ffmpeg/audio-decode.js';
import { CHANNELS, SAMPLE_RATE, decodeAudio, durationOf, encodeMp3, encodeMp3Stream, joinParts, PcmJoiner, type PcmPart, renderCover, streamPcm, synthesizeSong } from '../../src/modules/music/sound/music-sound.js';

// Per-sample loops use these bindings: a lookup of the global `Math` is slow in Jest's vm context.
const { sin, round, imul, PI } = Math;

/** Normalized correlation of channel 0 of `a` (from frame 0) with channel 0 of `b` shifted by `lag` frames, over `frames`. */
function correlation(a: Float32Array, b: Float32Array, frames: number, lag = 0): number {
  let ab = 0;
  let aa = 0;
  let bb = 0;
  for (let i = 0; i < frames; i++) {
    const j = i + lag;
    const x = a[2 * i];
    const y = j >= 0 && 2 * j < b.length ? b[2 * j] : 0;
    ab += x * y;
    aa += x * x;
    bb += y * y;
  }
  return ab / Math.sqrt(aa * bb || 1);
}

/** Whether two PCM arrays hold the very same samples (bit for bit; much faster than toEqual on millions). */
function sameSamples(a: Float32Array, b: Float32Array): boolean {
  return Buffer.from(a.buffer, a.byteOffset, a.byteLength).equals(Buffer.from(b.buffer, b.byteOffset, b.byteLength));
}

/** The largest absolute sample. */
function peakOf(pcm: Float32Array): number {
  let peak = 0;
  for (let i = 0; i < pcm.length; i++) peak = pcm[i] > peak ? pcm[i] : -pcm[i] > peak ? -pcm[i] : peak;
  return peak;
}

/** The lag (frames, within ±maxLag) at which `b` best matches `a` over the first second. */
function bestLag(a: Float32Array, b: Float32Array, maxLag = 1200): number {
  let best = -Infinity;
  let at = 0;
  for (let lag = -maxLag; lag <= maxLag; lag++) {
    let sum = 0;
    for (let i = 0; i < SAMPLE_RATE; i++) {
      const j = i + lag;
      if (j >= 0 && 2 * j < b.length) sum += a[2 * i] * b[2 * j];
    }
    if (sum > best) [best, at] = [sum, lag];
  }
  return at;
}

/** A 16-bit PCM WAV file of interleaved samples. */
function wav(samples: Int16Array, channels: number, rate: number, bits: 8 | 16 = 16): Buffer {
  const width = bits / 8;
  const data = samples.length * width;
  const out = Buffer.alloc(44 + data);
  out.write('RIFF', 0, 'latin1');
  out.writeUInt32LE(36 + data, 4);
  out.write('WAVEfmt ', 8, 'latin1');
  out.writeUInt32LE(16, 16);
  out.writeUInt16LE(1, 20);
  out.writeUInt16LE(channels, 22);
  out.writeUInt32LE(rate, 24);
  out.writeUInt32LE(rate * channels * width, 28);
  out.writeUInt16LE(channels * width, 32);
  out.writeUInt16LE(bits, 34);
  out.write('data', 36, 'latin1');
  out.writeUInt32LE(data, 40);
  samples.forEach((v, i) => (bits === 16 ? out.writeInt16LE(v, 44 + 2 * i) : out.writeUInt8((v >> 8) + 128, 44 + i)));
  return out;
}

/** A deterministic, aperiodic test signal (tones under noise bursts) as 16-bit samples. */
function testSignal(frames: number, channels: number): Int16Array {
  const out = new Int16Array(frames * channels);
  let s = 12345;
  const noise = () => ((s = (imul(s, 1103515245) + 12345) >>> 0) / 2 ** 31 - 1);
  for (let i = 0; i < frames; i++) {
    const t = i / SAMPLE_RATE;
    const tone = 0.3 * sin(2 * PI * 330 * t) * sin(2 * PI * 0.7 * t) + 0.2 * sin(2 * PI * (200 + 50 * t) * t);
    for (let c = 0; c < channels; c++) out[i * channels + c] = round(32767 * (tone + (i % 9000 < 2000 ? 0.15 * noise() : 0)) * (c ? 0.8 : 1));
  }
  return out;
}

describe('music sound', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(path.join(tmpdir(), 'music-sound-'));
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('exports the PCM format', () => {
    expect([SAMPLE_RATE, CHANNELS]).toEqual([44100, 2]);
  });

  describe('synthesizeSong', () => {
    it('is deterministic, exactly as long as asked, under 0.8, fades in and out', () => {
      const song = synthesizeSong({ seed: 'lofi beat|chill|0|chirp-v4', durationS: 30 });
      expect(song.length).toBe(Math.round(30 * SAMPLE_RATE) * 2);
      expect(sameSamples(synthesizeSong({ seed: 'lofi beat|chill|0|chirp-v4', durationS: 30 }), song)).toBe(true);
      const peak = peakOf(song);
      expect(peak).toBeGreaterThan(0.5);
      expect(peak).toBeLessThan(0.8);
      expect([song[0], song[1], song.at(-2), song.at(-1)]).toEqual([0, 0, 0, 0]);
      // the fade-in takes ~10 ms: small at its start, music soon after
      expect(peakOf(song.subarray(0, 20))).toBeLessThan(0.05);
      expect(peakOf(song.subarray(2 * 441, 2 * 44100))).toBeGreaterThan(0.3);
      expect(synthesizeSong({ seed: 'x', durationS: 1.23456 }).length).toBe(Math.round(1.23456 * SAMPLE_RATE) * 2);
      expect(synthesizeSong({ seed: 'x', durationS: 0 }).length).toBe(0);
    });

    it('differs clearly from one seed to another', () => {
      const seeds = ['lofi beat|chill|0|chirp-v4', 'lofi beat|chill|1|chirp-v4', 'lofi beat|chill|0|chirp-v3.5', 'epic orchestral|cinematic|0|chirp-v4', 'a|b|2|c'];
      const songs = seeds.map((seed) => synthesizeSong({ seed, durationS: 8 }));
      for (let i = 0; i < songs.length; i++) {
        for (let j = i + 1; j < songs.length; j++) expect(Math.abs(correlation(songs[i], songs[j], 8 * SAMPLE_RATE))).toBeLessThan(0.5);
      }
    });
  });

  describe('encodeMp3 and decodeAudio', () => {
    it('round-trips through MP3 sample-aligned and as long as the input to the millisecond (the LAME header trims the encoder delay and padding)', async () => {
      const song = synthesizeSong({ seed: 'align', durationS: 3.3 });
      const file = path.join(dir, 'align.mp3');
      await encodeMp3(song, file);
      const decoded = await decodeAudio(file);
      expect(Math.abs(decoded.length / 2 - song.length / 2)).toBeLessThanOrEqual(1152);
      expect(Math.abs(bestLag(song, decoded))).toBeLessThanOrEqual(1);
      expect(correlation(song, decoded, song.length / 2)).toBeGreaterThan(0.99);
      // what the sandbox says a take lasts without decoding it again: the decoded length, to the millisecond, stereo or mono
      expect((await measureAudio(file, { format: 'mp3', demuxer: 'mp3' }, { maxS: 10 })).durationS).toBe(durationOf(song));
      const mono = synthesizeSong({ seed: 'align mono', durationS: 7.321 });
      await encodeMp3(mono, path.join(dir, 'align-mono.mp3'), 1);
      expect((await measureAudio(path.join(dir, 'align-mono.mp3'), { format: 'mp3', demuxer: 'mp3' }, { maxS: 10 })).durationS).toBe(durationOf(mono));
    });

    it('decodes a 44100 Hz 16-bit WAV exactly, mono onto both channels at full level', async () => {
      const stereo = testSignal(5000, 2);
      stereo.set([-32768, 32767, 0, 1, -1], 10);
      await writeFile(path.join(dir, 'stereo.wav'), wav(stereo, 2, 44100));
      expect(sameSamples(await decodeAudio(path.join(dir, 'stereo.wav')), Float32Array.from(stereo, (v) => v / 32768))).toBe(true);

      const mono = testSignal(5000, 1);
      await writeFile(path.join(dir, 'mono.wav'), wav(mono, 1, 44100));
      const decoded = await decodeAudio(path.join(dir, 'mono.wav'));
      expect(sameSamples(decoded, Float32Array.from({ length: 10000 }, (_, i) => mono[i >> 1] / 32768))).toBe(true);
    });

    it('resamples other rates and depths to 44100 Hz stereo', async () => {
      await writeFile(path.join(dir, 'low.wav'), wav(testSignal(22050, 1), 1, 22050, 8));
      const decoded = await decodeAudio(path.join(dir, 'low.wav'));
      expect(Math.abs(decoded.length / 2 - 44100)).toBeLessThanOrEqual(64);
      expect(durationOf(decoded)).toBeCloseTo(1, 2);
    });

    it('refuses a file in no accepted format before decoding it, and one whose audio does not decode', async () => {
      await writeFile(path.join(dir, 'text.wav'), 'not audio at all');
      await expect(decodeAudio(path.join(dir, 'text.wav'))).rejects.toThrow(/^is not audio in an accepted format/);
      // a WAV header (consistent) over no samples
      await writeFile(path.join(dir, 'hollow.wav'), wav(new Int16Array(0), 2, 44100));
      await expect(decodeAudio(path.join(dir, 'hollow.wav'))).rejects.toBeInstanceOf(NoAudio);
    });
  });

  describe('joinParts and durationOf', () => {
    const ramp = (frames: number, offset: number) => Float32Array.from({ length: frames * 2 }, (_, i) => offset + (i >> 1) / frames / 10 + (i % 2) / 1000);

    it('cuts and joins sample-exactly, fading only the few frames at each junction', () => {
      const a = ramp(44100, 0.1);
      const b = ramp(30000, -0.3);
      const c = ramp(1000, 0.5);
      const joined = joinParts([
        { pcm: a, cutAtS: 0.5 },
        { pcm: b, cutAtS: null },
        { pcm: c, cutAtS: 0.01 },
      ]);
      const kept = [22050, 30000, 441];
      expect(joined.length).toBe((kept[0] + kept[1] + kept[2]) * 2);
      const edge = 221; // 5 ms
      expect(sameSamples(joined.subarray(0, 2 * (kept[0] - edge)), a.subarray(0, 2 * (kept[0] - edge)))).toBe(true);
      expect(sameSamples(joined.subarray(2 * (kept[0] + edge), 2 * (kept[0] + kept[1] - edge)), b.subarray(2 * edge, 2 * (kept[1] - edge)))).toBe(true);
      expect(sameSamples(joined.subarray(2 * (kept[0] + kept[1] + edge)), c.subarray(2 * edge, 2 * kept[2]))).toBe(true);
      // at the junction both sides are faded towards silence, and nothing louder than the parts appears
      expect(Math.abs(joined[2 * kept[0] - 2])).toBeLessThan(0.01);
      expect(Math.abs(joined[2 * kept[0]])).toBeLessThan(0.01);
      expect(peakOf(joined)).toBeLessThanOrEqual(0.65);
      expect(durationOf(joined)).toBe(1.19);
      expect(durationOf(new Float32Array(2 * 12345))).toBe(0.28);
    });

    it('keeps whole parts whole, drops parts cut at 0, and refuses cuts past the end', () => {
      const a = ramp(100, 0.1);
      expect(joinParts([{ pcm: a, cutAtS: null }])).toEqual(a);
      expect(joinParts([{ pcm: a, cutAtS: 100 / 44100 }])).toEqual(a);
      expect(joinParts([{ pcm: a, cutAtS: 0 }, { pcm: a, cutAtS: null }])).toEqual(a);
      expect(joinParts([])).toEqual(new Float32Array(0));
      expect(() => joinParts([{ pcm: a, cutAtS: null }, { pcm: a, cutAtS: 101 / 44100 }])).toThrow(/part 1: cut at .* past its end \(100 frames/);
      expect(() => joinParts([{ pcm: a, cutAtS: -1 }])).toThrow(/part 0/);
      expect(() => joinParts([{ pcm: a, cutAtS: Number.NaN }])).toThrow(/part 0/);
    });
  });

  describe('PcmJoiner (the streaming join concat uses)', () => {
    /** The joiner's output for these parts, each pushed in pieces of the given sizes (frames), in one array. */
    function streamed(parts: PcmPart[], pieceFrames: (part: number) => number): Float32Array {
      const joiner = new PcmJoiner();
      const out: Float32Array[] = [];
      parts.forEach(({ pcm, cutAtS }, p) => {
        joiner.startPart(cutAtS === null ? null : Math.round(cutAtS * SAMPLE_RATE));
        for (let at = 0; at < pcm.length; ) {
          const frames = Math.max(1, pieceFrames(p));
          out.push(...joiner.push(pcm.subarray(at, at + frames * 2)));
          at += frames * 2;
        }
        joiner.endPart();
      });
      out.push(...joiner.finish());
      const all = new Float32Array(out.reduce((n, piece) => n + piece.length, 0));
      out.reduce((at, piece) => (all.set(piece, at), at + piece.length), 0);
      return all;
    }
    let seed = 7;
    const random = () => ((seed = (imul(seed, 1103515245) + 12345) >>> 0) / 2 ** 32);
    const noise = (frames: number) => Float32Array.from({ length: frames * 2 }, () => random() * 2 - 1);

    it('gives joinParts’ samples bit for bit, whatever the pieces, the part lengths (shorter than a fade, empty, cut at 0) and the cuts', () => {
      const lengths = [0, 1, 2, 131, 132, 133, 263, 264, 265, 1000, 5000];
      for (let round = 0; round < 300; round++) {
        const count = 1 + Math.floor(random() * 5);
        const parts: PcmPart[] = Array.from({ length: count }, () => {
          const frames = lengths[Math.floor(random() * lengths.length)];
          const cut = random() < 0.4 ? Math.floor(random() * (frames + 1)) : null;
          return { pcm: noise(frames), cutAtS: cut === null ? null : cut / SAMPLE_RATE };
        });
        const sizes = [1, 7, 132, 133, 4096][round % 5];
        const expected = joinParts(parts);
        const actual = streamed(parts, () => (round % 2 ? sizes : 1 + Math.floor(random() * 300)));
        expect([round, actual.length]).toEqual([round, expected.length]);
        expect([round, sameSamples(actual, expected)]).toEqual([round, true]);
      }
    });

    it('says how long each part was and what it kept; holds back no more than a fade while a part goes on', () => {
      const joiner = new PcmJoiner();
      joiner.startPart(null);
      expect(joiner.push(noise(1000)).reduce((n, p) => n + p.length / 2, 0)).toBe(1000 - 132);
      expect(joiner.endPart()).toEqual({ frames: 1000, kept: 1000 });
      joiner.startPart(500);
      const frames = (pieces: Float32Array[]) => pieces.reduce((n, p) => n + p.length / 2, 0);
      // the previous part's end, now known not to end the song, goes out faded; none of this one yet (under 3 ms of it)
      expect(frames(joiner.push(noise(100)))).toBe(132);
      expect(frames(joiner.push(noise(900)))).toBe(500 - 132);
      expect(joiner.endPart()).toEqual({ frames: 1000, kept: 500 });
      expect(joiner.finish().reduce((n, p) => n + p.length / 2, 0)).toBe(132);
      expect(() => joiner.startPart(-1)).toThrow(/cut/);
    });

    it('streams a decode through the joiner into the encoder: the same song as decoding whole, joining and encoding', async () => {
      const upload = testSignal(3 * SAMPLE_RATE, 2);
      await writeFile(path.join(dir, 'stream-a.wav'), wav(upload, 2, 44100));
      const song = synthesizeSong({ seed: 'stream', durationS: 2 });
      await encodeMp3(song, path.join(dir, 'stream-b.mp3'));
      const files = [path.join(dir, 'stream-a.wav'), path.join(dir, 'stream-b.mp3')];
      const cuts = [1.5, null];
      const whole = joinParts(await Promise.all(files.map(async (f, i) => ({ pcm: await decodeAudio(f), cutAtS: cuts[i] }))));
      const joiner = new PcmJoiner();
      const pieces: Float32Array[] = [];
      for (const [i, f] of files.entries()) {
        joiner.startPart(cuts[i] === null ? null : Math.round(cuts[i]! * SAMPLE_RATE));
        await streamPcm(f, await pinAudio(f), { untilS: cuts[i] === null ? undefined : cuts[i]! + 0.05 }, (pcm) => void pieces.push(...joiner.push(pcm)));
        joiner.endPart();
      }
      pieces.push(...joiner.finish());
      const joined = new Float32Array(pieces.reduce((n, p) => n + p.length, 0));
      pieces.reduce((at, p) => (joined.set(p, at), at + p.length), 0);
      expect(sameSamples(joined, whole)).toBe(true);
      await encodeMp3Stream(path.join(dir, 'streamed.mp3'), 2, 10, async (write) => {
        for (let at = 0; at < joined.length; at += 10_000) await write(joined.subarray(at, at + 10_000));
      });
      await encodeMp3(whole, path.join(dir, 'whole.mp3'));
      const [a, b] = await Promise.all([decodeAudio(path.join(dir, 'streamed.mp3')), decodeAudio(path.join(dir, 'whole.mp3'))]);
      expect(sameSamples(a, b)).toBe(true);
    });
  });

  it('end to end: an uploaded WAV cut at 5 s, a continuation cut at 4 s, another whole, to MP3 and back', async () => {
    const upload = testSignal(12 * SAMPLE_RATE, 2);
    await writeFile(path.join(dir, 'upload.wav'), wav(upload, 2, 44100));
    const uploaded = await decodeAudio(path.join(dir, 'upload.wav'));
    expect(durationOf(uploaded)).toBe(12);
    const song = synthesizeSong({ seed: 'continue|rock|0|chirp-v4', durationS: 8 });
    const song2 = synthesizeSong({ seed: 'continue|rock|1|chirp-v4', durationS: 6.5 });
    const joined = joinParts([
      { pcm: uploaded, cutAtS: 5 },
      { pcm: song, cutAtS: 4 },
      { pcm: song2, cutAtS: null },
    ]);
    expect(joined.length / 2).toBe(9 * SAMPLE_RATE + song2.length / 2);
    const file = path.join(dir, 'joined.mp3');
    await encodeMp3(joined, file);
    const decoded = await decodeAudio(file);
    expect(Math.abs(durationOf(decoded) - (5 + 4 + durationOf(song2)))).toBeLessThanOrEqual(0.03);
    expect(bestLag(uploaded, decoded)).toBe(0);
    expect(correlation(uploaded, decoded, 5 * SAMPLE_RATE - 200)).toBeGreaterThan(0.99);
  });

  it('renderCover draws a 512×512 PNG from the seed, whatever the title', async () => {
    const cover = await renderCover({ seed: 'a', title: 'Night <drive> & "rain" \u0001 — a very long title that goes on and on' });
    expect(cover.subarray(0, 8)).toEqual(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]));
    expect(await sharp(cover).metadata()).toEqual(expect.objectContaining({ format: 'png', width: 512, height: 512 }));
    const other = await renderCover({ seed: 'b', title: '' });
    const pixels = (png: Buffer) => sharp(png).removeAlpha().raw().toBuffer();
    expect((await pixels(cover)).equals(await pixels(other))).toBe(false);
  });
});
