import type { VendorBilled } from './vendor-billing.js';
import type { VendorAccount } from './vendor.js';

/**
 * What every operation's vendor says of an upstream task: still working, failed (its words), or its own end;
 * an end may say what the vendor billed for it.
 */
export type RelayStatus = { state: 'working' } | { state: 'failed'; reason: string; billed?: VendorBilled } | { state: string; billed?: VendorBilled };

/**
 * The contract every operation's vendor adapter honours for the relay path (each operation's adapter contract
 * extends it): the protocol it speaks and its poll floor (both read from its vendor's descriptor), and, for a
 * vendor that answers later, how its tasks are asked about and cancelled.
 */
export interface RelayVendor<S> {
  readonly protocol: string;
  readonly minPollS: number;
  query?(account: VendorAccount, upstreamId: string, once: boolean): Promise<S>;
  /** Several tasks in one request; null when the account refuses it (its tasks are then asked one by one). */
  queryMany?(account: VendorAccount, upstreamIds: string[]): Promise<Map<string, S> | null>;
  cancel?(account: VendorAccount, upstreamId: string): Promise<void>;
}
