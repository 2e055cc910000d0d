import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import type { StepOutcome } from '../../../common/tasks/task-kind.js';
import { AppConfig } from '../../../infra/config/app-config.js';
import { StepScope } from '../../../infra/process/step-scope.js';
import type { SpeechAudio } from '../../../vendors/contracts/speech-vendor.js';
import { SPEECH_RATE } from '../speech-audio.js';
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

  async step(task: SpeechTask, ctx: SpeechContext): Promise<StepOutcome<SpeechAudio>> {
    const p = task.params;
    if (this.config.sandboxDelayMs > 0) await StepScope.delay(this.config.sandboxDelayMs);
    const charsPerS = this.config.kinds.speech.options.sandboxCharsPerS * p.speed;
    if (await (this.espeak ??= hasEspeak())) {
      const wav = await espeakWav(p.input, Math.round(charsPerS * 12), ctx.signal).catch(() => null);
      if (wav) return { kind: 'done', result: { bytes: wav, format: 'wav' } };
    }
    const voice = 'name' in p.voice ? p.voice.name : p.voice.id;
    return { kind: 'done', result: { bytes: standIn(p.input, voice, charsPerS), format: 'pcm', sampleRate: SPEECH_RATE } };
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

/** 24 kHz mono 16-bit PCM standing in for speech: about `input.length / charsPerS` seconds. */
export function standIn(input: string, voice: string, charsPerS: number): Buffer {
  const seed = createHash('sha256').update(voice).digest();
  const base = 100 + (seed[0] % 120); // a voice's pitch: 100–220 Hz
  const perChar = SPEECH_RATE / charsPerS;
  const samples: number[] = [];
  const silence = (chars: number) => {
    for (let i = 0; i < Math.round(chars * perChar); i++) samples.push(0);
  };
  // runs of up to three letters are syllables; spaces and punctuation are silence
  for (const token of input.match(/[\p{L}\p{N}]{1,3}|[.,;:!?…]|\s+|./gu) ?? []) {
    if (/^\s+$/u.test(token)) silence(token.length);
    else if (/^[.,;:!?…]$/u.test(token)) silence(token === ',' ? 1.5 : 3);
    else if (/^[\p{L}\p{N}]+$/u.test(token)) {
      const n = Math.round(token.length * perChar);
      const pitch = base * (1 + ((token.codePointAt(0)! % 7) - 3) * 0.03);
      const formant = 500 + (token.codePointAt(token.length - 1)! % 5) * 250;
      for (let i = 0; i < n; i++) {
        const t = i / SPEECH_RATE;
        const envelope = Math.sin((Math.PI * i) / n) ** 0.5;
        const v = Math.sin(2 * Math.PI * pitch * t) * 0.6 + Math.sin(2 * Math.PI * pitch * 2 * t) * 0.25 + Math.sin(2 * Math.PI * formant * t) * 0.15 * Math.sin(2 * Math.PI * pitch * t);
        samples.push(Math.round(v * envelope * 9000));
      }
    } else silence(token.length);
  }
  if (samples.length < SPEECH_RATE / 4) for (let i = samples.length; i < SPEECH_RATE / 4; i++) samples.push(0);
  const pcm = Buffer.alloc(samples.length * 2);
  samples.forEach((s, i) => pcm.writeInt16LE(Math.max(-32768, Math.min(32767, s)), i * 2));
  return pcm;
}
