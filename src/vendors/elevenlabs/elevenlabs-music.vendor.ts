import { Injectable } from '@nestjs/common';
import { UpstreamClient } from '../../infra/relay/upstream-client.js';
import type { MusicAnswer, MusicCreate, MusicModelSpec, MusicRequest, MusicVendor } from '../contracts/music-vendor.js';
import { speechAudioOf } from '../contracts/speech-answer.js';
import { failedGenerations } from '../contracts/sync-generation.js';
import type { VendorAccount } from '../contracts/vendor.js';
import { ELEVENLABS, elevenlabsRefusal } from './elevenlabs.vendor.js';

/**
 * ElevenLabs' music model (its API reference, "Compose music"): lyrics sung (through a composition plan), or
 * its own lyrics written from a prompt, instrumental when forced; 3 s to 10 minutes (`music_length_ms`
 * 3,000–600,000), one song a request, MP3. It continues nothing of ours: its inpainting (`source_from`) takes
 * only songs it stored itself, for enterprise accounts. The prompt takes 4,100 characters: the description
 * (1,900), the style and what to avoid (1,000 each) and a title (the gateway's 100) folded into it stay within.
 */
export const ELEVENLABS_MUSIC_MODELS: readonly MusicModelSpec[] = [
  {
    id: 'music_v1',
    lyrics: true,
    description: true,
    instrumental: true,
    continueUpload: false,
    continueOwn: false,
    durationS: { min: 3, max: 600 },
    takes: 1,
    // a composition plan's lines are split here to its 200 characters each: no limit of the lyrics' own
    lyricsMax: null,
    descriptionMax: 1_900,
    styleMax: 1_000,
    format: 'mp3',
  },
];

/** What it answers: MP3 at 44.1 kHz, 128 kbit/s (the default, what every plan makes). */
const OUTPUT_FORMAT = 'mp3_44100_128';
/** A 10-minute song at 128 kbit/s is some 9.6 MB. */
const RESULT_MAX_BYTES = 32 * 1024 * 1024;
/** How long a song may take to make: its docs give no latency; a 10-minute song is given five minutes. */
const MUSIC_TIMEOUT_MS = 300_000;

/** A composition plan's bounds (its `SongSection`): a section lasts 3 s to 120 s, its name 1 to 100 characters, each line at most 200. */
const SECTION = { minMs: 3_000, maxMs: 120_000, nameMax: 100, lineMax: 200 };
/** A song's length when none is asked (the plan needs one per section): some four seconds a line sung, an instrumental section two lines' worth. */
const MS_PER_LINE = 4_000;
const SONG = { minMs: 3_000, maxMs: 600_000 };

/** One section of a composition plan, in ElevenLabs' words (`SongSection`). */
export interface ElevenLabsSongSection {
  section_name: string;
  positive_local_styles: string[];
  negative_local_styles: string[];
  duration_ms: number;
  lines: string[];
}

/** A composition plan (`MusicPrompt`): the styles of the whole song, present and absent, and its sections. */
export interface ElevenLabsCompositionPlan {
  positive_global_styles: string[];
  negative_global_styles: string[];
  sections: ElevenLabsSongSection[];
}

/** The body of `POST /v1/music`: a prompt (with its length and `force_instrumental`) or a composition plan (its sections' durations are the length). */
export type ElevenLabsMusicBody =
  | { model_id: string; prompt: string; music_length_ms?: number; force_instrumental: boolean }
  | { model_id: string; composition_plan: ElevenLabsCompositionPlan };

/**
 * The request ElevenLabs is sent: `POST /v1/music?output_format=mp3_44100_128`, and its body. Lyrics to sing go
 * as a composition plan (its only way to take lyrics as they are): the style and the styles to avoid as its
 * global styles (Suno-style comma-separated tags, one style each; a description besides lyrics is one more
 * style), the lyrics' sections (`[Verse]`, `[Chorus: anthemic]` …) as its sections with their lines, the song's
 * length shared among them. Anything else goes as a prompt, in words (its prompting guide: genre, mood,
 * instruments, what to avoid): the description, the style and what to avoid, the title; its length as
 * `music_length_ms`; `force_instrumental` as asked. An instrumental song is always a prompt (`force_instrumental`
 * is a prompt's only), its lyrics not sung (as Suno's `make_instrumental`).
 */
export function elevenlabsMusicRequest(request: MusicRequest, model: MusicModelSpec): { path: string; body: ElevenLabsMusicBody } {
  const path = `/v1/music?output_format=${OUTPUT_FORMAT}`;
  if (request.lyrics !== null && request.lyrics.trim() && !request.instrumental) {
    return { path, body: { model_id: model.id, composition_plan: compositionPlanOf(request) } };
  }
  return {
    path,
    body: {
      model_id: model.id,
      prompt: musicPromptOf(request),
      ...(request.durationS !== null ? { music_length_ms: Math.round(request.durationS * 1000) } : {}),
      force_instrumental: request.instrumental,
    },
  };
}

/**
 * A prompt in words: the description (or the style alone when there is none), the style, what to avoid and the
 * title, each on its line. With neither a description nor a style (lyrics left unsung in an instrumental, or
 * only a title) it asks for "An instrumental track." or "A song.": the prompt may not be empty.
 */
export function musicPromptOf(request: MusicRequest): string {
  const description = nonEmpty(request.description);
  const style = nonEmpty(request.style);
  const avoid = nonEmpty(request.avoidStyle);
  const title = nonEmpty(request.title);
  const lines = [
    description ?? (style ? style : request.instrumental ? 'An instrumental track.' : 'A song.'),
    description && style ? `Style: ${style}` : null,
    avoid ? `Avoid: ${avoid}` : null,
    title ? `Title: ${title}` : null,
  ];
  return lines.filter((line): line is string => line !== null).join('\n');
}

/** The composition plan of a song with lyrics: global styles from the style, what to avoid and a description; the lyrics' sections, timed. */
export function compositionPlanOf(request: MusicRequest): ElevenLabsCompositionPlan {
  const description = nonEmpty(request.description);
  const totalMs = request.durationS !== null ? Math.round(request.durationS * 1000) : null;
  return {
    positive_global_styles: [...stylesOf(request.style), ...(description ? [description] : [])],
    negative_global_styles: stylesOf(request.avoidStyle),
    sections: timedSections(lyricSections(request.lyrics ?? ''), totalMs),
  };
}

/** Suno-style tags ("synthwave, female vocals, 120 bpm") as one style each. */
export function stylesOf(tags: string | null): string[] {
  return (tags ?? '')
    .split(/[,\n]/)
    .map((s) => s.trim())
    .filter((s) => s.length > 0);
}

/** A section of the lyrics before it is timed. */
export interface LyricSection {
  name: string;
  styles: string[];
  lines: string[];
}

const TAG = /^\[([^\]]*)\]$/;

/**
 * The lyrics' sections as Suno-style lyrics mark them: a line `[Verse 1]`, `[Chorus]`, `[Bridge: whispered]` starts
 * one (what follows a colon is its own styles; a section without lines, `[Intro]` or `[Instrumental]`, is
 * played without singing); lines before the first tag are a `Verse`. Lyrics without a tag are a verse per
 * stanza (blank lines between). Lines longer than ElevenLabs takes (200 characters) are cut at a space.
 */
export function lyricSections(lyrics: string): LyricSection[] {
  const rows = lyrics.split(/\r?\n/).map((row) => row.trim());
  const tagged = rows.some((row) => TAG.test(row));
  const sections: LyricSection[] = [];
  let current: LyricSection | null = null;
  let stanzas = 0;
  for (const row of rows) {
    const tag = TAG.exec(row);
    if (tag) {
      const [name, styles] = tagOf(tag[1]);
      current = { name, styles, lines: [] };
      sections.push(current);
      continue;
    }
    if (!row) {
      // a stanza ends: untagged lyrics start another verse at the next line
      if (!tagged && current && current.lines.length > 0) current = null;
      continue;
    }
    if (!current) {
      current = { name: tagged ? 'Verse' : `Verse ${++stanzas}`, styles: [], lines: [] };
      sections.push(current);
    }
    current.lines.push(...splitLine(row));
  }
  // a single untagged stanza is the verse
  if (!tagged && sections.length === 1) sections[0].name = 'Verse';
  return sections;
}

/** A tag's name (1 to 100 characters) and the styles after its colon. */
function tagOf(inside: string): [string, string[]] {
  const colon = inside.indexOf(':');
  const name = (colon >= 0 ? inside.slice(0, colon) : inside).trim() || 'Section';
  return [name.slice(0, SECTION.nameMax), colon >= 0 ? stylesOf(inside.slice(colon + 1)) : []];
}

/** A line of at most 200 characters, else cut at the last space within them (or at 200 when there is none). */
function splitLine(line: string): string[] {
  const parts: string[] = [];
  let rest = line;
  while (rest.length > SECTION.lineMax) {
    const space = rest.lastIndexOf(' ', SECTION.lineMax);
    const cut = space > 0 ? space : SECTION.lineMax;
    parts.push(rest.slice(0, cut).trim());
    rest = rest.slice(cut).trim();
  }
  if (rest) parts.push(rest);
  return parts;
}

/** A section's share of the song: its lines sung, an instrumental one two lines' worth. */
function weightOf(section: LyricSection): number {
  return Math.max(section.lines.length, 2);
}

/**
 * The sections timed to last `totalMs` together (the song's length; none asked: four seconds a line, within 3 s
 * to 10 minutes), each 3 s to 120 s as ElevenLabs takes them, shared by their lines: too many for the length are
 * joined (the lightest neighbours first), a section that would last over 120 s is split in two (its lines
 * halved).
 */
export function timedSections(parsed: readonly LyricSection[], totalMs: number | null): ElevenLabsSongSection[] {
  let sections = parsed.length > 0 ? parsed.map((s) => ({ ...s, lines: [...s.lines] })) : [{ name: 'Verse', styles: [], lines: [] }];
  const total = totalMs ?? clamp(sections.reduce((sum, s) => sum + weightOf(s), 0) * MS_PER_LINE, SONG.minMs, SONG.maxMs);
  while (sections.length > 1 && sections.length * SECTION.minMs > total) sections = joinLightest(sections);
  while (sections.length * SECTION.maxMs < total) sections = splitHeaviest(sections);
  const durations = shareOut(total, sections.map(weightOf));
  return sections.map((s, i) => ({ section_name: s.name, positive_local_styles: s.styles, negative_local_styles: [], duration_ms: durations[i], lines: s.lines }));
}

function joinLightest(sections: LyricSection[]): LyricSection[] {
  let best = 0;
  for (let i = 1; i < sections.length - 1; i++) if (weightOf(sections[i]) + weightOf(sections[i + 1]) < weightOf(sections[best]) + weightOf(sections[best + 1])) best = i;
  const [a, b] = [sections[best], sections[best + 1]];
  const joined = { name: a.name, styles: [...new Set([...a.styles, ...b.styles])], lines: [...a.lines, ...b.lines] };
  return [...sections.slice(0, best), joined, ...sections.slice(best + 2)];
}

function splitHeaviest(sections: LyricSection[]): LyricSection[] {
  let heaviest = 0;
  for (let i = 1; i < sections.length; i++) if (weightOf(sections[i]) > weightOf(sections[heaviest])) heaviest = i;
  const s = sections[heaviest];
  const half = Math.ceil(s.lines.length / 2);
  const halves = [
    { ...s, lines: s.lines.slice(0, half) },
    { ...s, lines: s.lines.slice(half) },
  ];
  return [...sections.slice(0, heaviest), ...halves, ...sections.slice(heaviest + 1)];
}

/**
 * `total` milliseconds shared by weight, each share 3,000 to 120,000 (the caller made that possible): each gets the
 * least, the rest goes by weight to those below the most, whole milliseconds, summing to `total` exactly.
 */
function shareOut(total: number, weights: number[]): number[] {
  const shares = weights.map(() => SECTION.minMs);
  let rest = total - SECTION.minMs * weights.length;
  let open = weights.map((_, i) => i);
  while (rest > 0 && open.length > 0) {
    const weight = open.reduce((sum, i) => sum + weights[i], 0);
    let given = 0;
    for (const i of open) {
      const add = Math.min(Math.floor((rest * weights[i]) / weight), SECTION.maxMs - shares[i]);
      shares[i] += add;
      given += add;
    }
    rest -= given;
    open = open.filter((i) => shares[i] < SECTION.maxMs);
    if (given === 0) {
      // what rounding left: a millisecond each, in order
      for (const i of open) {
        if (rest === 0) break;
        shares[i] += 1;
        rest -= 1;
      }
    }
  }
  return shares;
}

function clamp(value: number, min: number, max: number): number {
  return Math.min(Math.max(value, min), max);
}

function nonEmpty(value: string | null): string | null {
  return value !== null && value.trim() ? value.trim() : null;
}

/**
 * ElevenLabs Music, synchronous: `POST /v1/music?output_format=mp3_44100_128` (JSON: a prompt or a composition
 * plan, `model_id`, `music_length_ms`, `force_instrumental`) answers the song's MP3 bytes, its id in the
 * `song-id` header. Errors (`elevenlabsRefusal`): 400 `bad_prompt` / `bad_composition_plan` its refusal of
 * what was asked (copyrighted material, harmful content: a content refusal, with its suggestion when it makes
 * one), 401 `quota_exceeded` the account's credits (music needs a paid plan: 401/403 `payment_required` too),
 * other 401s its key, 422 the request, 429 busy, 5xx a generation that failed (not charged: another channel
 * may take the task). A 200 that is not MP3 is an unusable answer. It keeps no id of ours: a create whose
 * answer was lost is never sent there again.
 */
@Injectable()
export class ElevenLabsMusicVendor implements MusicVendor {
  static readonly protocol = ELEVENLABS.protocol;
  static readonly models = ELEVENLABS_MUSIC_MODELS;
  readonly protocol = ElevenLabsMusicVendor.protocol;
  readonly models = ELEVENLABS_MUSIC_MODELS;
  /** It answers at once: nothing is polled. */
  readonly minPollS = ELEVENLABS.pollFloorS;

  constructor(private readonly client: UpstreamClient) {}

  async create(account: VendorAccount, create: MusicCreate): Promise<MusicAnswer> {
    const { path, body } = elevenlabsMusicRequest(create.request, create.model);
    return failedGenerations(async () => {
      const answer = await this.client.call('POST', `${account.baseUrl}${path}`, {
        body,
        auth: account.auth,
        headers: { accept: 'audio/mpeg' },
        failFast: true,
        refusal: elevenlabsRefusal,
        maxBytes: RESULT_MAX_BYTES,
        timeoutMs: MUSIC_TIMEOUT_MS,
      });
      return readElevenLabsSong(answer);
    });
  }
}

/** The song answered: its MP3 bytes (anything else is an unusable answer) and its id at ElevenLabs (`song-id`) where it gives one. */
export async function readElevenLabsSong(answer: { body: Buffer; headers: Record<string, string | string[] | undefined> }): Promise<MusicAnswer> {
  const audio = await speechAudioOf(answer, 'mp3', 44_100);
  const header = answer.headers['song-id'];
  const songId = Array.isArray(header) ? header[0] : header;
  return { made: [{ ...(songId ? { upstreamId: songId } : {}), audio: { bytes: audio.bytes, format: 'mp3' } }] };
}
