import { randomUUID } from 'node:crypto';
import type { ServerResponse } from 'node:http';
import { sendJson } from '../../http-server.js';
import { type SpeechEncoding, speechLike } from '../speech-audio.js';

/** Its music output formats (the compose endpoint's `output_format` enum: no WAV there). */
const MUSIC_FORMATS = new Set([
  'mp3_22050_32', 'mp3_24000_48', 'mp3_44100_32', 'mp3_44100_64', 'mp3_44100_96', 'mp3_44100_128', 'mp3_44100_192',
  'pcm_8000', 'pcm_16000', 'pcm_22050', 'pcm_24000', 'pcm_32000', 'pcm_44100', 'pcm_48000',
  'ulaw_8000', 'alaw_8000', 'opus_48000_32', 'opus_48000_64', 'opus_48000_96', 'opus_48000_128', 'opus_48000_192',
]);
/** Its music models (the SDK's MusicModelId). */
const MODELS = ['music_v1', 'music_v2', 'music_v2_5'];
const PROMPT_MAX = 4_100;
const SONG = { minMs: 3_000, maxMs: 600_000 };
const SECTION = { minMs: 3_000, maxMs: 120_000, nameMax: 100, lineMax: 200 };
/** A prompt without a length: the fake's model chooses 30 s. */
const CHOSEN_MS = 30_000;

/** One request to a music endpoint, in ElevenLabs' words, and what was answered (the song's length where one was made). */
export interface MusicReceived {
  route: 'compose' | 'stream' | 'plan';
  outputFormat: string;
  body: Record<string, unknown>;
  status: number;
  seconds?: number;
  songId?: string;
}

/** What the music routes share with the rest of the fake: the knobs, and the list of what they received. */
export interface MusicState {
  received: MusicReceived[];
  knobs: {
    serverError?: number;
    rateLimited?: number;
    quotaExceeded?: boolean;
    /** Its refusal of what was asked: `copyright` with a suggestion (a prompt's `prompt_suggestion`, a plan's `composition_plan_suggestion`), `harmful` without. */
    musicRefusal?: 'copyright' | 'harmful';
    /** The next compose refused as its schema refuses a field (FastAPI's 422 `{detail: [{loc, msg, type}]}`), whatever was asked: a limit of the account's model the fake does not otherwise know. */
    invalid?: { loc: Loc; msg: string; type: string };
  };
}

type Loc = (string | number)[];
class Invalid extends Error {
  constructor(
    readonly loc: Loc,
    readonly msg: string,
    readonly type: string,
  ) {
    super(msg);
  }
}

function string(value: unknown, loc: Loc, max?: number): string {
  if (typeof value !== 'string') throw new Invalid(loc, 'Input should be a valid string', 'string_type');
  if (max !== undefined && value.length > max) throw new Invalid(loc, `String should have at most ${max} characters`, 'string_too_long');
  return value;
}
function integer(value: unknown, loc: Loc, min: number, max: number): number {
  if (typeof value !== 'number' || !Number.isInteger(value)) throw new Invalid(loc, 'Input should be a valid integer', 'int_type');
  if (value < min) throw new Invalid(loc, `Input should be greater than or equal to ${min}`, 'greater_than_equal');
  if (value > max) throw new Invalid(loc, `Input should be less than or equal to ${max}`, 'less_than_equal');
  return value;
}
function boolean(value: unknown, loc: Loc): boolean {
  if (typeof value !== 'boolean') throw new Invalid(loc, 'Input should be a valid boolean', 'bool_type');
  return value;
}
function strings(value: unknown, loc: Loc, max?: number): string[] {
  if (!Array.isArray(value)) throw new Invalid(loc, 'Input should be a valid list', 'list_type');
  return value.map((item, i) => string(item, [...loc, i], max));
}
function object(value: unknown, loc: Loc): Record<string, unknown> {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new Invalid(loc, 'Input should be a valid dictionary or object to extract fields from', 'model_attributes_type');
  return value as Record<string, unknown>;
}
function required(body: Record<string, unknown>, field: string, loc: Loc): unknown {
  if (body[field] === undefined) throw new Invalid([...loc, field], 'Field required', 'missing');
  return body[field];
}

/** A composition plan (`MusicPrompt`: positive_global_styles, negative_global_styles, sections of `SongSection`) checked as its schema does; its length in ms. */
function planLength(value: unknown, loc: Loc): number {
  const plan = object(value, loc);
  strings(required(plan, 'positive_global_styles', loc), [...loc, 'positive_global_styles']);
  strings(required(plan, 'negative_global_styles', loc), [...loc, 'negative_global_styles']);
  const sections = required(plan, 'sections', loc);
  if (!Array.isArray(sections)) throw new Invalid([...loc, 'sections'], 'Input should be a valid list', 'list_type');
  let total = 0;
  sections.forEach((item, i) => {
    const at = [...loc, 'sections', i];
    const section = object(item, at);
    const name = string(required(section, 'section_name', at), [...at, 'section_name'], SECTION.nameMax);
    if (name.length < 1) throw new Invalid([...at, 'section_name'], 'String should have at least 1 character', 'string_too_short');
    strings(required(section, 'positive_local_styles', at), [...at, 'positive_local_styles']);
    strings(required(section, 'negative_local_styles', at), [...at, 'negative_local_styles']);
    total += integer(required(section, 'duration_ms', at), [...at, 'duration_ms'], SECTION.minMs, SECTION.maxMs);
    strings(required(section, 'lines', at), [...at, 'lines'], SECTION.lineMax);
  });
  if (sections.length === 0 || total < SONG.minMs || total > SONG.maxMs) {
    throw new Invalid(loc, `Value error, the sections must last between ${SONG.minMs}ms and ${SONG.maxMs}ms together, got ${total}ms`, 'value_error');
  }
  return total;
}

/**
 * A compose body (`Body_Compose_music_v1_music_post`) checked as ElevenLabs documents it: a `prompt` (at most
 * 4,100 characters) or a `composition_plan` (of sections: music_v1's), never both; `music_length_ms`
 * (3,000-600,000) and `force_instrumental` with a prompt only; `model_id` one of its models (default music_v1); `seed`, `respect_sections_durations`,
 * `store_for_inpainting`, `sign_with_c2pa` of their types. The song's length: the plan's sections together, the
 * asked length, or (a prompt without one) what the model chooses.
 */
function composeLength(body: Record<string, unknown>): number {
  const { prompt, composition_plan: plan, music_length_ms: length, force_instrumental: instrumental } = body;
  const model = body.model_id ?? 'music_v1';
  if (!MODELS.includes(model as string)) throw new Invalid(['body', 'model_id'], `Input should be ${MODELS.map((m) => `'${m}'`).join(', ')}`, 'enum');
  if (body.seed !== undefined && body.seed !== null) integer(body.seed, ['body', 'seed'], 0, 2 ** 32 - 1);
  for (const flag of ['force_instrumental', 'respect_sections_durations', 'store_for_inpainting', 'sign_with_c2pa']) if (body[flag] !== undefined) boolean(body[flag], ['body', flag]);
  const hasPrompt = prompt !== undefined && prompt !== null;
  const hasPlan = plan !== undefined && plan !== null;
  if (hasPrompt === hasPlan) throw new Invalid(['body'], 'Value error, exactly one of prompt and composition_plan must be provided', 'value_error');
  if (hasPlan) {
    if (length !== undefined && length !== null) throw new Invalid(['body', 'music_length_ms'], 'Value error, music_length_ms can only be used with prompt', 'value_error');
    if (instrumental === true) throw new Invalid(['body', 'force_instrumental'], 'Value error, force_instrumental can only be used with prompt', 'value_error');
    // this plan (sections) is music_v1's; the later models take another (chunks), which the fake does not know
    if (model !== 'music_v1') throw new Invalid(['body', 'composition_plan'], `Value error, a composition plan of sections is for the music_v1 model only, not ${String(model)}`, 'value_error');
    return planLength(plan, ['body', 'composition_plan']);
  }
  const text = string(prompt, ['body', 'prompt'], PROMPT_MAX);
  if (!text.trim()) throw new Invalid(['body', 'prompt'], 'String should have at least 1 character', 'string_too_short');
  return length === undefined || length === null ? CHOSEN_MS : integer(length, ['body', 'music_length_ms'], SONG.minMs, SONG.maxMs);
}

/** The plan the fake's model writes from a prompt: its comma-separated phrases as styles, an intro, a verse, a chorus and an outro sharing the length. */
function planFrom(prompt: string, lengthMs: number): Record<string, unknown> {
  const names = ['Intro', 'Verse 1', 'Chorus', 'Outro'];
  const count = Math.max(1, Math.min(names.length, Math.floor(lengthMs / SECTION.minMs)));
  const base = Math.floor(lengthMs / count);
  return {
    positive_global_styles: prompt.split(',').map((s) => s.trim()).filter(Boolean).slice(0, 5),
    negative_global_styles: [],
    sections: names.slice(0, count).map((section_name, i) => ({
      section_name,
      positive_local_styles: [],
      negative_local_styles: [],
      duration_ms: i === count - 1 ? lengthMs - base * (count - 1) : base,
      lines: section_name === 'Intro' || section_name === 'Outro' ? [] : ['Every line the model wrote', 'for the song it planned'],
    })),
  };
}

/**
 * ElevenLabs Music's routes (its API reference, "Compose music", "Stream music", "Create composition plan"; the
 * SDK's `music.compose`, `.stream`, `.compositionPlan.create`): `POST /v1/music` and `/v1/music/stream`
 * (`?output_format=`, default mp3_44100_128) answer a real MP3 lasting the song's length (mono, its sample rate
 * and bitrate as asked) with its `song-id` header, the stream in chunks; `POST /v1/music/plan` answers a
 * composition plan. Refusals as its `{detail: {status, message, data}}`: 400 `bad_prompt` with
 * `data.prompt_suggestion`, 400 `bad_composition_plan` with `data.composition_plan_suggestion` (none for harmful
 * content), 401 `quota_exceeded`, 429 `too_many_concurrent_requests`, 500; a body its schema refuses as FastAPI's
 * 422 `{detail: [{loc, msg, type}]}`. Answers false (not handled) for any other path.
 */
export async function handleMusic(url: URL, method: string, rawBody: Buffer, res: ServerResponse, state: MusicState): Promise<boolean> {
  const routes: Record<string, MusicReceived['route']> = { '/v1/music': 'compose', '/v1/music/stream': 'stream', '/v1/music/plan': 'plan' };
  const route = routes[url.pathname] as MusicReceived['route'] | undefined;
  if (!route || method !== 'POST') return false;
  const fail = (status: number, code: string, message: string, data?: unknown) => sendJson(res, status, { detail: { status: code, message, ...(data !== undefined ? { data } : {}) } });
  let body: Record<string, unknown>;
  try {
    const parsed: unknown = JSON.parse(rawBody.toString('utf8'));
    body = object(parsed, ['body']);
  } catch {
    sendJson(res, 422, { detail: [{ loc: ['body'], msg: 'JSON decode error', type: 'json_invalid' }] });
    return true;
  }
  // `auto`: the model's own (mp3_44100_128 for music_v1; the fake answers it for all)
  const asked = url.searchParams.get('output_format') ?? 'mp3_44100_128';
  const outputFormat = asked === 'auto' ? 'mp3_44100_128' : asked;
  const entry: MusicReceived = { route, outputFormat, body, status: 0 };
  state.received.push(entry);
  const answer = (status: number, send: () => void) => {
    entry.status = status;
    send();
    return true;
  };
  const { knobs } = state;
  if (knobs.serverError && knobs.serverError > 0) {
    knobs.serverError--;
    return answer(500, () => fail(500, 'internal_error', 'An internal server error occurred.'));
  }
  if (knobs.rateLimited && knobs.rateLimited > 0) {
    knobs.rateLimited--;
    return answer(429, () => fail(429, 'too_many_concurrent_requests', 'Your current subscription is associated with a maximum of 2 concurrent requests and you have exceeded that limit.'));
  }

  if (route === 'plan') {
    let lengthMs: number;
    let prompt: string;
    try {
      prompt = string(required(body, 'prompt', ['body']), ['body', 'prompt'], PROMPT_MAX);
      lengthMs = body.music_length_ms === undefined || body.music_length_ms === null ? CHOSEN_MS : integer(body.music_length_ms, ['body', 'music_length_ms'], SONG.minMs, SONG.maxMs);
      if (body.source_composition_plan !== undefined && body.source_composition_plan !== null) planLength(body.source_composition_plan, ['body', 'source_composition_plan']);
    } catch (err) {
      if (!(err instanceof Invalid)) throw err;
      return answer(422, () => sendJson(res, 422, { detail: [{ loc: err.loc, msg: err.msg, type: err.type }] }));
    }
    return answer(200, () => sendJson(res, 200, planFrom(prompt, lengthMs)));
  }

  if (!MUSIC_FORMATS.has(outputFormat)) {
    return answer(422, () => sendJson(res, 422, { detail: [{ loc: ['query', 'output_format'], msg: `Input should be one of ${[...MUSIC_FORMATS].map((f) => `'${f}'`).join(', ')}`, type: 'enum' }] }));
  }
  if (knobs.invalid) {
    const { loc, msg, type } = knobs.invalid;
    delete knobs.invalid;
    return answer(422, () => sendJson(res, 422, { detail: [{ loc, msg, type }] }));
  }
  let lengthMs: number;
  try {
    lengthMs = composeLength(body);
  } catch (err) {
    if (!(err instanceof Invalid)) throw err;
    return answer(422, () => sendJson(res, 422, { detail: [{ loc: err.loc, msg: err.msg, type: err.type }] }));
  }
  if (knobs.quotaExceeded) return answer(401, () => fail(401, 'quota_exceeded', `This request exceeds your quota of 10000. You have 0 credits remaining, while ${Math.ceil(lengthMs / 1000) * 10} credits are required for this request.`));
  if (knobs.musicRefusal) {
    const copyright = knobs.musicRefusal === 'copyright';
    if (body.composition_plan) {
      const plan = body.composition_plan as Record<string, unknown>;
      const suggestion = copyright ? { ...plan, positive_global_styles: ['upbeat pop', 'bright synths'] } : undefined;
      return answer(400, () => fail(400, 'bad_composition_plan', copyright ? 'The composition plan references copyrighted material.' : 'The composition plan violates our Terms of Service.', suggestion && { composition_plan_suggestion: suggestion }));
    }
    const suggestion = copyright ? { prompt_suggestion: 'An upbeat pop song with bright synths and a catchy chorus' } : undefined;
    return answer(400, () => fail(400, 'bad_prompt', copyright ? 'The prompt references copyrighted material.' : 'Your prompt appears to have violated our Terms of Service.', suggestion));
  }

  const [codec, rate, kbps] = outputFormat.split('_');
  const seconds = lengthMs / 1000;
  const audio = await speechLike(codec as SpeechEncoding, seconds, Number(rate), kbps ? Number(kbps) : undefined);
  const songId = randomUUID();
  Object.assign(entry, { seconds, songId });
  const type = codec === 'mp3' ? 'audio/mpeg' : codec === 'opus' ? 'audio/opus' : codec === 'pcm' ? 'audio/pcm' : 'audio/basic';
  entry.status = 200;
  if (route === 'stream') {
    res.writeHead(200, { 'content-type': type, 'song-id': songId });
    for (let at = 0; at < audio.length; at += 16 * 1024) res.write(audio.subarray(at, at + 16 * 1024));
    res.end();
  } else {
    res.writeHead(200, { 'content-type': type, 'content-length': audio.length, 'song-id': songId });
    res.end(audio);
  }
  return true;
}
