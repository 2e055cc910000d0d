import { Injectable } from '@nestjs/common';
import { z } from 'zod';
import { SYNC_GENERATION_TIMEOUT_MS, UpstreamClient, UpstreamRefused } from '../../infra/relay/upstream-client.js';
import type { MusicAnswer, MusicClipStatus, MusicCreate, MusicFormat, MusicModelSpec, MusicRequest, MusicVendor } from '../contracts/music-vendor.js';
import { failedGenerations } from '../contracts/sync-generation.js';
import { UnusableAnswer, type VendorAccount } from '../contracts/vendor.js';
import { readAnswer } from '../contracts/vendor-answer.js';
import { GOOGLE, googleRefusal } from './google.vendor.js';

/**
 * The longest lyrics, description and style sent: Lyria 3's input is 131,072 tokens (its model cards), a token a
 * character at worst; Google documents no limit of its own on either. 30,000 each leaves the three well within it.
 */
const WORDS_MAX = 30_000;

function lyria(id: string): MusicModelSpec {
  return {
    id,
    // "Lyrics:" before the lines to sing (Google's prompting guide); without lyrics it writes its own from the prompt
    lyrics: true,
    description: true,
    // "Instrumental only, no vocals." in the prompt, as the guide asks for no vocals
    instrumental: true,
    // no audio input: it continues no clip, neither an upload nor one of its own
    continueUpload: false,
    continueOwn: false,
    // it takes no duration: the clip model always makes 30 s, the pro model "a couple of minutes (controllable via prompt)", in words only
    durationS: null,
    // one candidate, one song
    takes: 1,
    lyricsMax: WORDS_MAX,
    descriptionMax: WORDS_MAX,
    styleMax: WORDS_MAX,
    // MP3 unless asked for another (responseMimeType, which the adapter does not send)
    format: 'mp3',
  };
}

/**
 * Lyria 3 on the Gemini API (its music generation guide): lyria-3-clip-preview makes 30-second clips,
 * lyria-3-pro-preview full-length songs with verses, choruses and bridges (about three minutes at most); both
 * sing, in eight languages, lyrics given or their own, or play instrumental music when asked, and answer 48 kHz
 * stereo MP3 with the lyrics and structure as text. Lyria RealTime (lyria-realtime-exp, a Live API WebSocket
 * stream of instrumental PCM) is another thing, not served here.
 */
export const LYRIA_MODELS: readonly MusicModelSpec[] = [lyria('lyria-3-clip-preview'), lyria('lyria-3-pro-preview')];

/** Three minutes of 48 kHz stereo WAV (were one answered) as Base64 in JSON is some 46 MB; an MP3 a tenth of it. */
const RESULT_MAX_BYTES = 96 * 1024 * 1024;

/** The finish reasons that say Google's filters stopped it (js-genai's FinishReason): a content refusal. */
const REFUSED = /^(SAFETY|PROHIBITED_CONTENT|RECITATION|BLOCKLIST|SPII)$/;

/** The audio types it answers (`inlineData.mimeType`), as the format the song is kept in. */
const FORMATS: Readonly<Record<string, MusicFormat>> = { 'audio/mpeg': 'mp3', 'audio/mp3': 'mp3', 'audio/wav': 'wav', 'audio/x-wav': 'wav', 'audio/wave': 'wav' };

/** The body of `POST /models/{model}:generateContent` for a song, in Google's words. */
export interface LyriaBody {
  contents: { role: 'user'; parts: { text: string }[] }[];
  generationConfig: { responseModalities: ['AUDIO', 'TEXT'] };
}

/**
 * The prompt, as Google's prompting guide lays one out: the style (genre, mood, instruments, tempo) and what the
 * song is about first, what to avoid in words (Lyria takes no negative prompt), "Instrumental only, no vocals."
 * when asked, and last the lyrics after "Lyrics:" (the guide's cue for words to be sung), unless instrumental (as
 * Suno's make_instrumental, the lyrics are then not sung). No title: Lyria takes none, and in the prompt it would be
 * sung.
 */
export function lyriaPromptOf(request: MusicRequest): string {
  const text = (value: string | null) => value?.trim() || null;
  const style = text(request.style);
  const description = text(request.description);
  const avoid = text(request.avoidStyle);
  const lyrics = request.instrumental ? null : text(request.lyrics);
  const lines = [style && `Style: ${style}`, description, avoid && `Avoid: ${avoid}`, request.instrumental ? 'Instrumental only, no vocals.' : null].filter((line): line is string => line !== null);
  const head = lines.join('\n');
  if (!lyrics) return head;
  return head ? `${head}\n\nLyrics:\n${lyrics}` : `Lyrics:\n${lyrics}`;
}

/** The request Lyria is sent: the prompt in one user turn, `responseModalities: ["AUDIO", "TEXT"]` (the guide's: the text is the lyrics and structure it made). */
export function lyriaBody(request: MusicRequest): LyriaBody {
  return { contents: [{ role: 'user', parts: [{ text: lyriaPromptOf(request) }] }], generationConfig: { responseModalities: ['AUDIO', 'TEXT'] } };
}

/** A part of the first candidate: its text (the lyrics), whether it is a thought, its inline audio (camelCase, or snake_case from a relay). */
const INLINE = z.object({ mimeType: z.string().optional(), mime_type: z.string().optional(), data: z.string().optional() });
const PART = z.object({
  text: z.string().optional().catch(undefined),
  thought: z.boolean().optional().catch(undefined),
  inlineData: INLINE.optional(),
  inline_data: INLINE.optional(),
});

/** The part of `GenerateContentResponse` (js-genai) read: the first candidate's parts and finish, the prompt's feedback. */
const ANSWER = z.object({
  candidates: z
    .array(
      z.object({
        content: z.object({ parts: z.array(PART.nullable()).nullish() }).nullish(),
        finishReason: z.string().nullish(),
        finishMessage: z.string().nullish(),
      }),
    )
    .nullish(),
  promptFeedback: z.object({ blockReason: z.string().nullish(), blockReasonMessage: z.string().nullish() }).nullish(),
});

/** Whether bytes are what their type says: an MP3 (an ID3 tag or an MPEG audio frame's sync) or a RIFF WAVE file. */
function looksLike(bytes: Buffer, format: MusicFormat): boolean {
  if (format === 'wav') return bytes.length > 12 && bytes.toString('latin1', 0, 4) === 'RIFF' && bytes.toString('latin1', 8, 12) === 'WAVE';
  return bytes.length > 3 && (bytes.toString('latin1', 0, 3) === 'ID3' || (bytes[0] === 0xff && (bytes[1] & 0xe0) === 0xe0));
}

/**
 * The song of a `generateContent` answer: the first candidate's `inlineData` part (Base64 MP3, `audio/mpeg`; WAV
 * where it says `audio/wav`) and its text parts, the lyrics it sang (kept but for an instrumental, whose text is
 * only its structure). None: a content refusal where the prompt's `blockReason` or the candidate's `finishReason`
 * says Google's filters stopped it, else an unusable answer naming the field it lacks and the finish reason (with
 * its words: Lyria explains in text what it would not make).
 */
export function lyriaSongOf(json: unknown, status: number, instrumental: boolean): MusicClipStatus {
  const answer = readAnswer(ANSWER, json, 'the song');
  const blockReason = answer.promptFeedback?.blockReason;
  const blocked = blockReason && blockReason !== 'BLOCKED_REASON_UNSPECIFIED' ? blockReason : undefined;
  const words = answer.promptFeedback?.blockReasonMessage || undefined;
  if (blocked) throw new UpstreamRefused(`the upstream's safety filters blocked the prompt (blockReason ${blocked})${words ? `: ${words}` : ''}`, status, 'request');
  const candidate = answer.candidates?.[0];
  const parts = candidate?.content?.parts ?? [];
  const said = parts
    .flatMap((part) => (part && part.thought !== true && part.text?.trim() ? [part.text.trim()] : []))
    .join('\n\n');
  const at = parts.findIndex((part) => part && part.thought !== true && (part.inlineData ?? part.inline_data));
  if (at >= 0) {
    const path = `candidates[0].content.parts[${at}].inlineData`;
    const inline = (parts[at]!.inlineData ?? parts[at]!.inline_data)!;
    const mimeType = (inline.mimeType ?? inline.mime_type ?? '').split(';')[0].trim().toLowerCase();
    const format = FORMATS[mimeType];
    if (!format) throw new UnusableAnswer(`the upstream's ${path}.mimeType is ${mimeType || 'missing'}, not MP3 (audio/mpeg) or WAV (audio/wav)`);
    const bytes = Buffer.from(inline.data ?? '', 'base64');
    if (!looksLike(bytes, format)) throw new UnusableAnswer(`the upstream's ${path}.data is ${bytes.length} bytes that are not ${format === 'mp3' ? 'an MP3' : 'a WAV file'}, though its mimeType says ${mimeType}`);
    return { audio: { bytes, format }, ...(said && !instrumental ? { lyrics: said } : {}) };
  }
  const finish = candidate?.finishReason ?? undefined;
  const why = candidate?.finishMessage || said.slice(0, 200) || undefined;
  if (finish && REFUSED.test(finish)) throw new UpstreamRefused(`the upstream's safety filters refused the song (finishReason ${finish})${why ? `: ${why}` : ''}`, status, 'request');
  const missing = !candidate ? 'candidates[0]' : parts.length === 0 ? 'candidates[0].content.parts' : 'candidates[0].content.parts[].inlineData';
  throw new UnusableAnswer(`the upstream answered without a song: no ${missing} (finishReason ${finish ?? 'none'})${why ? `: ${why}` : ''}`);
}

/**
 * Google's Lyria 3 on the Gemini API, synchronous: `POST /models/{model}:generateContent` with the prompt
 * (`lyriaBody`) answers the song inline as Base64 MP3 with its lyrics as text (`lyriaSongOf`). One song a call, no
 * duration, no continuation (its models declare neither). Errors as its images' (`googleRefusal`): a key not
 * valid is a 400, a free-tier key's `limit: 0` the account's, other 429s and 503 busy, 5xx a failed generation,
 * not charged (another channel may take the task). It keeps no id of ours: a create whose answer was lost is
 * never sent there again.
 */
@Injectable()
export class LyriaMusicVendor implements MusicVendor {
  static readonly protocol = GOOGLE.protocol;
  static readonly models = LYRIA_MODELS;
  readonly protocol = LyriaMusicVendor.protocol;
  readonly models = LYRIA_MODELS;
  /** It answers at once: nothing is polled (the descriptor's floor is Veo's). */
  readonly minPollS = GOOGLE.pollFloorS;

  constructor(private readonly client: UpstreamClient) {}

  async create(account: VendorAccount, create: MusicCreate): Promise<MusicAnswer> {
    const { request, model } = create;
    // no model of its continues a clip: a continuation sent here is the caller's mistake, never a new song in its place
    if (request.continues) throw new UpstreamRefused(`${model.id} continues no clip (Lyria 3 takes no audio)`, 0, 'request', true);
    const url = `${account.baseUrl}/models/${encodeURIComponent(model.id)}:generateContent`;
    return failedGenerations(async () => {
      const answer = await this.client.call('POST', url, { body: lyriaBody(request), auth: account.auth, failFast: true, refusal: googleRefusal, maxBytes: RESULT_MAX_BYTES, timeoutMs: SYNC_GENERATION_TIMEOUT_MS });
      return { made: [lyriaSongOf(answer.json, answer.status, request.instrumental)] };
    });
  }
}
