import { createHash } from 'node:crypto';
import sharp from 'sharp';
import { CHANNELS, SAMPLE_RATE } from './pcm-audio.js';

// The sandbox's music "generation", done offline: a seed (prompt, tags, take, model) picks a key, a scale, a
// tempo, a chord progression, a melody, a bass line and a drum pattern, played by small additive synths.
// PCM handling (joining, MP3 encoding, decoding) lives in pcm-audio.ts and is re-exported here.
export { CHANNELS, SAMPLE_RATE, decodeAudio, decodeAudioFile, decodedChannels, type DecodedAudio, durationOf, encodeMp3, encodeMp3Stream, joinParts, PcmJoiner, type PcmPart, secondsOf, streamPcm } from './pcm-audio.js';

/** Peak of a synthesized song. */
const PEAK = 0.75;
const FADE_IN_S = 0.01;
const FADE_OUT_S = 0.2;

/** Scales as semitones above the key's root. */
const SCALES: number[][] = [
  [0, 2, 4, 5, 7, 9, 11], // major
  [0, 2, 3, 5, 7, 8, 10], // natural minor
  [0, 2, 3, 5, 7, 9, 10], // dorian
  [0, 2, 4, 5, 7, 9, 10], // mixolydian
  [0, 2, 3, 5, 7, 8, 11], // harmonic minor
  [0, 2, 4, 7, 9], // major pentatonic
  [0, 3, 5, 7, 10], // minor pentatonic
];
/** Four-bar progressions as scale degrees (chord = degree, degree + 2, degree + 4 in the scale). */
const PROGRESSIONS: number[][] = [
  [0, 4, 5, 3],
  [0, 5, 3, 4],
  [5, 3, 0, 4],
  [0, 3, 4, 3],
  [0, 3, 0, 4],
  [1, 4, 0, 0],
  [0, 6, 5, 4],
  [3, 4, 2, 5],
];
/** Single-cycle timbres as [harmonic, amplitude] partials. */
const TIMBRES: Array<Array<[number, number]>> = [
  [[1, 1], [2, 0.3], [3, 0.12]], // soft
  [[1, 1], [3, 0.33], [5, 0.2], [7, 0.14]], // hollow (square-ish)
  [[1, 1], [2, 0.5], [3, 0.33], [4, 0.25], [5, 0.2], [6, 0.16]], // bright (saw-ish)
  [[1, 1], [2, 0.6], [4, 0.25], [8, 0.1]], // organ
];
/** Drum patterns over the eight eighth-notes of a bar. */
const KICKS = [[0, 4], [0, 3, 4], [0, 4, 5], [0, 2, 4, 6], [0, 3, 6]];
const SNARES = [[2, 6], [2, 6], [6], [2, 5, 6]];
const HATS = [[0, 1, 2, 3, 4, 5, 6, 7], [1, 3, 5, 7], [0, 2, 4, 6], [0, 1, 2, 3, 4, 5, 6, 7]];
const BASS_LINES = ['beats', 'halves', 'eighths', 'octaves', 'root-fifth'] as const;

const TABLE_SIZE = 2048;
// Per-sample loops use this binding, not `Math.sin`: under Jest the module runs in a vm context, where each
// lookup of a global such as `Math` is slow enough to make synthesis some 20 times slower.
const { sin } = Math;

/**
 * A short piece of music, the same samples for the same seed and clearly another piece for another one:
 * exactly round(durationS × SAMPLE_RATE) stereo frames, peak 0.75, a 10 ms fade-in and a 0.2 s fade-out.
 * Pure arithmetic (about 0.1 s of CPU for 30 s).
 */
export function synthesizeSong(input: { seed: string; durationS: number }): Float32Array {
  if (!Number.isFinite(input.durationS) || input.durationS < 0) throw new Error(`durationS must be a number of seconds ≥ 0, not ${input.durationS}`);
  const frames = Math.round(input.durationS * SAMPLE_RATE);
  const random = seededRandom(input.seed);
  const pick = <T>(list: readonly T[]): T => list[Math.floor(random() * list.length)];
  const between = (low: number, high: number) => low + (high - low) * random();

  const root = 45 + Math.floor(random() * 12); // A2..G#3, the bass's octave
  const scale = pick(SCALES);
  const bpm = 80 + Math.floor(random() * 61);
  const step = 30 / bpm; // an eighth note, s
  const progression = pick(PROGRESSIONS);
  const bars = Math.ceil(input.durationS / (8 * step)) + 1;
  const pitch = (degree: number, octave: number) => {
    const wrapped = ((degree % scale.length) + scale.length) % scale.length;
    return root + 12 * (octave + Math.floor(degree / scale.length)) + scale[wrapped];
  };
  const chordAt = (bar: number) => progression[bar % progression.length];

  const left = new Float32Array(frames);
  const right = new Float32Array(frames);
  const lead = new Float32Array(frames); // mono, echoed into both sides below

  // melody: two two-bar motifs A and B played A A B A, strong beats pulled onto chord tones
  const timbre = wavetable(pick(TIMBRES));
  const density = between(0.35, 0.7);
  const motifs = [motif(random, density), motif(random, density)];
  const form = [0, 0, 1, 0];
  const attack = between(0.005, 0.02);
  const release = between(0.04, 0.12);
  for (let bar = 0; bar < bars; bar += 2) {
    const notes = motifs[form[(bar / 2) % form.length]];
    for (const note of notes) {
      const barOfNote = bar + Math.floor(note.step / 8);
      let degree = note.degree;
      if (note.step % 2 === 0) degree = nearestChordTone(degree, chordAt(barOfNote), scale.length);
      const start = (bar * 8 + note.step) * step;
      voice(lead, 0, timbre, midiHz(pitch(degree, 1)), start, note.length * step * 0.95, attack, release, 0.32);
    }
  }
  const pan = between(-0.3, 0.3);
  const echo = Math.round(3 * step * SAMPLE_RATE); // a dotted quarter
  for (let i = 0; i < frames; i++) {
    const once = i >= echo ? lead[i - echo] : 0;
    const twice = i >= 2 * echo ? lead[i - 2 * echo] : 0;
    left[i] += lead[i] * (1 - pan) + 0.22 * twice;
    right[i] += lead[i] * (1 + pan) + 0.3 * once;
  }

  // bass and pad follow the chords
  const bassTone = wavetable([[1, 1], [2, 0.35], [3, 0.1]]);
  const padTone = wavetable([[1, 1], [2, 0.15]]);
  const bassLine = pick(BASS_LINES);
  const withPad = random() < 0.7;
  for (let bar = 0; bar < bars; bar++) {
    const chord = chordAt(bar);
    const barStart = bar * 8 * step;
    const bassNotes: Array<[number, number, number]> = // [eighth, length in eighths, degree offset or octave]
      bassLine === 'beats' ? [[0, 2, 0], [2, 2, 0], [4, 2, 0], [6, 2, 0]]
      : bassLine === 'halves' ? [[0, 4, 0], [4, 3, 0], [7, 1, 4]]
      : bassLine === 'eighths' ? [0, 1, 2, 3, 4, 5, 6, 7].map((e) => [e, 1, 0] as [number, number, number])
      : bassLine === 'octaves' ? [0, 1, 2, 3, 4, 5, 6, 7].map((e) => [e, 1, e % 2 ? 7 : 0] as [number, number, number])
      : [[0, 2, 0], [2, 2, 4], [4, 2, 0], [6, 2, 4]];
    for (const [at, length, offset] of bassNotes) {
      const midi = offset === 7 ? pitch(chord, 0) + 12 : pitch(chord + offset, 0);
      voice(left, right, bassTone, midiHz(midi), barStart + at * step, length * step * 0.9, 0.008, 0.05, 0.45);
    }
    if (withPad) {
      for (const tone of [0, 2, 4]) {
        voice(left, right, padTone, midiHz(pitch(chord + tone, 1)), barStart, 8 * step, 0.08, 0.15, 0.07);
      }
    }
  }

  // drums
  const kicks = pick(KICKS);
  const snares = pick(SNARES);
  const hats = pick(HATS);
  const kickHz = between(45, 60);
  const kickDecay = between(0.1, 0.2);
  const hatPan = between(-0.4, 0.4);
  let noise = (random() * 0xffffffff) | 1;
  const white = () => {
    noise ^= noise << 13;
    noise ^= noise >>> 17;
    noise ^= noise << 5;
    return (noise >>> 0) / 0x80000000 - 1;
  };
  for (let bar = 0; bar < bars; bar++) {
    for (let eighth = 0; eighth < 8; eighth++) {
      const at = Math.round((bar * 8 + eighth) * step * SAMPLE_RATE);
      if (at >= frames) break;
      if (kicks.includes(eighth)) kick(left, right, at, kickHz, kickDecay);
      if (snares.includes(eighth)) snare(left, right, at, white);
      if (hats.includes(eighth)) hat(left, right, at, eighth % 2 ? 0.06 : 0.09, hatPan, white);
    }
  }

  // master: peak PEAK, fades, interleaved
  let peak = 0;
  for (let i = 0; i < frames; i++) {
    const l = left[i] < 0 ? -left[i] : left[i];
    const r = right[i] < 0 ? -right[i] : right[i];
    if (l > peak) peak = l;
    if (r > peak) peak = r;
  }
  const gain = peak > 0 ? PEAK / peak : 0;
  const fadeIn = Math.min(Math.round(FADE_IN_S * SAMPLE_RATE), Math.floor(frames / 2));
  const fadeOut = Math.min(Math.round(FADE_OUT_S * SAMPLE_RATE), Math.floor(frames / 2));
  const out = new Float32Array(frames * CHANNELS);
  for (let i = 0; i < frames; i++) {
    let g = gain;
    if (i < fadeIn) g *= i / fadeIn;
    if (i >= frames - fadeOut) g *= (frames - 1 - i) / fadeOut;
    out[2 * i] = left[i] * g;
    out[2 * i + 1] = right[i] * g;
  }
  return out;
}

/** A uniform generator on [0, 1): sfc32 seeded with the seed's SHA-256. */
function seededRandom(seed: string): () => number {
  const hash = createHash('sha256').update(seed).digest();
  let a = hash.readUInt32LE(0);
  let b = hash.readUInt32LE(4);
  let c = hash.readUInt32LE(8);
  let d = hash.readUInt32LE(12);
  const next = () => {
    const t = (((a + b) | 0) + d) | 0;
    d = (d + 1) | 0;
    a = b ^ (b >>> 9);
    b = (c + (c << 3)) | 0;
    c = (c << 21) | (c >>> 11);
    c = (c + t) | 0;
    return (t >>> 0) / 4294967296;
  };
  for (let i = 0; i < 15; i++) next();
  return next;
}

interface Note {
  /** Eighth within the two bars (0..15). */
  step: number;
  /** Length in eighths. */
  length: number;
  /** Scale degree above the melody's octave. */
  degree: number;
}

/** Two bars of melody: a random walk over the scale, notes of one to three eighths, some rests. */
function motif(random: () => number, density: number): Note[] {
  const notes: Note[] = [];
  let degree = Math.floor(random() * 5);
  for (let step = 0; step < 16; ) {
    const length = 1 + Math.floor(random() * random() * 4);
    if (step === 0 || random() < density) {
      degree = Math.max(-2, Math.min(9, degree + [-2, -1, -1, 0, 1, 1, 2, 3][Math.floor(random() * 8)]));
      notes.push({ step, length: Math.min(length, 16 - step), degree });
    }
    step += length;
  }
  return notes;
}

/** The chord tone (chord, chord + 2, chord + 4, in any octave) nearest to a degree. */
function nearestChordTone(degree: number, chord: number, scaleLength: number): number {
  for (const distance of [0, -1, 1, -2, 2, -3, 3]) {
    const d = degree + distance;
    const relative = (((d - chord) % scaleLength) + scaleLength) % scaleLength;
    if (relative === 0 || relative === 2 || relative === 4) return d;
  }
  return degree;
}

function midiHz(midi: number): number {
  return 440 * 2 ** ((midi - 69) / 12);
}

/** One cycle of the partials, peak 1, with a guard sample for interpolation. */
function wavetable(partials: Array<[number, number]>): Float32Array {
  const table = new Float32Array(TABLE_SIZE + 1);
  let peak = 0;
  for (let i = 0; i < TABLE_SIZE; i++) {
    for (const [harmonic, amplitude] of partials) table[i] += amplitude * sin((2 * Math.PI * harmonic * i) / TABLE_SIZE);
    if (table[i] > peak) peak = table[i];
    if (-table[i] > peak) peak = -table[i];
  }
  for (let i = 0; i < TABLE_SIZE; i++) table[i] /= peak;
  table[TABLE_SIZE] = table[0];
  return table;
}

/**
 * Adds one note from `table` into `a` (and `b` when not 0): a linear attack from silence, an exponential
 * decay towards 60 % while held, then a linear release to silence, so notes start and end without clicks.
 */
function voice(a: Float32Array, b: Float32Array | 0, table: Float32Array, hz: number, startS: number, holdS: number, attackS: number, releaseS: number, level: number): void {
  const start = Math.round(startS * SAMPLE_RATE);
  const attack = Math.max(1, Math.round(attackS * SAMPLE_RATE));
  const hold = Math.max(attack, Math.round(holdS * SAMPLE_RATE));
  const release = Math.max(1, Math.round(releaseS * SAMPLE_RATE));
  const decay = Math.exp(-1 / (0.25 * SAMPLE_RATE));
  const end = Math.min(a.length, start + hold + release);
  const increment = (hz * TABLE_SIZE) / SAMPLE_RATE;
  let phase = 0;
  let held = 1; // the decaying part of the envelope
  let releasedFrom = 0;
  for (let i = start; i < end; i++) {
    const t = i - start;
    let env: number;
    if (t < attack) env = t / attack;
    else if (t < hold) env = 0.6 + 0.4 * (held *= decay);
    else {
      if (t === hold) releasedFrom = 0.6 + 0.4 * held;
      env = releasedFrom * (1 - (t - hold) / release);
    }
    const index = phase | 0;
    const sample = level * env * (table[index] + (table[index + 1] - table[index]) * (phase - index));
    a[i] += sample;
    if (b) b[i] += sample;
    phase += increment;
    if (phase >= TABLE_SIZE) phase -= TABLE_SIZE;
  }
}

/** A kick: a sine falling from 3× to 1× its pitch, decaying; faded in over 2 ms and out over its last 10 ms. */
function kick(left: Float32Array, right: Float32Array, at: number, hz: number, decayS: number): void {
  const length = Math.round(0.45 * SAMPLE_RATE);
  const end = Math.min(left.length, at + length);
  const decay = Math.exp(-1 / (decayS * SAMPLE_RATE));
  const drop = Math.exp(-1 / (0.03 * SAMPLE_RATE));
  const radians = (2 * Math.PI * hz) / SAMPLE_RATE;
  let phase = 0;
  let amplitude = 0.9;
  let sweep = 2; // pitch above the base, falling to 0
  for (let i = at; i < end; i++) {
    phase += radians * (1 + sweep);
    const sample = amplitude * sin(phase) * edges(i - at, length, 88, 441);
    amplitude *= decay;
    sweep *= drop;
    left[i] += sample;
    right[i] += sample;
  }
}

/** A snare: a noise burst over a 190 Hz tone. */
function snare(left: Float32Array, right: Float32Array, at: number, white: () => number): void {
  const length = Math.round(0.25 * SAMPLE_RATE);
  const end = Math.min(left.length, at + length);
  const noiseDecay = Math.exp(-1 / (0.06 * SAMPLE_RATE));
  const toneDecay = Math.exp(-1 / (0.04 * SAMPLE_RATE));
  const radians = (2 * Math.PI * 190) / SAMPLE_RATE;
  let noise = 0.3;
  let tone = 0.2;
  for (let i = at; i < end; i++) {
    const e = edges(i - at, length, 44, 441);
    const body = tone * sin(radians * (i - at));
    left[i] += e * (noise * white() + body);
    right[i] += e * (noise * white() + body);
    noise *= noiseDecay;
    tone *= toneDecay;
  }
}

/** A closed hi-hat: high-passed noise (a first difference), very short. */
function hat(left: Float32Array, right: Float32Array, at: number, level: number, pan: number, white: () => number): void {
  const length = Math.round(0.08 * SAMPLE_RATE);
  const end = Math.min(left.length, at + length);
  const decay = Math.exp(-1 / (0.02 * SAMPLE_RATE));
  let amplitude = level;
  let previous = 0;
  for (let i = at; i < end; i++) {
    const n = white();
    const sample = amplitude * (n - previous) * edges(i - at, length, 22, 220);
    amplitude *= decay;
    previous = n;
    left[i] += sample * (1 - pan);
    right[i] += sample * (1 + pan);
  }
}

/** Gain of frame t of a sound `length` long: ramps up over `rise` frames and down over the last `fall`. */
function edges(t: number, length: number, rise: number, fall: number): number {
  const up = t / rise;
  const down = (length - 1 - t) / fall;
  return up < 1 ? (up < down ? up : down) : down < 1 ? down : 1;
}

/** Cover colours from the seed: three hues around the wheel, and the seed's pattern values. */
function coverPalette(seed: string): { hues: number[]; values: number[] } {
  const hash = createHash('sha256').update(`cover:${seed}`).digest();
  const base = (hash.readUInt16LE(0) / 65536) * 360;
  const spread = 30 + (hash[2] / 255) * 120;
  return { hues: [base, base + spread, base + 2 * spread].map((h) => Math.round(h % 360)), values: [...hash.subarray(3)] };
}

/** Text safe in SVG: XML specials escaped, characters XML 1.0 forbids (controls, lone surrogates) dropped. */
function xmlText(text: string): string {
  return text
    .replace(/[\u0000-\u0008\u000b\u000c\u000e-\u001f\ufffe\uffff]|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g, '')
    .replace(/[<>&'"]/g, (c) => `&#${c.charCodeAt(0)};`);
}

/** The title in at most two lines of about 22 characters, the rest cut with an ellipsis. */
function titleLines(title: string): string[] {
  const words = title.trim().replace(/\s+/g, ' ').split(' ').filter(Boolean);
  const lines: string[] = [];
  let line = '';
  for (const word of words) {
    const next = line ? `${line} ${word}` : word;
    if ([...next].length <= 22 || !line) line = next;
    else {
      lines.push(line);
      line = word;
    }
  }
  if (line) lines.push(line);
  const shown = lines.slice(0, 2).map((l) => ([...l].length > 22 ? `${[...l].slice(0, 21).join('')}…` : l));
  if (lines.length > 2) shown[1] = `${[...shown[1]].slice(0, 21).join('')}…`;
  return shown;
}

/**
 * A 512×512 PNG cover: a diagonal gradient and soft circles in colours from the seed, with the title drawn
 * on it when the system has fonts (without them, or if the text cannot be rendered, the cover has no title).
 */
export async function renderCover(input: { seed: string; title: string }): Promise<Buffer> {
  const size = 512;
  const { hues, values } = coverPalette(input.seed);
  const circles = Array.from({ length: 6 }, (_, i) => {
    const [x, y, r, h] = values.slice(4 * i, 4 * i + 4);
    return `<circle cx="${(x / 255) * size}" cy="${(y / 255) * size}" r="${40 + (r / 255) * 160}" fill="hsl(${hues[h % 3]},70%,${55 + (h % 25)}%)" fill-opacity="0.35"/>`;
  }).join('');
  const background =
    `<defs><linearGradient id="g" x1="0" y1="0" x2="1" y2="1">` +
    `<stop offset="0" stop-color="hsl(${hues[0]},65%,45%)"/><stop offset="0.55" stop-color="hsl(${hues[1]},60%,35%)"/><stop offset="1" stop-color="hsl(${hues[2]},70%,20%)"/>` +
    `</linearGradient></defs><rect width="${size}" height="${size}" fill="url(#g)"/>${circles}`;
  const lines = titleLines(input.title);
  const text = lines
    .map((line, i) => `<text x="32" y="${size - 40 - (lines.length - 1 - i) * 40}" font-family="DejaVu Sans, sans-serif" font-size="30" font-weight="bold" fill="white" fill-opacity="0.92">${xmlText(line)}</text>`)
    .join('');
  const svg = (withText: boolean) => Buffer.from(`<svg xmlns="http://www.w3.org/2000/svg" width="${size}" height="${size}">${background}${withText ? text : ''}</svg>`);
  try {
    return await sharp(svg(true)).png().toBuffer();
  } catch {
    return sharp(svg(false)).png().toBuffer();
  }
}
