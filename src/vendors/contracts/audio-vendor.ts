import type { RelayVendor } from './relay.js';
import { type VendorAccount } from './vendor.js';

/** What a vendor says of a clip uploaded by URL: still being read, ready with what it found, or refused. */
export type AudioUploadStatus =
  | { state: 'working' }
  | { state: 'ready'; facts: { format: string; durationS: number; sizeBytes: number; sha256: string } }
  | { state: 'failed'; reason: string };

/**
 * One vendor's upload of a clip by URL (the clip then lives on that account: a music continuation of it goes
 * to the same channel). The relay provider routes by the channel's protocol to its adapter; a new vendor is
 * one such file and a line in `audio-vendors.ts`. Errors are thrown as the UpstreamClient throws them, an
 * answer without an upload as UnusableAnswer.
 */
export interface AudioVendor extends RelayVendor<AudioUploadStatus> {
  /** Hands the vendor the URL; answers its id of the upload. */
  create(account: VendorAccount, url: string): Promise<string>;
  /** Asks about one upload (`once`: one try with a short time limit, as the poller asks). */
  query(account: VendorAccount, upstreamId: string, once: boolean): Promise<AudioUploadStatus>;
}
