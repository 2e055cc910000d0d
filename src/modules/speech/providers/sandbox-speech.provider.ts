import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import type { StepOutcome } from '../../../common/tasks/task-kind.js';
import { AppConfig } from '../../../infra/config/app-config.js';
import { StepScope } from '../../../infra/process/step-scope.js';
import type { SpeechAudio } from '../../../vendors/contracts/speech-vendor.js';
import { type FinishedSpeech, finishSpeech, SPEECH_RATE, SpeechUnusable } from '../speech-audio.js';
import type { SpeechTask } from '../speech-task.js';
import type { SpeechContext, SpeechProvider } from './speech-provider.js';

/**
 * Works offline and speaks real audio of about the length the text would take: espeak-ng where the machine has
 * it (its WAV, read by the kind as any vendor's audio), else a synthesized stand-in: one voiced tone per
 * syllable-sized run of letters, pauses between words and longer ones at punctuation, pitched by the voice,
 * `SPEECH_SANDBOX_CHARS_PER_S` characters a second at speed 1. The same request, the same audio.
 */
@Injectable()
export class SandboxSpeechProvider implements SpeechProvider {
  private espeak?: Promise<boolean>;

  constructor(private readonly config: AppConfig) {}

  async step(task: SpeechTask, ctx: SpeechContext): Promise<StepOutcome<FinishedSpeech>> {
    try {
      return { kind: 'done', result: await finishSpeech(await this.speak(task, ctx), task.params.format, (prefix, ext) => ctx.file(prefix, ext)) };
    } catch (err) {
      if (err instanceof SpeechUnusable) return { kind: 'failed', reason: err.message };
      throw err;
    }
  }

  private async speak(task: SpeechTask, ctx: SpeechContext): Promise<SpeechAudio> {
    const p = task.params;
    if (this.config.sandboxDelayMs > 0) await StepScope.delay(this.config.sandboxDelayMs);
    const charsPerS = this.config.kinds.speech.options.sandboxCharsPerS * p.speed;
    if (await (this.espeak ??= hasEspeak())) {
      const wav = await espeakWav(p.input, Math.round(charsPerS * 12), ctx.signal).catch(() => null);
      if (wav) return { bytes: wav, format: 'wav' };
    }
    const voice = 'name' in p.voice ? p.voice.name : p.voice.id;
    return { bytes: standIn(p.input, voice, charsPerS), format: 'pcm', sampleRate: SPEECH_RATE };
  }
}

/** Whether espeak-ng runs here. */
function hasEspeak(): Promise<boolean> {
  return new Promise((resolve) => execFile('espeak-ng', ['--version'], { timeout: 5000 }, (err) => resolve(!err)));
}

/** espeak-ng's WAV of the text at `wordsPerMinute` (its -s), the text given as an argument (never a shell). */
function espeakWav(text: string, wordsPerMinute: number, signal: AbortSignal): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    execFile('espeak-ng', ['--stdout', '-s', String(Math.min(450, Math.max(80, wordsPerMinute))), '--', text], { encoding: 'buffer', maxBuffer: 64 * 1024 * 1024, timeout: 60_000, signal }, (err, stdout) =>
      err ? reject(err) : resolve(stdout),
    );
  });
}

function codePoints(text: string): number {
  let n = 0;
  for (const _ of text) n++;
  return n;
}

/**
 * 24 kHz mono 16-bit PCM standing in for speech: about (the input's code points) / `charsPerS` seconds. Each syllable is
 * sin(π·i/n)^½ · (0.6·sin(2π·p·t) + 0.25·sin(4π·p·t) + 0.15·sin(2π·f·t)·sin(2π·p·t)) at t = i / SPEECH_RATE, its
 * pitch p from the voice and its first letter, its formant f from its last; the sines are run as rotations
 * (a multiply-add a sample, not a sine: sample by sample, 4,096 characters took about a second of CPU).
 */
export function standIn(input: string, voice: string, charsPerS: number): Buffer {
  const seed = createHash('sha256').update(voice).digest();
  const base = 100 + (seed[0] % 120); // a voice's pitch: 100–220 Hz
  const perChar = SPEECH_RATE / charsPerS;
  // runs of up to three letters are syllables; spaces and punctuation are silence
  const parts = (input.match(/[\p{L}\p{N}]{1,3}|[.,;:!?…]|\s+|./gu) ?? []).map((token) => {
    // as long as its characters (code points, as the input's limit counts them: an emoji is one), a comma as 1.5 and other punctuation as 3
    const samples = Math.round((/^[.,;:!?…]$/u.test(token) ? (token === ',' ? 1.5 : 3) : codePoints(token)) * perChar);
    if (!/^[\p{L}\p{N}]+$/u.test(token)) return { samples };
    const pitch = base * (1 + ((token.codePointAt(0)! % 7) - 3) * 0.03);
    const formant = 500 + (token.codePointAt(token.length - 1)! % 5) * 250;
    return { samples, pitch, formant };
  });
  const total = parts.reduce((sum, part) => sum + part.samples, 0);
  const pcm = Buffer.alloc(Math.max(total, SPEECH_RATE / 4) * 2); // silence where nothing is voiced; a quarter second at least
  let at = 0;
  for (const { samples: n, pitch, formant } of parts) {
    if (pitch !== undefined && formant !== undefined) {
      const voiced = new Rotation((2 * Math.PI * pitch) / SPEECH_RATE);
      const formed = new Rotation((2 * Math.PI * formant) / SPEECH_RATE);
      const swell = new Rotation(Math.PI / n);
      for (let i = 0; i < n; i++) {
        const s = voiced.sin;
        const v = s * 0.6 + 2 * s * voiced.cos * 0.25 + formed.sin * 0.15 * s; // sin 2x = 2 sin x cos x
        const sample = round(v * sqrt(max(0, swell.sin)) * 9000);
        pcm.writeInt16LE(max(-32768, min(32767, sample)), (at + i) * 2);
        voiced.turn();
        formed.turn();
        swell.turn();
      }
    }
    at += n;
  }
  return pcm;
}

/**
 * Math's functions the loop calls, read once: where the global object is contextified (the tests' vm contexts)
 * each read of `Math` cost about 0.2 µs, 1 µs a sample here (plain Node's reads are next to free either way).
 */
const { round, sqrt, max, min } = Math;

/** sin(k·step) and cos(k·step) for k = 0, 1, 2, …: each turn multiplies by the rotation of `step`. */
class Rotation {
  sin = 0;
  cos = 1;
  private readonly stepSin: number;
  private readonly stepCos: number;

  constructor(step: number) {
    this.stepSin = Math.sin(step);
    this.stepCos = Math.cos(step);
  }

  turn(): void {
    const { sin, cos } = this;
    this.sin = sin * this.stepCos + cos * this.stepSin;
    this.cos = cos * this.stepCos - sin * this.stepSin;
  }
}
