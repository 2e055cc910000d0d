import { Injectable } from '@nestjs/common';
import { z } from 'zod';
import { UpstreamClient, UpstreamRefused } from '../../infra/relay/upstream-client.js';
import type { MusicAnswer, MusicClipStatus, MusicCreate, MusicRequest, MusicStatus, MusicVendor } from '../contracts/music-vendor.js';
import { type VendorAccount } from '../contracts/vendor.js';
import { readAnswer } from '../contracts/vendor-answer.js';
import { MUREKA_MODELS } from './mureka-models.js';
import { murekaFileOf, type MurekaFile } from './mureka-upload.js';
import { MUREKA, murekaRefusal } from './mureka.vendor.js';

/** Where a continuation may start (`extend_at`, milliseconds): Mureka's documented range. */
export const EXTEND_AT_MS = { min: 8000, max: 420_000 } as const;

/** How the id of an instrumental task is kept (its query is its own route): `instrumental:<Mureka's id>`. */
const INSTRUMENTAL = 'instrumental:';
/** How the id of a continuation is kept (its takes are whole songs): `extend:<Mureka's id>`. */
const EXTEND = 'extend:';

/** A task id as Mureka writes it (a string; a number read as its digits). */
const ID = z.preprocess((id) => (typeof id === 'number' && Number.isSafeInteger(id) ? String(id) : id), z.string().min(1));

/** A create's answer (`{id, created_at, model, status, trace_id}`): its id is what is kept. */
const CREATED = z.object({ id: ID });

/** An upload's answer (`{id, bytes, created_at, filename, purpose}`). */
const UPLOADED = z.object({ id: ID });

/** The lyrics Mureka wrote (`POST /v1/lyrics/generate`: `{title, lyrics}`). */
const WRITTEN = z.object({ lyrics: z.string().min(1), title: z.string().optional().catch(undefined) });

/** A timed unit of its lyrics (a line, or a word of one): start and end in milliseconds, its text. */
const TIMED = z.object({ start: z.number().nonnegative(), end: z.number().nonnegative(), text: z.string() });
/** A choice's lyrics, section by section, each line timed and, where it says, each word. */
const SECTIONS = z.array(z.object({ section_type: z.string().optional().catch(undefined), lines: z.array(TIMED.extend({ words: z.array(TIMED).optional().catch(undefined) })) }));

/** One take of a finished task (`choices[]`): its id (a later continuation's `song_id`), its MP3 `url`, its lyrics where sung. */
const CHOICE = z.object({
  id: ID.optional().catch(undefined),
  url: z.string().min(1),
  // lyrics that cannot be read are left out: the song is what the task is for
  lyrics_sections: SECTIONS.nullish().catch(undefined),
});

/** A task as `GET /v1/song/query/{id}` (or the instrumental query) answers it: its `status` is what the state is read from. */
const TASK = z.object({
  id: ID.optional().catch(undefined),
  status: z.string().min(1),
  failed_reason: z.string().nullish().catch(undefined),
});
/** A succeeded task's takes: at least one. */
const SUCCEEDED = z.object({ choices: z.array(CHOICE).min(1) });

/** Mureka's task states that end it without a song, with the words given when it says none. */
const ENDED: Record<string, string> = { failed: 'the task failed', timeouted: 'the task timed out', cancelled: 'the task was cancelled' };

/**
 * Mureka's music API (platform.mureka.ai). A song: `POST /v1/song/generate` (`lyrics`, `model`, `n`, `prompt`: the
 * style); its `lyrics` are required, so a description song has them written first by `POST /v1/lyrics/generate`
 * (free) from the description. An instrumental: `POST /v1/instrumental/generate` (`model`, `n`, `prompt`: the
 * description and style). A continuation: `POST /v1/song/extend` (`song_id` of its own take, or `upload_audio_id`
 * of a clip of ours uploaded by `POST /v1/files/upload`, purpose `audio`; `extend_at` in milliseconds; `lyrics`).
 * Each answers a task, asked about at `GET /v1/song/query/{id}` (`/v1/instrumental/query/{id}`): preparing,
 * queued, running, streaming, then succeeded with its `choices` (MP3 url, lyrics timed line by line and word by
 * word), or failed, timeouted, cancelled with its `failed_reason`. A continuation's takes are whole songs (the
 * clip up to `extend_at`, then what Mureka made: its reference is silent on it; its extensions are new versions
 * of the song, of a whole song's length), read as holding the clip from its start (`fromStart`).
 */
@Injectable()
export class MurekaMusicVendor implements MusicVendor {
  static readonly protocol = MUREKA.protocol;
  readonly protocol = MurekaMusicVendor.protocol;
  static readonly models = MUREKA_MODELS;
  readonly minPollS = MUREKA.pollFloorS;
  readonly models = MUREKA_MODELS;
  /** It calls nothing back (no callback field on any route): its tasks are polled on the usual schedule. */
  readonly callsBack = false;

  constructor(private readonly client: UpstreamClient) {}

  async create(account: VendorAccount, create: MusicCreate): Promise<MusicAnswer> {
    const { request } = create;
    const takes = create.model.takes;
    if (request.continues) {
      const clip = await this.clipContinued(account, create);
      const lyrics = request.lyrics ?? (request.description ? await this.lyricsFor(account, request.description) : null);
      return { upstreamId: `${EXTEND}${await this.post(account, '/v1/song/extend', murekaExtendBody(request, clip, lyrics))}` };
    }
    if (request.instrumental) return { upstreamId: `${INSTRUMENTAL}${await this.post(account, '/v1/instrumental/generate', murekaInstrumentalBody(request, takes))}` };
    const lyrics = request.lyrics ?? (await this.lyricsFor(account, request.description ?? ''));
    return { upstreamId: await this.post(account, '/v1/song/generate', murekaSongBody(request, lyrics, takes)) };
  }

  async query(account: VendorAccount, upstreamId: string, once: boolean): Promise<MusicStatus> {
    const [kind, id] = upstreamId.startsWith(INSTRUMENTAL) ? ['instrumental', upstreamId.slice(INSTRUMENTAL.length)] : ['song', upstreamId.startsWith(EXTEND) ? upstreamId.slice(EXTEND.length) : upstreamId];
    const route = `/v1/${kind}/query/${encodeURIComponent(id)}`;
    const answer = await this.client.call('GET', `${account.baseUrl}${route}`, { auth: account.auth, idempotent: true, once, refusal: murekaRefusal });
    return murekaStatus(answer.json, upstreamId.startsWith(EXTEND));
  }

  /** A create: the task id of its answer. */
  private async post(account: VendorAccount, path: string, body: Record<string, unknown>): Promise<string> {
    const answer = await this.client.call('POST', `${account.baseUrl}${path}`, { body, auth: account.auth, failFast: true, refusal: murekaRefusal });
    return murekaCreated(answer.json);
  }

  /** Lyrics Mureka writes from a description (`POST /v1/lyrics/generate`). */
  private async lyricsFor(account: VendorAccount, description: string): Promise<string> {
    if (!description.trim()) throw new UpstreamRefused('Mureka sings lyrics it is given or writes from a description: the request has neither', 400, 'request');
    const answer = await this.client.call('POST', `${account.baseUrl}/v1/lyrics/generate`, { body: murekaLyricsBody(description), auth: account.auth, failFast: true, refusal: murekaRefusal });
    return murekaLyricsWritten(answer.json);
  }

  /** The clip a continuation continues: its own take by id, or a clip of ours uploaded to it. */
  private async clipContinued(account: VendorAccount, create: MusicCreate): Promise<MurekaClip> {
    const continues = create.request.continues!;
    if (!continues.upload) {
      if (!continues.upstreamClipId) throw new UpstreamRefused("the clip to continue has no id at Mureka", 0, 'request', true);
      return { songId: continues.upstreamClipId };
    }
    if (!create.source) throw new UpstreamRefused('Mureka continues a clip of ours only from its bytes (its files/upload): none was handed over', 0, 'request', true);
    const file = await murekaFileOf(await create.source.bytes());
    const answer = await this.client.call('POST', `${account.baseUrl}/v1/files/upload`, { form: murekaUploadForm(file), auth: account.auth, failFast: true, refusal: murekaRefusal });
    return { uploadAudioId: murekaUploaded(answer.json) };
  }
}

/** What a continuation continues at Mureka: its own song, or an upload of ours. */
export type MurekaClip = { songId: string } | { uploadAudioId: string };

/** A song as `POST /v1/song/generate` takes it: `lyrics`, `model`, `n` (the model's takes), `prompt` (the style) when asked. */
export function murekaSongBody(request: MusicRequest, lyrics: string, takes: number): Record<string, unknown> {
  return { lyrics, model: request.model, n: takes, ...(request.style !== null ? { prompt: request.style } : {}) };
}

/**
 * An instrumental as `POST /v1/instrumental/generate` takes it: `model`, `n`, `prompt` (what it is, then its
 * style; its prompt or a reference upload is required: a request with neither is refused here).
 */
export function murekaInstrumentalBody(request: MusicRequest, takes: number): Record<string, unknown> {
  const prompt = [request.description, request.style].filter((words): words is string => words !== null && words.trim() !== '').join('. ');
  if (!prompt) throw new UpstreamRefused("Mureka's instrumental is made from a prompt: give a description or a style", 400, 'request');
  return { model: request.model, n: takes, prompt };
}

/**
 * A continuation as `POST /v1/song/extend` takes it: `song_id` or `upload_audio_id`, `extend_at` (milliseconds,
 * 8,000–420,000; none asked: 420,000, which Mureka reads as the clip's end when the clip is shorter), `lyrics`
 * when there are any. A point outside Mureka's range is refused here, naming it.
 */
export function murekaExtendBody(request: MusicRequest, clip: MurekaClip, lyrics: string | null): Record<string, unknown> {
  const atS = request.continues?.atS ?? null;
  const extendAt = atS === null ? EXTEND_AT_MS.max : Math.round(atS * 1000);
  if (extendAt < EXTEND_AT_MS.min || extendAt > EXTEND_AT_MS.max) {
    throw new UpstreamRefused(`Mureka continues a clip from ${EXTEND_AT_MS.min / 1000} s to ${EXTEND_AT_MS.max / 1000} s into it (extend_at): ${atS} s was asked`, 400, 'request');
  }
  return { ...('songId' in clip ? { song_id: clip.songId } : { upload_audio_id: clip.uploadAudioId }), extend_at: extendAt, ...(lyrics !== null ? { lyrics } : {}) };
}

/** Lyrics asked of `POST /v1/lyrics/generate`: its `prompt`. */
export function murekaLyricsBody(description: string): Record<string, unknown> {
  return { prompt: description };
}

/** An upload as `POST /v1/files/upload` takes it (multipart): `purpose` `audio` (a clip to extend), the `file`. */
export function murekaUploadForm(file: MurekaFile): FormData {
  const form = new FormData();
  form.append('purpose', 'audio');
  form.append('file', new Blob([new Uint8Array(file.bytes)], { type: file.type }), file.filename);
  return form;
}

/** The task id a create answered; an answer without one is unusable, naming the field. */
export function murekaCreated(json: Record<string, unknown>): string {
  return readAnswer(CREATED, json, 'the music task').id;
}

/** The file id an upload answered. */
export function murekaUploaded(json: Record<string, unknown>): string {
  return readAnswer(UPLOADED, json, 'the upload').id;
}

/** The lyrics Mureka wrote. */
export function murekaLyricsWritten(json: Record<string, unknown>): string {
  return readAnswer(WRITTEN, json, 'the lyrics').lyrics;
}

/**
 * A task as its query answers it: succeeded with its takes (each its id, MP3 url and, for a song, its lyrics as
 * sections of lines and its words timed; a continuation's marked as holding the clip from its start); failed,
 * timeouted or cancelled with its `failed_reason` (its ids kept as secrets); any other state (preparing, queued,
 * running, streaming) still working.
 */
export function murekaStatus(json: Record<string, unknown>, continuation = false): MusicStatus {
  const task = readAnswer(TASK, json, 'the song query');
  if (task.status in ENDED) {
    const choices = Array.isArray(json.choices) ? json.choices : [];
    const ids = choices.map((c) => (typeof c === 'object' && c !== null ? ID.safeParse((c as { id?: unknown }).id) : undefined)).flatMap((p) => (p?.success ? [p.data] : []));
    return { state: 'failed', reason: task.failed_reason?.trim() || ENDED[task.status], secrets: [...(task.id ? [task.id] : []), ...ids] };
  }
  if (task.status !== 'succeeded') return { state: 'working' };
  const clips = readAnswer(SUCCEEDED, json, 'the song query').choices.map(clipOf);
  return { state: 'succeeded', clips: continuation ? clips.map((clip) => ({ ...clip, fromStart: true })) : clips };
}

function clipOf(choice: z.infer<typeof CHOICE>): MusicClipStatus {
  const sections = choice.lyrics_sections ?? [];
  const lyrics = sections
    .map((s) => [...(s.section_type ? [`[${sectionTag(s.section_type)}]`] : []), ...s.lines.map((l) => l.text)].join('\n'))
    .filter((s) => s)
    .join('\n\n');
  const timedLyrics = sections.flatMap((s) => s.lines.flatMap((l) => l.words ?? [])).map((w) => ({ word: w.text, startS: w.start / 1000, endS: w.end / 1000 }));
  return {
    ...(choice.id !== undefined ? { upstreamId: choice.id } : {}),
    audioUrl: choice.url,
    ...(lyrics ? { lyrics } : {}),
    ...(timedLyrics.length > 0 ? { timedLyrics } : {}),
  };
}

/** A section type as lyrics tag it: `pre-chorus` → `Pre-Chorus`. */
function sectionTag(type: string): string {
  return type.replace(/(^|-)([a-z])/g, (_, dash: string, letter: string) => `${dash}${letter.toUpperCase()}`);
}
