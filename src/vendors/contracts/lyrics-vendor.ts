import type { RelayVendor } from './relay.js';
import type { VendorAccount } from './vendor.js';

/** The longest prompt any door takes for lyrics (new-api's and sunoapi.org's `prompt`); a model may take less. */
export const LYRICS_MAX_PROMPT = 3000;

/**
 * Lyrics as the gateway asks for them, in its own words: what the lyrics operation stores as a task's params
 * (beside the door it came through) and what an adapter maps out to its vendor.
 */
export interface LyricsRequest {
  /** What the lyrics are to be about (a theme, a mood, a story). */
  prompt: string;
  /** The model named (a vendor's id, or a name a channel serves); null: any model that writes them. */
  model: string | null;
}

/** What one vendor lyrics model does: a request it cannot take is refused at the door (a 400 naming the field). */
export interface LyricsModelSpec {
  /** The vendor's id of the model (what its API takes; the name callers may give). */
  readonly id: string;
  /** The longest prompt it takes, in characters (code points). */
  readonly promptMax: number;
  /** How many versions one task writes (sunoapi.org's two, one for the others). */
  readonly takes: number;
}

/** One version of lyrics a vendor wrote: its words, with the section tags (`[Verse]`, `[Chorus]`) it put in them. */
export interface LyricsText {
  title: string | null;
  text: string;
  /** The styles it suggests for the song, where the vendor gives them (MiniMax's `style_tags`). */
  style?: string | null;
}

/** A create, mapped out by the adapter. */
export interface LyricsCreate {
  request: LyricsRequest;
  /** The model's spec. */
  model: LyricsModelSpec;
  /** Our id of the task. */
  taskId: string;
  /** Where the upstream is asked to call back (UPSTREAM_CALLBACK_BASE_URL set), for vendors that answer later. */
  callbackUrl?: string;
}

/** What an upstream says of a lyrics task; `secrets`: its own ids, never shown to a caller. */
export type LyricsStatus =
  | { state: 'working' }
  | { state: 'succeeded'; lyrics: LyricsText[] }
  | { state: 'failed'; reason: string; secrets: string[] };

/** A create's answer: the lyrics themselves (a synchronous vendor: MiniMax, Mureka), or the upstream's task to watch (the aggregators). */
export type LyricsAnswer = { made: LyricsText[] } | { upstreamId: string };

/**
 * One vendor's lyrics protocol: its models, how lyrics are asked for, and (for a vendor that answers later) how
 * its tasks are asked about. The relay provider routes by the channel's protocol to its adapter; a new vendor is
 * one such file and a line in `lyrics-vendors.ts`. Errors are thrown as the UpstreamClient throws them (as
 * `MusicVendor`'s are); an answer without lyrics or a task as UnusableAnswer.
 */
export interface LyricsVendor extends RelayVendor<LyricsStatus> {
  readonly models: readonly LyricsModelSpec[];
  /** False for a vendor that answers later but never calls back: its tasks are polled on the usual schedule. */
  readonly callsBack?: boolean;
  create(account: VendorAccount, create: LyricsCreate): Promise<LyricsAnswer>;
  query?(account: VendorAccount, upstreamId: string, once: boolean): Promise<LyricsStatus>;
  queryMany?(account: VendorAccount, upstreamIds: string[]): Promise<Map<string, LyricsStatus> | null>;
}
