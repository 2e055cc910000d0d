import type { TestServer } from '../http-server.js';
import type { VendorCallback } from '../vendor-callback.js';

/**
 * Fakes of the video vendors the gateway relays to besides Luma, each from its documented shapes: Kling's
 * video API (no official Node SDK) and Runway's API (driven with `@runwayml/sdk` in a test to prove it).
 * Each renders the MP4 its task asked for (size and length), so a test can check what the gateway stored.
 */
export interface FakeVideoVendor {
  server: TestServer;
  url: string;
  /** Creates received, by the vendor's task id: the path they came to and the body as sent (`ended`: finished by `finish`; `calledBack`: its end was called back). */
  created: Map<string, { path: string; body: Record<string, unknown>; polls: number; size: string; seconds: number; deleted?: boolean; ended?: boolean; calledBack?: boolean }>;
  /**
   * `stall`: its tasks stay in progress for ever (until deleted, where the vendor can). Kling's only:
   * `createBusy` creates answered HTTP 200 with code 1303 (its concurrency limit) before it takes one;
   * `resetAfterCreate` creates made, their connection then reset before any answer; `createDelayMs`
   * how long a create is held before it is made; `createInArrears` creates refused with HTTP 429 and code
   * 1102 (its resource pack exhausted: not busy, the account is out of credit). `billMultiplier`: the billed
   * figure a vendor that reports one (Kling, Seedance, Wan) gives for an ended task is this many times its own
   * (2: it bills twice what the task took).
   */
  knobs: { pollsUntilDone: number; failWith?: string; failCode?: string; stall?: boolean; createBusy?: number; resetAfterCreate?: number; createDelayMs?: number; createInArrears?: boolean; billMultiplier?: number };
  /** Create requests received (answered or not). */
  createRequests?: number;
  /** Kling, Seedance: the callbacks sent to creates' callback_url (each task's end), in order. */
  callbacks?: VendorCallback[];
  /**
   * Kling, Seedance: the vendor ends task `id` now, whatever the polls and `stall` (failed with `failWith`
   * when set, else succeeded), and POSTs its end to the create's callback_url: resolves with that callback once answered.
   */
  finish?(id: string): Promise<VendorCallback | undefined>;
  authFailures: string[];
  close(): Promise<void>;
}
