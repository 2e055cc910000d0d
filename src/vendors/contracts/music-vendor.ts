import type { RelayVendor } from './relay.js';
import { type VendorAccount } from './vendor.js';

/** The audio formats a song is kept in or a vendor may answer with. */
export const MUSIC_FORMATS = ['mp3', 'wav', 'flac', 'ogg', 'aac', 'opus', 'pcm'] as const;
export type MusicFormat = (typeof MUSIC_FORMATS)[number];

/**
 * What one vendor model makes, as video's models say it (`VideoModelSpec`): what a request may ask of it. A request
 * no configured model can make is refused (a 400 naming the field), never served with the field dropped.
 */
export interface MusicModelSpec {
  /** The vendor's id of the model (what its API takes). */
  readonly id: string;
  /** Sings lyrics it is given (Suno's custom mode, MiniMax's lyrics, ElevenLabs' prompt with lyrics). */
  readonly lyrics: boolean;
  /** Writes its own lyrics from a description (Suno's description mode, ElevenLabs' and Lyria's prompts). */
  readonly description: boolean;
  /** Makes a song without vocals when asked. */
  readonly instrumental: boolean;
  /** Makes nothing but instrumental music (Stable Audio): a request with lyrics, or not instrumental, is not for it. */
  readonly instrumentalOnly?: boolean;
  /** Continues a clip uploaded here (the vendor takes it by a link to our store, or by its own upload call). */
  readonly continueUpload: boolean;
  /** Continues a clip it made itself (named by its id at the vendor). */
  readonly continueOwn: boolean;
  /** The durations it takes, in whole seconds; null: it takes none (it decides how long the song is). */
  readonly durationS: { readonly min: number; readonly max: number } | null;
  /** Takes (clips) one task makes: Suno's two, one for the others. */
  readonly takes: number;
  /** The longest lyrics, description and style it takes, in characters (null: no limit of its own). */
  readonly lyricsMax: number | null;
  readonly descriptionMax: number | null;
  readonly styleMax: number | null;
  /** The format of what it makes. */
  readonly format: MusicFormat;
  /**
   * It requires a style in custom mode: whenever it is given lyrics, asked for a song without a description, or
   * asked to continue a clip (sunoapi.org's `customMode` and `defaultParamFlag`: "style and title are required").
   * A request with no style is not for it (its title, when none is asked, its adapter makes up).
   */
  readonly needsStyle?: boolean;
  /** False for a model that takes no style to avoid (Stable Audio, Mureka): a request with one is not for it. */
  readonly avoidStyle?: boolean;
}

/** A song as the gateway asks for it, in its own words: what an adapter maps out to its vendor. */
export interface MusicRequest {
  /** The lyrics (custom mode). */
  lyrics: string | null;
  /** What the song is about, for a vendor that writes the lyrics itself (description mode). */
  description: string | null;
  style: string | null;
  /** Styles to avoid. */
  avoidStyle: string | null;
  title: string | null;
  /** The vendor's model. */
  model: string;
  instrumental: boolean;
  /** How long the song is to last (seconds), for a model that takes a duration; null: the model decides. */
  durationS: number | null;
  /** A continuation: the vendor's id of the clip continued, the second it is cut at, and whether the clip was an upload. */
  continues: { upstreamClipId: string | null; atS: number | null; upload: boolean } | null;
}

/** The clip a continuation continues, as a vendor that takes it from us needs it. */
export interface MusicSource {
  /** A link the vendor can fetch the clip from (our store, signed, for an hour). */
  url(): Promise<string>;
  /** The clip's bytes, for a vendor with an upload call of its own (Mureka's files/upload, Stable Audio's multipart). */
  bytes(): Promise<{ bytes: Buffer; format: MusicFormat; durationS: number }>;
}

/** A create, mapped out by the adapter. */
export interface MusicCreate {
  request: MusicRequest;
  /** The model's spec (what it makes). */
  model: MusicModelSpec;
  /** Our id of the task. */
  taskId: string;
  /** Where the upstream is asked to call back (UPSTREAM_CALLBACK_BASE_URL set), for vendors that answer later. */
  callbackUrl?: string;
  /** The clip continued (a continuation of an upload, or of a clip a vendor cannot name by its own id). */
  source?: MusicSource;
}

/** What a vendor says of one take of a finished song. */
export interface MusicClipStatus {
  /** Its id at the vendor (a later continuation names it). */
  upstreamId?: string;
  /** Its audio: a link to fetch at once (vendors' links expire), or, from a synchronous vendor, the bytes. */
  audioUrl?: string;
  audio?: { bytes: Buffer; format: MusicFormat };
  coverUrl?: string;
  /** The lyrics it sang, where the vendor gives them (description mode: the lyrics it wrote). */
  lyrics?: string;
  /** The lyrics timed word by word, where the vendor gives them: each word with its start and end in seconds. */
  timedLyrics?: { word: string; startS: number; endS: number }[];
  title?: string;
  /**
   * A continuation's take that holds the continued clip up to the cut as well (the whole extended track, as
   * Stable Audio's inpaint and some aggregators' upload-extend answer it), where Suno's holds only what follows
   * the cut: the gateway keeps what follows the cut, so that a joined song is the clip's own samples up to it.
   */
  fromStart?: boolean;
}

/** What an upstream says of a music task; `secrets`: its own ids, never shown to a caller (the provider takes them out of the reason). */
export type MusicStatus =
  | { state: 'working' }
  | { state: 'succeeded'; clips: MusicClipStatus[] }
  | { state: 'failed'; reason: string; secrets: string[] };

/** A create's answer: the song itself (a synchronous vendor), or the upstream's task to watch. */
export type MusicAnswer = { made: MusicClipStatus[] } | { upstreamId: string };

/**
 * One music vendor's protocol: its models and what each makes, how a song is asked for, and (for a vendor that
 * answers later) how its tasks are asked about (one at a time, and several at once where the vendor can). The
 * relay provider routes by the channel's protocol to its adapter; a new vendor is one such file and a line in
 * `music-vendors.ts`. Errors are thrown as the UpstreamClient throws them (busy; refused: auth, account,
 * request, a content refusal as a refused request whose words say so; unavailable), an answer without a task
 * as UnusableAnswer. A synchronous vendor's 5xx is a generation that failed upstream (`failedGenerations`).
 */
export interface MusicVendor extends RelayVendor<MusicStatus> {
  readonly models: readonly MusicModelSpec[];
  /** False for a vendor that answers later but never calls back (Mureka): its tasks are polled on the usual schedule, never as a slow safety net. */
  readonly callsBack?: boolean;
  create(account: VendorAccount, create: MusicCreate): Promise<MusicAnswer>;
  /** Asks about one task (`once`: one try with a short time limit, as the poller asks); vendors that answer later. */
  query?(account: VendorAccount, upstreamId: string, once: boolean): Promise<MusicStatus>;
  /**
   * Asks about several at once: the statuses of those the answer lists (a task it leaves out may have been
   * lost: its step asks for it alone). Null when the account has no such query: ask one at a time.
   */
  queryMany?(account: VendorAccount, upstreamIds: string[]): Promise<Map<string, MusicStatus> | null>;
  /**
   * A finished take's lyrics timed word by word, for a vendor that times them on a call of its own
   * (sunoapi.org's `get-timestamped-lyrics` by task and take): asked for each take its status gave no timing, once
   * the task succeeded, best effort (a failure leaves the take without timed lyrics, never fails the song). Times
   * on the take as the vendor answers it (a `fromStart` take's from its start). Null: none (an instrumental).
   */
  timedLyrics?(account: VendorAccount, upstreamTaskId: string, clip: MusicClipStatus): Promise<MusicClipStatus['timedLyrics'] | null>;
}

/** The normalized fields a music request asks of a model, in the order a refusal names them. */
export const MUSIC_FIELDS = ['model', 'lyrics', 'description', 'style', 'avoidStyle', 'instrumental', 'durationS', 'continues'] as const;
export type MusicField = (typeof MUSIC_FIELDS)[number];

/** What a music request asks of a model: its check (before a channel is chosen) and the router's (for each channel) read it. */
export interface MusicAsk {
  /** The model named (absent: any that makes it). */
  model?: string;
  lyrics: string | null;
  description: string | null;
  style: string | null;
  /** Styles to avoid (Suno's negative tags). */
  avoidStyle: string | null;
  instrumental: boolean;
  durationS: number | null;
  /**
   * A continuation: of a clip its vendor made and names by its id (`own`: only that vendor's channel holding it
   * may name it; any model that continues a stored clip may take its bytes instead), or of a clip only stored
   * here (`stored`: an upload, a joined song, a take of another vendor's).
   */
  continues: 'own' | 'stored' | null;
}

/**
 * The fields of `ask` a model cannot honour (none: it makes exactly what is asked). Lyrics are sung only by a
 * model that sings (and a song without vocals has none to sing); every length is the model's own limit.
 */
export function unmetMusicFields(spec: MusicModelSpec, ask: MusicAsk): MusicField[] {
  const unmet: MusicField[] = [];
  const over = (text: string | null, max: number | null) => text !== null && max !== null && [...text].length > max;
  if (ask.lyrics !== null && !ask.instrumental && (!spec.lyrics || over(ask.lyrics, spec.lyricsMax))) unmet.push('lyrics');
  if (ask.description !== null && (!spec.description || over(ask.description, spec.descriptionMax))) unmet.push('description');
  const customMode = ask.lyrics !== null || ask.description === null || ask.continues !== null;
  if (over(ask.style, spec.styleMax) || (spec.needsStyle === true && ask.style === null && customMode)) unmet.push('style');
  if (ask.avoidStyle !== null && spec.avoidStyle === false) unmet.push('avoidStyle');
  if (ask.instrumental ? !spec.instrumental : spec.instrumentalOnly === true) unmet.push('instrumental');
  if (ask.durationS !== null && (spec.durationS === null || ask.durationS < spec.durationS.min || ask.durationS > spec.durationS.max)) unmet.push('durationS');
  if (ask.continues !== null && !spec.continueUpload && !(ask.continues === 'own' && spec.continueOwn)) unmet.push('continues');
  return unmet;
}
