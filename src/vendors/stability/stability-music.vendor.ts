import { createHash } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import { z } from 'zod';
import { SYNC_GENERATION_TIMEOUT_MS, type UpstreamAnswer, UpstreamClient, UpstreamRefused } from '../../infra/relay/upstream-client.js';
import type { MusicAnswer, MusicClipStatus, MusicCreate, MusicFormat, MusicModelSpec, MusicRequest, MusicVendor } from '../contracts/music-vendor.js';
import { failedGenerations } from '../contracts/sync-generation.js';
import { UnusableAnswer, type VendorAccount } from '../contracts/vendor.js';
import { readAnswer } from '../contracts/vendor-answer.js';
import { formOf, type StabilityCall, stabilityRefusal } from './stability-image.vendor.js';
import { STABILITY } from './stability.vendor.js';

/** The longest song it makes, and the shortest and longest clip its inpaint takes (seconds). */
const MAX_DURATION_S = 190;
const MIN_SOURCE_S = 6;
/** Its limit of a prompt; the description and the style are joined into it (`descriptionMax` + `styleMax` + ". " fit). */
const MAX_PROMPT_CHARS = 10_000;
const DESCRIPTION_MAX = 9_000;
const STYLE_MAX = 998;
/** Its seeds: 0 to 4294967294. */
const SEEDS = 4_294_967_295;
/** A song is one file: 190 s of 44.1 kHz stereo WAV is 33.5 MB (its base64 in a JSON answer 45 MB). */
const RESULT_MAX_BYTES = 64 * 1024 * 1024;

/**
 * Stable Audio 2.5 (`model: stable-audio-2.5`): instrumental music and sound from a text prompt, 1 to 190 s
 * (`duration`), one take, MP3 (or WAV); it continues a clip it is given (its inpaint keeps the clip up to
 * `mask_start`). Any clip stored here is given to it by its bytes, its own takes as much as uploads (it names
 * no clip by an id of its own), so it continues both.
 */
export const STABLE_AUDIO_MODELS: readonly MusicModelSpec[] = [
  {
    id: 'stable-audio-2.5',
    lyrics: false,
    description: true,
    instrumental: true,
    instrumentalOnly: true,
    continueUpload: true,
    continueOwn: true,
    durationS: { min: 1, max: MAX_DURATION_S },
    takes: 1,
    lyricsMax: null,
    descriptionMax: DESCRIPTION_MAX,
    styleMax: STYLE_MAX,
    format: 'mp3',
    // its prompt is all it takes: no style to avoid
    avoidStyle: false,
  },
];

/** Sampling steps and guidance by model, as Stability documents them: 2.5 takes 4–8 steps (8 by default), guidance 1 by default; 2 takes 30–100 (50), guidance 7. */
const SAMPLING: Record<string, { steps: number; cfgScale: number }> = {
  'stable-audio-2.5': { steps: 8, cfgScale: 1 },
  'stable-audio-2': { steps: 50, cfgScale: 7 },
};

/**
 * Stability AI's Stable Audio 2 API (v2beta), synchronous and multipart like its images (`accept: audio/*`: the
 * answer is the song's bytes, with `finish-reason` and `seed` headers; `application/json` would answer
 * `{audio: <base64>, finish_reason, seed}`, read as well). A new song is `POST
 * /v2beta/audio/stable-audio-2/text-to-audio` (`prompt`, `duration`, `model`, `output_format`, `seed`, `steps`,
 * `cfg_scale`); a continuation is `POST /v2beta/audio/stable-audio-2/inpaint`, the clip as `audio` (MP3 or WAV, 6
 * to 190 s) with `mask_start` at the cut and `mask_end` at the song's end: it keeps the clip before the mask and
 * makes the rest, and answers the whole extended track (a take `fromStart`). Errors `{id, name, errors}`: 403
 * content_moderation and `finish-reason: CONTENT_FILTERED` are its moderation (a content refusal), 402 the
 * account's credit, 429 busy, 5xx a failed generation (not charged: another channel may take the task). It
 * keeps no id of ours: a create whose answer was lost is never sent again.
 */
@Injectable()
export class StabilityMusicVendor implements MusicVendor {
  static readonly protocol = STABILITY.protocol;
  static readonly models = STABLE_AUDIO_MODELS;
  readonly protocol = StabilityMusicVendor.protocol;
  readonly models = STABLE_AUDIO_MODELS;
  /** It answers at once: nothing is polled. */
  readonly minPollS = STABILITY.pollFloorS;

  constructor(private readonly client: UpstreamClient) {}

  async create(account: VendorAccount, create: MusicCreate): Promise<MusicAnswer> {
    const { request } = create;
    if (request.continues && !create.source) throw new UpstreamRefused('Stable Audio continues a clip only from its bytes, and none was given', 0, 'request', true);
    const clip = request.continues && create.source ? await create.source.bytes() : null;
    const call = stableAudioCall(request, create.taskId, clip);
    return failedGenerations(async () => {
      const answer = await this.client.call('POST', `${account.baseUrl}${call.path}`, { form: formOf(call), auth: account.auth, refusal: stabilityRefusal, failFast: true, maxBytes: RESULT_MAX_BYTES, timeoutMs: SYNC_GENERATION_TIMEOUT_MS, headers: { accept: 'audio/*' } });
      return { made: [stableAudioOf(answer, call.fields.output_format as 'mp3' | 'wav', clip !== null)] };
    });
  }
}

/**
 * The song as Stable Audio takes it: the prompt (the description and the style: it writes no lyrics and sings
 * none), `duration` (the asked one, else its longest, 190 s, its own default), `model`, `output_format` (the
 * model's), `seed` (one of the task's own: the same task asked again, on another channel, makes the same song),
 * and the model's documented `steps` and `cfg_scale`. A continuation is its inpaint: the clip as `audio`,
 * `mask_start` the cut (the clip's end when none was asked; whole seconds down, so nothing past the cut is kept),
 * `mask_end` the song's end. What it cannot do is refused as this channel's (another may take the task), never
 * dropped: lyrics, vocals, a style to avoid, a song shorter than its cut, a clip it does not take.
 */
export function stableAudioCall(request: MusicRequest, taskId: string, clip: { bytes: Buffer; format: MusicFormat; durationS: number } | null): StabilityCall {
  const cannot = (words: string) => new UpstreamRefused(`Stable Audio ${words}`, 0, 'request', true);
  if (request.lyrics !== null || !request.instrumental) throw cannot('makes instrumental music only: it sings no lyrics');
  if (request.avoidStyle !== null) throw cannot('takes no style to avoid');
  const prompt = [request.description?.trim().replace(/[.\s]+$/, ''), request.style?.trim()].filter((part) => part).join('. ');
  if (!prompt) throw cannot('needs a description or a style (its prompt)');
  if (prompt.length > MAX_PROMPT_CHARS) throw cannot(`takes a prompt of at most ${MAX_PROMPT_CHARS} characters (the description and the style together)`);
  const durationS = request.durationS ?? MAX_DURATION_S;
  if (!Number.isInteger(durationS) || durationS < 1 || durationS > MAX_DURATION_S) throw cannot(`makes songs of 1 to ${MAX_DURATION_S} whole seconds, not ${durationS}`);
  const format = STABLE_AUDIO_MODELS.find((m) => m.id === request.model)?.format ?? 'mp3';
  const sampling = SAMPLING[request.model] ?? SAMPLING['stable-audio-2.5'];
  const fields: Record<string, string> = {
    prompt,
    duration: String(durationS),
    model: request.model,
    output_format: format === 'wav' ? 'wav' : 'mp3',
    seed: String(seedOf(taskId)),
    steps: String(sampling.steps),
    cfg_scale: String(sampling.cfgScale),
  };
  if (!request.continues) return { path: '/v2beta/audio/stable-audio-2/text-to-audio', fields, files: [] };
  if (!clip) throw cannot('continues a clip only from its bytes, and none was given');
  if (clip.format !== 'mp3' && clip.format !== 'wav') throw cannot(`takes the clip it continues as MP3 or WAV, not ${clip.format.toUpperCase()}`);
  if (clip.durationS < MIN_SOURCE_S || clip.durationS > MAX_DURATION_S) throw cannot(`continues clips of ${MIN_SOURCE_S} to ${MAX_DURATION_S} s, not one of ${clip.durationS} s`);
  const cut = Math.floor(Math.min(request.continues.atS ?? clip.durationS, clip.durationS));
  if (cut >= durationS) throw cannot(`makes the song up to its end at ${durationS} s, which must be after the cut at ${cut} s`);
  Object.assign(fields, { mask_start: String(cut), mask_end: String(durationS) });
  return { path: '/v2beta/audio/stable-audio-2/inpaint', fields, files: [{ name: 'audio', bytes: clip.bytes, type: clip.format === 'wav' ? 'audio/wav' : 'audio/mpeg', filename: `audio.${clip.format}` }] };
}

/** Its JSON answer (`accept: application/json`): the audio as base64, its finish reason and seed. */
const JSON_ANSWER = z.object({ audio: z.string().min(1), finish_reason: z.string().optional().catch(undefined) });

/**
 * Stability's answer to one call: the song's bytes (`audio/mpeg`, `audio/wav`), or its JSON `{audio, finish_reason}`;
 * its moderation's `finish-reason: CONTENT_FILTERED` a content refusal; anything else refused as no song. An
 * inpaint's song holds the continued clip up to the cut too (`fromStart`).
 */
export function stableAudioOf(answer: Pick<UpstreamAnswer, 'status' | 'headers' | 'body' | 'json'>, asked: 'mp3' | 'wav', continuation: boolean): MusicClipStatus {
  const type = String(answer.headers['content-type'] ?? '').toLowerCase();
  let finish = answer.headers['finish-reason'];
  let bytes = answer.body;
  if (/^application\/json/.test(type)) {
    const json = readAnswer(JSON_ANSWER, answer.json, 'the song');
    finish = json.finish_reason;
    bytes = Buffer.from(json.audio, 'base64');
  } else if (!/^audio\//.test(type)) throw new UnusableAnswer('the upstream answered without audio');
  if (finish === 'CONTENT_FILTERED') throw new UpstreamRefused("the song was filtered by the upstream's moderation (finish-reason CONTENT_FILTERED)", 200, 'request');
  if (bytes.length === 0) throw new UnusableAnswer('the upstream answered an empty song');
  const format: MusicFormat = /wav|wave/.test(type) ? 'wav' : /mpeg|mp3/.test(type) ? 'mp3' : asked;
  return { audio: { bytes, format }, ...(continuation ? { fromStart: true } : {}) };
}

/** The task's seed: its id hashed into Stability's seeds (0 would be a random one: never sent). */
export function seedOf(taskId: string): number {
  return (createHash('sha256').update(taskId).digest().readUInt32BE(0) % (SEEDS - 1)) + 1;
}
