import type { MusicFormat, MusicSource } from './music-vendor.js';
import type { RelayVendor } from './relay.js';
import type { VendorAccount } from './vendor.js';

/**
 * The splits a caller may ask for: `two`, the voice apart from the rest (vocals and instrumental, the aggregators'
 * vocal removal), or `all`, every stem the vendor makes (ElevenLabs' six, an aggregator's full split).
 */
export const STEM_SPLITS = ['two', 'all'] as const;
export type StemSplit = (typeof STEM_SPLITS)[number];

/** What one vendor stem model makes: the splits it makes (each with the stems it names), and the clips it takes. */
export interface StemsModelSpec {
  /** The vendor's id of the model (or of its family of splits, where the vendor names each split instead). */
  readonly id: string;
  /** The stems each split it makes answers, by the vendor's names (a split it lacks is absent). */
  readonly splits: Readonly<Partial<Record<StemSplit, readonly string[]>>>;
  /**
   * `any`: it takes any clip stored here (the file uploaded, or a link to our copy); `own`: only a clip it made
   * itself, named by its own ids (an aggregator's vocal removal of its own songs), on the channel that holds it.
   */
  readonly source: 'any' | 'own';
  /** The format of the stems it answers. */
  readonly format: MusicFormat;
}

/** What a stems request asks of a model: the split, the model named (absent: any), and whether the clip is held by a vendor's account. */
export interface StemsAsk {
  model?: string;
  split: StemSplit;
  /** `own`: the clip was made by a vendor and may be named there by its ids (only on that channel); `stored`: any clip stored here. */
  clip: 'own' | 'stored';
}

/** The fields of a stems request a model cannot honour (none: it makes exactly what is asked), in the order a refusal names them. */
export const STEMS_FIELDS = ['model', 'split', 'clip'] as const;
export type StemsField = (typeof STEMS_FIELDS)[number];

/** The fields of `ask` a model cannot honour. */
export function unmetStemsFields(spec: StemsModelSpec, ask: StemsAsk): StemsField[] {
  const unmet: StemsField[] = [];
  if (!spec.splits[ask.split]) unmet.push('split');
  if (spec.source === 'own' && ask.clip !== 'own') unmet.push('clip');
  return unmet;
}

/** A stems request in the gateway's words, as an adapter maps it out. */
export interface StemsRequest {
  /** The vendor's model id. */
  model: string;
  split: StemSplit;
}

/** The vendor's own ids of the clip, for a vendor that separates only its own clips: its clip (audio) id and the task that made it. */
export interface OwnClip {
  upstreamClipId: string;
  /** The vendor's id of the task that made it (an aggregator names a clip by both); null where it was not kept. */
  upstreamTaskId: string | null;
}

/** A create, mapped out by the adapter. */
export interface StemsCreate {
  request: StemsRequest;
  model: StemsModelSpec;
  /** Our id of the task. */
  taskId: string;
  /** Where the upstream is asked to call back (UPSTREAM_CALLBACK_BASE_URL set), for vendors that answer later. */
  callbackUrl?: string;
  /** The clip separated, as a vendor that takes a file or a link takes it (our copy). */
  source: MusicSource;
  /** The vendor's ids of it, on the channel that holds it (a model whose source is `own`). */
  own?: OwnClip;
}

/** One stem a vendor answered: its name (vocals, instrumental, drums, …) and its audio, bytes or a link to fetch at once. */
export interface StemAudio {
  name: string;
  audioUrl?: string;
  audio?: { bytes: Buffer; format: MusicFormat };
}

/** What an upstream says of a stems task; `secrets`: its own ids, taken out of the words a caller reads. */
export type StemsStatus = { state: 'working' } | { state: 'succeeded'; stems: StemAudio[] } | { state: 'failed'; reason: string; secrets: string[] };

/** A create's answer: the stems themselves (a synchronous vendor), or the upstream's task to watch. */
export type StemsAnswer = { made: StemAudio[] } | { upstreamId: string };

/**
 * One stems vendor's protocol: its models, how a split is asked for, and (for a vendor that answers later) how
 * its tasks are asked about. Errors are thrown as the UpstreamClient throws them (busy; refused: auth, account,
 * request; unavailable), an answer without stems as UnusableAnswer. A new vendor is one such class in its
 * folder and a line in `stems-vendors.ts`.
 */
export interface StemsVendor extends RelayVendor<StemsStatus> {
  readonly models: readonly StemsModelSpec[];
  readonly callsBack?: boolean;
  create(account: VendorAccount, create: StemsCreate): Promise<StemsAnswer>;
  query?(account: VendorAccount, upstreamId: string, once: boolean): Promise<StemsStatus>;
}
