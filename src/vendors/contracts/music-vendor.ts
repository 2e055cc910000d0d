import type { RelayVendor } from './relay.js';
import { type VendorAccount } from './vendor.js';

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
  /** A continuation: the vendor's id of the clip continued, the second it is cut at, and whether the clip was an upload. */
  continues: { upstreamClipId: string | null; atS: number | null; upload: boolean } | null;
}

/** What a vendor says of one take of a finished song. */
export interface MusicClipStatus {
  /** Its id at the vendor (a later continuation names it). */
  upstreamId?: string;
  audioUrl?: string;
  coverUrl?: string;
}

/** What an upstream says of a music task; `secrets`: its own ids, never shown to a caller (the provider takes them out of the reason). */
export type MusicStatus =
  | { state: 'working' }
  | { state: 'succeeded'; clips: MusicClipStatus[] }
  | { state: 'failed'; reason: string; secrets: string[] };

/**
 * One music vendor's protocol: how a song is asked for, and how its tasks are asked about (one at a time,
 * and several at once where the vendor can). The relay provider routes by the channel's protocol to its
 * adapter; a new vendor is one such file and a line in `music-vendors.ts`. Errors are thrown as the
 * UpstreamClient throws them (busy, refused: auth, account, request; unavailable), an answer without a task
 * as UnusableAnswer.
 */
export interface MusicVendor extends RelayVendor<MusicStatus> {
  /** Sends the request; answers the upstream's task id. */
  create(account: VendorAccount, request: MusicRequest, callbackUrl: string | undefined): Promise<string>;
  /** Asks about one task (`once`: one try with a short time limit, as the poller asks). */
  query(account: VendorAccount, upstreamId: string, once: boolean): Promise<MusicStatus>;
  /**
   * Asks about several at once: the statuses of those the answer lists (a task it leaves out may have been
   * lost: its step asks for it alone). Null when the account has no such query: ask one at a time.
   */
  queryMany?(account: VendorAccount, upstreamIds: string[]): Promise<Map<string, MusicStatus> | null>;
}
