import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import type { ServerResponse } from 'node:http';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { ffmpegBinary } from '../../../../src/infra/ffmpeg/ffmpeg-binary.js';
import { sendJson, startServer, type TestServer } from '../../http-server.js';

const run = promisify(execFile);

/** What Stable Audio makes: 44.1 kHz stereo. */
export const STABLE_AUDIO_RATE = 44_100;
const MODELS = ['stable-audio-2', 'stable-audio-2.5'];
/** Steps each model takes, as documented (2.5: 4–8; 2: 30–100). */
const STEPS: Record<string, [number, number]> = { 'stable-audio-2.5': [4, 8], 'stable-audio-2': [30, 100] };
const PATHS = ['text-to-audio', 'inpaint'];

export interface FakeStableAudio {
  server: TestServer;
  url: string;
  /**
   * Each call received: its route (`text-to-audio`, `inpaint`), its form fields whole, its `audio` file (its
   * type, file name, and length decoded), its Accept header, what was answered (status, and the song: its
   * length and format).
   */
  received: {
    path: string;
    fields: Record<string, string>;
    audio: { type: string; filename: string; durationS: number | null } | null;
    accept: string;
    status: number;
    made?: { durationS: number; format: 'mp3' | 'wav'; keptS: number };
  }[];
  /**
   * `moderate`: 403 content_moderation; `filter`: 200 with `finish-reason: CONTENT_FILTERED` (a silent song);
   * `fail`: 500; `busy`: 429; `noCredit`: 402 payment_required; `json`: answers `{audio, finish_reason, seed}`
   * whatever the Accept header says.
   */
  knobs: { moderate?: boolean; filter?: boolean; fail?: boolean; busy?: boolean; noCredit?: boolean; json?: boolean };
  authFailures: string[];
  close(): Promise<void>;
}

/**
 * Stability AI's Stable Audio 2 API (v2beta), from its API reference: `POST /v2beta/audio/stable-audio-2/text-to-audio`
 * and `/inpaint`, multipart only: `prompt` (1–10,000 characters, required), `duration` (1–190, 190 by default),
 * `model` (stable-audio-2 | stable-audio-2.5), `output_format` (mp3 | wav, mp3 by default), `seed`
 * (0–4294967294), `steps` (2.5: 4–8; 2: 30–100), `cfg_scale` (1–25); inpaint's `audio` (MP3 or WAV, 6 to 190 s),
 * `mask_start` (0–190, 30 by default) and `mask_end` (0–190, 190 by default, after mask_start). Answered
 * synchronously with the song (`accept: audio/*`: its bytes, `finish-reason` and `seed` headers;
 * `application/json`: `{audio: <base64>, finish_reason, seed}`), 44.1 kHz stereo, `duration` long; an inpaint
 * keeps the given audio's samples before `mask_start` (and after `mask_end`, where it lasts past it) and makes
 * the rest. Errors `{id, name, errors: [...]}` (400 bad_request, 401, 402 payment_required, 403
 * content_moderation, 429, 500); GET /v1/user/balance → {credits}.
 */
export async function startFakeStableAudio(apiKey: string): Promise<FakeStableAudio> {
  const received: FakeStableAudio['received'] = [];
  const authFailures: string[] = [];
  const knobs: FakeStableAudio['knobs'] = {};
  const error = (res: ServerResponse, status: number, name: string, errors: string[]) => sendJson(res, status, { id: randomUUID().replace(/-/g, ''), name, errors });
  const server = await startServer(async (req, res) => {
    const url = new URL(req.url ?? '/', 'http://x');
    if (req.headers.authorization !== `Bearer ${apiKey}`) {
      authFailures.push(req.headers.authorization ?? 'none');
      return error(res, 401, 'unauthorized', ['authorization: invalid or missing API key']);
    }
    if (req.method === 'GET' && url.pathname === '/v1/user/balance') return sendJson(res, 200, { credits: 42.5 });
    const route = url.pathname.replace(/^\/v2beta\/audio\/stable-audio-2\//, '');
    if (req.method !== 'POST' || !url.pathname.startsWith('/v2beta/audio/stable-audio-2/') || !PATHS.includes(route)) return error(res, 404, 'not_found', [`${url.pathname}: not found`]);
    if (!String(req.headers['content-type']).startsWith('multipart/form-data')) return error(res, 400, 'bad_request', ['content-type: must be multipart/form-data']);
    const form = await new Request('http://x', { method: 'POST', headers: { 'content-type': String(req.headers['content-type']) }, body: req.body }).formData();
    const fields: Record<string, string> = {};
    const files: Record<string, { bytes: Buffer; type: string; filename: string }> = {};
    for (const [name, value] of form.entries()) {
      if (typeof value === 'string') fields[name] = value;
      else files[name] = { bytes: Buffer.from(await value.arrayBuffer()), type: value.type, filename: value.name };
    }
    const clip = files.audio && audioKind(files.audio.bytes) ? await decodePcm(files.audio.bytes) : null;
    const entry: FakeStableAudio['received'][number] = {
      path: route,
      fields,
      audio: files.audio ? { type: files.audio.type, filename: files.audio.filename, durationS: clip ? frames(clip) / STABLE_AUDIO_RATE : null } : null,
      accept: String(req.headers.accept ?? ''),
      status: 200,
    };
    received.push(entry);
    const refuse = (status: number, name: string, errors: string[]) => {
      entry.status = status;
      return error(res, status, name, errors);
    };
    if (knobs.busy) return refuse(429, 'rate_limit_exceeded', ['You have exceeded the rate limit of 150 requests within a 10 second period']);
    if (knobs.noCredit) return refuse(402, 'payment_required', ['You lack sufficient credits to make this request. Please purchase more credits at https://platform.stability.ai/account/credits and try again.']);
    const bad = (field: string, words: string) => refuse(400, 'bad_request', [`${field}: ${words}`]);
    const number = (field: string, min: number, max: number, whole: boolean, fallback: number): number | string => {
      const raw = fields[field];
      if (raw === undefined) return fallback;
      const value = Number(raw);
      return raw.trim() !== '' && Number.isFinite(value) && value >= min && value <= max && (!whole || Number.isInteger(value)) ? value : `must be ${whole ? 'an integer' : 'a number'} from ${min} to ${max}`;
    };
    if (!fields.prompt || fields.prompt.length > 10_000) return bad('prompt', 'is required, 1 to 10000 characters');
    const model = fields.model ?? 'stable-audio-2';
    if (!MODELS.includes(model)) return bad('model', `must be one of ${MODELS.join(', ')}`);
    const format = fields.output_format ?? 'mp3';
    if (format !== 'mp3' && format !== 'wav') return bad('output_format', 'must be mp3 or wav');
    const checked = {
      duration: number('duration', 1, 190, false, 190),
      seed: number('seed', 0, 4_294_967_294, true, 0),
      steps: number('steps', ...STEPS[model], true, STEPS[model][1]),
      cfg_scale: number('cfg_scale', 1, 25, false, 1),
      ...(route === 'inpaint' ? { mask_start: number('mask_start', 0, 190, false, 30), mask_end: number('mask_end', 0, 190, false, 190) } : {}),
    };
    for (const [field, value] of Object.entries(checked)) if (typeof value === 'string') return bad(field, value);
    const { duration, seed } = checked as Record<string, number>;
    let kept: Int16Array = new Int16Array(0);
    let after: Int16Array = new Int16Array(0);
    let afterAt = 0;
    if (route === 'inpaint') {
      if (!files.audio) return bad('audio', 'is required');
      if (!audioKind(files.audio.bytes)) return bad('audio', 'must be an MP3 or WAV file');
      if (!clip) return bad('audio', 'could not be decoded');
      const clipS = frames(clip) / STABLE_AUDIO_RATE;
      if (clipS < 6 || clipS > 190) return bad('audio', `must last 6 to 190 seconds, not ${clipS.toFixed(2)}`);
      const { mask_start: maskStart, mask_end: maskEnd } = checked as Record<string, number>;
      if (maskEnd <= maskStart) return bad('mask_end', 'must be greater than mask_start');
      kept = clip.subarray(0, Math.min(frames(clip), Math.round(Math.min(maskStart, duration) * STABLE_AUDIO_RATE)) * 2);
      afterAt = Math.round(maskEnd * STABLE_AUDIO_RATE);
      if (maskEnd < duration) after = clip.subarray(Math.min(frames(clip), afterAt) * 2, Math.min(frames(clip), Math.round(duration * STABLE_AUDIO_RATE)) * 2);
    } else if (files.audio || fields.mask_start !== undefined || fields.mask_end !== undefined) return bad(files.audio ? 'audio' : 'mask_start', 'text-to-audio takes none');
    if (knobs.moderate) return refuse(403, 'content_moderation', ['Your request was flagged by our content moderation system, as a result your request was denied and you were not charged.']);
    if (knobs.fail) return refuse(500, 'internal_error', ['An unexpected server error has occurred, please try again later.']);
    const total = Math.round(duration * STABLE_AUDIO_RATE);
    const song = new Int16Array(total * 2);
    if (!knobs.filter) {
      song.set(synthesize(total, seed, fields.prompt));
      song.set(kept.subarray(0, song.length));
      if (after.length) song.set(after, afterAt * 2);
    }
    const bytes = await encode(song, format);
    const seedHeader = String(seed || 1_234_567);
    entry.made = { durationS: total / STABLE_AUDIO_RATE, format, keptS: frames(kept) / STABLE_AUDIO_RATE };
    const finish = knobs.filter ? 'CONTENT_FILTERED' : 'SUCCESS';
    if (knobs.json || /application\/json/.test(entry.accept)) return sendJson(res, 200, { audio: bytes.toString('base64'), finish_reason: finish, seed: Number(seedHeader) });
    res.writeHead(200, { 'content-type': format === 'wav' ? 'audio/wav' : 'audio/mpeg', 'finish-reason': finish, seed: seedHeader, 'x-request-id': randomUUID() });
    res.end(bytes);
  });
  return { server, url: server.url, received, knobs, authFailures, close: () => server.close() };
}

function frames(pcm: Int16Array): number {
  return pcm.length / 2;
}

/** MP3 (an ID3 tag or a frame sync) or WAV (RIFF … WAVE): the files its inpaint takes. */
function audioKind(bytes: Buffer): 'mp3' | 'wav' | null {
  if (bytes.length >= 12 && bytes.toString('latin1', 0, 4) === 'RIFF' && bytes.toString('latin1', 8, 12) === 'WAVE') return 'wav';
  if (bytes.length >= 3 && (bytes.toString('latin1', 0, 3) === 'ID3' || (bytes[0] === 0xff && (bytes[1] & 0xe0) === 0xe0))) return 'mp3';
  return null;
}

/**
 * A tone of the prompt's and seed's pitch, its loudness rising and falling twice a second: interleaved stereo
 * 16-bit. Both are whole numbers of hertz, so the sound repeats every second: one second is computed, then
 * copied (a song of minutes computed sample by sample was most of the suite's time in this fake).
 */
function synthesize(total: number, seed: number, prompt: string): Int16Array {
  let hash = seed >>> 0;
  for (const ch of prompt) hash = (Math.imul(hash, 31) + ch.charCodeAt(0)) >>> 0;
  const pitch = 180 + (hash % 400);
  const out = new Int16Array(total * 2);
  const period = Math.min(total, STABLE_AUDIO_RATE);
  for (let i = 0; i < period; i++) {
    const t = i / STABLE_AUDIO_RATE;
    const v = Math.round(9000 * Math.sin(2 * Math.PI * pitch * t) * (0.6 + 0.4 * Math.sin(2 * Math.PI * 2 * t)));
    out[2 * i] = v;
    out[2 * i + 1] = v;
  }
  for (let from = 2 * period; from < out.length; from += 2 * period) out.copyWithin(from, 0, Math.min(2 * period, out.length - from));
  return out;
}

/** The audio decoded by ffmpeg to interleaved 16-bit stereo at 44.1 kHz; null when it cannot be. Never blocking (the adapter shares this process). */
async function decodePcm(bytes: Buffer): Promise<Int16Array | null> {
  return inTempDir(async (dir) => {
    const file = path.join(dir, 'in.audio');
    await writeFile(file, bytes);
    try {
      const { stdout } = await run(ffmpegBinary().path, ['-hide_banner', '-loglevel', 'error', '-i', file, '-f', 's16le', '-ac', '2', '-ar', String(STABLE_AUDIO_RATE), 'pipe:1'], { encoding: 'buffer', maxBuffer: 1 << 28 });
      return new Int16Array(stdout.buffer, stdout.byteOffset, stdout.length / 2).slice();
    } catch {
      return null;
    }
  });
}

/** The song encoded as asked: MP3 (LAME, 128 kb/s, its header trimming the encoder's delay) or 16-bit PCM WAV. */
async function encode(pcm: Int16Array, format: 'mp3' | 'wav'): Promise<Buffer> {
  return inTempDir(async (dir) => {
    const raw = path.join(dir, 'song.pcm');
    const out = path.join(dir, `song.${format}`);
    await writeFile(raw, Buffer.from(pcm.buffer, pcm.byteOffset, pcm.byteLength));
    const codec = format === 'wav' ? ['-c:a', 'pcm_s16le'] : ['-c:a', 'libmp3lame', '-b:a', '128k'];
    await run(ffmpegBinary().path, ['-hide_banner', '-loglevel', 'error', '-f', 's16le', '-ar', String(STABLE_AUDIO_RATE), '-ac', '2', '-i', raw, ...codec, '-y', out]);
    return readFile(out);
  });
}

async function inTempDir<T>(work: (dir: string) => Promise<T>): Promise<T> {
  const dir = await mkdtemp(path.join(tmpdir(), 'mgw-stable-audio-'));
  try {
    return await work(dir);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
