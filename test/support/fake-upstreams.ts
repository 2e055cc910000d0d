import type { TestServer } from './http-server.js';
import type { VendorCallback } from './vendor-callback.js';

// The fakes' shared knobs and record (FakeUpstream, Misbehaviour). Each vendor's fake is in
// test/support/vendors/<vendor>/ (Kling's expand, video and images in one file).

/** Knobs a test turns to make a fake upstream misbehave. */
export interface Misbehaviour {
  /** Answer the next N create requests "busy" (HTTP 429, Retry-After: 0, or busyAnswer), creating nothing. */
  createBusy: number;
  /** How a busy Kling answers: HTTP status and envelope code (429 and 1302 unless set; Kling also sends 1303 under 200), and its own words if given. */
  busyAnswer?: { status: number; code: number; retryAfter?: string; message?: string };
  /** Create the task, then hold the answer this long (longer than the client waits: an ambiguous create). */
  createHangMs: number;
  /** Luma, Kling: create the task, then answer only once this settles (when the test lets it). */
  createAnswerHeld?: Promise<unknown>;
  /** Refuse creates with this HTTP status and body. */
  createRefusal?: { status: number; body: unknown };
  /** Answer the next N queries with 500. */
  queryErrors: number;
  /** End tasks failed with this message instead of succeeding. */
  failWith?: string;
  /** Queries before a task is done. */
  pollsUntilDone: number;
  /** Luma: serve a result video this many bytes long (the test clip, then zeros), streamed from one small buffer. */
  videoBytes?: number;
  /** Luma: serve each generation's video at the size and length it asked (resolution, aspect_ratio, duration). */
  render?: boolean;
  /** Luma: name result files under this base (a file host of its own) instead of the address it was asked at. */
  resultBase?: string;
  /** Kling: refuse every credential (401, code 1000), as when an account's keys are revoked. */
  rejectAuth?: boolean;
  /** Kling: keep every task processing, whatever pollsUntilDone says, until this is set false. */
  hold?: boolean;
  /** Kling: answer the next N queries (polls) 429 with this Retry-After (and code 1302), as a rate-limited account. */
  pollBusy?: { count: number; retryAfter?: string };
  /** Kling: answer each query this long after it arrives (so two queries of one task at once would overlap). */
  queryDelayMs?: number;
  /** Kling: leave every query signed by this account (access key) unanswered until its client goes away, as a hung upstream. */
  stallAccount?: string;
  /** Music aggregator: make the next N songs, then reset the connection before answering (the create's answer lost). */
  resetAfterCreate?: number;
}

export interface FakeUpstream {
  server: TestServer;
  url: string;
  knobs: Misbehaviour;
  /** Tasks created, by upstream id (Kling: with when; `ended`: finished by `finish`; `calledBack`: its end was called back). */
  created: Map<string, { body: Record<string, unknown>; polls: number; at?: number; ended?: boolean; calledBack?: boolean }>;
  /** Luma, Kling: the callbacks sent to creates' callback_url (each task's end), in order. */
  callbacks?: VendorCallback[];
  /**
   * Luma, Kling: the vendor ends task `id` now, whatever the polls (failed with `failWith` when set, else
   * succeeded), and POSTs its end to the create's callback_url: resolves with that callback once answered.
   */
  finish?(id: string): Promise<VendorCallback | undefined>;
  /** Kling: every query of a task, by upstream id: when, by which account (the JWT's iss), and whether it was answered as processing. */
  queries?: { id: string; at: number; account: string; processing: boolean }[];
  /** Kling: queries that arrived while another query of the same task was still being answered. */
  overlaps?: { id: string; at: number; accounts: string[] }[];
  /** Kling: the tasks of the queries left unanswered by `stallAccount`, as they arrived. */
  stalled?: string[];
  authFailures: string[];
  close(): Promise<void>;
}

/** The knobs of a fake that misbehaves in no way. */
export const fakeDefaults = (): Misbehaviour => ({ createBusy: 0, createHangMs: 0, queryErrors: 0, pollsUntilDone: 2 });

