import { Injectable } from '@nestjs/common';
import { z } from 'zod';
import { SYNC_GENERATION_TIMEOUT_MS, UpstreamBusy, UpstreamClient, UpstreamGenerationFailed, UpstreamRefused, UpstreamUnavailable } from '../../infra/relay/upstream-client.js';
import type { MusicAnswer, MusicClipStatus, MusicCreate, MusicModelSpec, MusicRequest, MusicVendor } from '../contracts/music-vendor.js';
import { failedGenerations } from '../contracts/sync-generation.js';
import type { VendorAccount } from '../contracts/vendor.js';
import { readAnswer } from '../contracts/vendor-answer.js';
import { minimaxChecked } from './minimax-answer.js';
import { MINIMAX } from './minimax.vendor.js';

/** Its music generation's limits (API reference, "Music Generation"), in characters: the prompt (style, mood, scenario) and the lyrics. */
export const MINIMAX_MUSIC_PROMPT_MAX = 2000;
export const MINIMAX_MUSIC_LYRICS_MAX = 3500;
/** Its lyrics generation's prompt (the theme it writes a song on), in characters (API reference, "Lyrics Generation"). */
export const MINIMAX_LYRICS_PROMPT_MAX = 2000;

function minimaxMusic(id: string): MusicModelSpec {
  return {
    id,
    lyrics: true,
    // from a description its lyrics generation writes the lyrics first (see the class)
    description: true,
    instrumental: true,
    continueUpload: false,
    continueOwn: false,
    // it takes no duration: the song lasts what its lyrics take (MiniMax says up to some 6 minutes)
    durationS: null,
    takes: 1,
    lyricsMax: MINIMAX_MUSIC_LYRICS_MAX,
    descriptionMax: MINIMAX_LYRICS_PROMPT_MAX,
    styleMax: MINIMAX_MUSIC_PROMPT_MAX,
    format: 'mp3',
  };
}

/**
 * MiniMax's music models as its Music Generation reference lists them now (platform.minimax.io): music-2.6 (paid
 * and Token Plan accounts) and music-2.6-free (any key, a lower rate limit), both singing given lyrics (1–3,500
 * characters, section tags such as [Verse] and [Chorus]) or making instrumental music (`is_instrumental`, its
 * prompt then required). Its music-cover models remake a reference recording, which no request of ours asks
 * for, and are left out; so are music-2.5, 2.5+, 2.0 and 1.5, which earlier versions of that page listed and
 * today's no longer does.
 */
export const MINIMAX_MUSIC_MODELS: readonly MusicModelSpec[] = [minimaxMusic('music-2.6'), minimaxMusic('music-2.6-free')];

/** What it is asked to make: MP3 at its best documented quality (its reference's example and defaults). */
export const MINIMAX_AUDIO_SETTING = { sample_rate: 44_100, bitrate: 256_000, format: 'mp3' } as const;

/**
 * The answer's largest size: a song of some 6 minutes at 256 kb/s is about 11.5 MB, twice that as hex, and room
 * for a longer one.
 */
const RESULT_MAX_BYTES = 48 * 1024 * 1024;
/**
 * How long a song may take: it answers once the whole song is made (no stream is asked for), and a song of several
 * minutes takes longer than an image (not documented): five minutes, where a synchronous image is given three.
 */
const MUSIC_TIMEOUT_MS = 300_000;

/** Hex-encoded audio (`output_format: hex`, what is asked) or a link (`url`, which a proxy may answer with). */
const AUDIO = z.string().regex(/^(?:https?:\/\/\S+|(?:[0-9a-fA-F]{2})+)$/, 'neither hex-encoded audio nor a URL');

/**
 * A music generation's answer: `{data: {audio, status}, trace_id, extra_info: {music_duration (ms),
 * music_sample_rate, music_channel, bitrate, music_size}, analysis_info, base_resp}`; `data.status` 2 is a
 * finished song (1, still being made, is what a stream's chunks say: an answer in one piece is finished).
 */
const MUSIC_ANSWER = z.object({ data: z.object({ audio: AUDIO, status: z.literal(2).optional() }) });

/** A lyrics generation's answer: `{song_title, style_tags, lyrics, base_resp}`, the lyrics with section tags. */
const LYRICS_ANSWER = z.object({
  lyrics: z.string().trim().min(1),
  song_title: z.string().nullish().catch(undefined),
  style_tags: z.string().nullish().catch(undefined),
});

/** Lyrics its lyrics generation wrote: the lyrics with their section tags, the song's title and its style tags, where it gave them. */
export interface MinimaxLyrics {
  lyrics: string;
  title?: string;
  style?: string;
}

/**
 * MiniMax's music API, synchronous: `POST /v1/music_generation` (model, prompt, lyrics, is_instrumental,
 * audio_setting, output_format) answers with the song. It is asked for hex (`output_format: hex`), not a link:
 * the song comes in the answer itself, with nothing to fetch from a link that expires in 24 hours (and that
 * MiniMax's own tools say can fail to download on Token Plan keys). It takes no description to write lyrics
 * from but a prompt of style, mood and scenario: a song asked by description (or by a style alone), not
 * instrumental, has its lyrics written first by `POST /v1/lyrics_generation` (`write_full_song`, the
 * description as its theme, the title kept), the two steps its music generation guide shows; the song then
 * sings them, to the asked style or else to the style tags the lyrics came with, and the clip carries those
 * lyrics and title. Its `lyrics_optimizer` (lyrics written inside the song's call) is not used: it takes one
 * prompt for both the style and the theme, and gives the lyrics it wrote back to nobody. An instrumental song's
 * prompt is its style and description together. It takes no styles to avoid: they are asked for in the prompt's
 * words ("Avoid: …"). Answers: HTTP 200 with `base_resp` (MiniMax's codes as its video reads them: 1002 busy,
 * 1004 and 2049 the credentials, 1008 the balance, 1026 and 1027 its content refusals, 2013 the parameters); a
 * failure of its own under 200 (1000, 1001, 1024, 1033) or a 5xx is a generation that failed, nothing left
 * running there: busy, so another channel may take it. It keeps no id of ours: a create whose answer was lost is
 * never sent there again.
 */
@Injectable()
export class MinimaxMusicVendor implements MusicVendor {
  static readonly protocol = MINIMAX.protocol;
  static readonly models = MINIMAX_MUSIC_MODELS;
  readonly protocol = MinimaxMusicVendor.protocol;
  readonly models = MINIMAX_MUSIC_MODELS;
  /** It answers at once: nothing is polled. */
  readonly minPollS = MINIMAX.pollFloorS;

  constructor(private readonly client: UpstreamClient) {}

  async create(account: VendorAccount, { model, request }: MusicCreate): Promise<MusicAnswer> {
    const written = lyricsToWrite(request);
    const lyrics = written === undefined ? undefined : await this.lyrics(account, written);
    const body = minimaxMusicBody(model, request, lyrics);
    const clip = await failedGenerations(async () => minimaxMusicMade((await this.client.call('POST', `${account.baseUrl}/v1/music_generation`, { body, auth: account.auth, failFast: true, maxBytes: RESULT_MAX_BYTES, timeoutMs: MUSIC_TIMEOUT_MS })).json));
    return { made: [{ ...clip, ...(lyrics ? { lyrics: lyrics.lyrics, ...(lyrics.title ? { title: lyrics.title } : {}) } : {}) }] };
  }

  /** Lyrics written by its lyrics generation (`write_full_song`) on a theme (empty: a song of its choosing), the title kept where one is given. */
  async lyrics(account: VendorAccount, ask: { prompt: string; title: string | null }): Promise<MinimaxLyrics> {
    const body = minimaxLyricsBody(ask.prompt, ask.title);
    return failedGenerations(async () => minimaxLyricsWritten((await this.client.call('POST', `${account.baseUrl}/v1/lyrics_generation`, { body, auth: account.auth, failFast: true, timeoutMs: SYNC_GENERATION_TIMEOUT_MS })).json));
  }
}

/**
 * What its lyrics generation is asked to write for a request, if anything: a song with vocals and no lyrics
 * (asked by description, or by a style alone: its theme is then the style; neither: a song of its choosing).
 */
export function lyricsToWrite(request: MusicRequest): { prompt: string; title: string | null } | undefined {
  if (request.instrumental || nonEmpty(request.lyrics)) return undefined;
  return { prompt: nonEmpty(request.description) ?? nonEmpty(request.style) ?? '', title: nonEmpty(request.title) };
}

/** The lyrics generation's body: `write_full_song`, the theme as its prompt where there is one, the title where asked. */
export function minimaxLyricsBody(prompt: string, title: string | null): Record<string, unknown> {
  if (length(prompt) > MINIMAX_LYRICS_PROMPT_MAX) throw tooLong('description', length(prompt), MINIMAX_LYRICS_PROMPT_MAX);
  return { mode: 'write_full_song', ...(prompt ? { prompt } : {}), ...(title ? { title } : {}) };
}

/**
 * The music generation's body: the model, the prompt, the lyrics sung (the request's, or those written for
 * it), `is_instrumental` when asked, MP3 as `audio_setting`, and hex. The prompt is the style (else the written
 * lyrics' style tags), then, where they were not the lyrics' theme, the description, then the styles to avoid
 * in words; an instrumental song, which MiniMax makes only from a prompt, must have one.
 */
export function minimaxMusicBody(model: MusicModelSpec, request: MusicRequest, written?: MinimaxLyrics): Record<string, unknown> {
  const lyrics = request.instrumental ? null : (written?.lyrics ?? nonEmpty(request.lyrics));
  const style = nonEmpty(request.style) ?? (written ? nonEmpty(written.style ?? null) : null);
  // the description wrote the lyrics, or (with lyrics given, or instrumental) says what the music is for
  const description = written ? null : nonEmpty(request.description);
  const avoid = nonEmpty(request.avoidStyle);
  const prompt = [style, description, avoid && `Avoid: ${avoid}`].filter((part): part is string => !!part).join('\n');
  if (length(prompt) > MINIMAX_MUSIC_PROMPT_MAX) throw tooLong('style and description together', length(prompt), MINIMAX_MUSIC_PROMPT_MAX);
  if (request.instrumental && !prompt) throw new UpstreamRefused("MiniMax makes instrumental music from a prompt: the request needs a style or a description", 400, 'request');
  if (lyrics !== null && length(lyrics) > MINIMAX_MUSIC_LYRICS_MAX) throw tooLong('lyrics', length(lyrics), MINIMAX_MUSIC_LYRICS_MAX);
  return {
    model: model.id,
    ...(prompt ? { prompt } : {}),
    ...(lyrics !== null ? { lyrics } : {}),
    ...(request.instrumental ? { is_instrumental: true } : {}),
    audio_setting: { ...MINIMAX_AUDIO_SETTING },
    output_format: 'hex',
  };
}

/**
 * A music generation's answer: its base_resp checked (a failure of its own is busy: see the class), then the song,
 * its hex decoded (or its link, fetched at once by the relay); an answer without a usable `data.audio` or with a
 * `data.status` other than 2 is unusable, naming the field.
 */
export function minimaxMusicMade(json: Record<string, unknown>): MusicClipStatus {
  const { audio } = readAnswer(MUSIC_ANSWER, minimaxSyncChecked(json), 'the music generation').data;
  if (/^https?:\/\//.test(audio)) return { audioUrl: audio };
  return { audio: { bytes: Buffer.from(audio, 'hex'), format: 'mp3' } };
}

/** A lyrics generation's answer: its base_resp checked as the song's, then the lyrics (unusable without them, naming `lyrics`), title and style tags. */
export function minimaxLyricsWritten(json: Record<string, unknown>): MinimaxLyrics {
  const answer = readAnswer(LYRICS_ANSWER, minimaxSyncChecked(json), 'the lyrics generation');
  const title = nonEmpty(answer.song_title ?? null);
  const style = nonEmpty(answer.style_tags ?? null);
  return { lyrics: answer.lyrics, ...(title ? { title } : {}), ...(style ? { style } : {}) };
}

/**
 * MiniMax's base_resp read for a synchronous answer: as its video's create (`minimaxChecked`), except that a
 * failure of its own (which for a task may have left it running) is here a generation that failed and left
 * nothing behind (UpstreamGenerationFailed), as a synchronous vendor's 5xx is.
 */
export function minimaxSyncChecked(json: Record<string, unknown>): Record<string, unknown> {
  try {
    return minimaxChecked(json, true);
  } catch (err) {
    if (err instanceof UpstreamUnavailable && !(err instanceof UpstreamBusy)) throw new UpstreamGenerationFailed(err.message, undefined, err.answer);
    throw err;
  }
}

function tooLong(field: string, chars: number, max: number): UpstreamRefused {
  return new UpstreamRefused(`MiniMax takes at most ${max} characters of ${field}; the request has ${chars}`, 400, 'request');
}

/** Characters as MiniMax counts them (code points, not UTF-16 units). */
function length(text: string): number {
  return [...text].length;
}

function nonEmpty(value: string | null): string | null {
  return typeof value === 'string' && value.trim() ? value : null;
}
