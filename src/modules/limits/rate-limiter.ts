import { readAheadSoon } from '../../common/caches/read-ahead.js';

/** The outcome of counting one request. */
export type RateDecision =
  /** The owner has no rate limit. */
  | { limited: false }
  | { limited: true; allowed: boolean; rpm: number; remaining: number; resetS: number };

/** What the database granted (see mgw_rate_take). */
export interface RateGrant {
  /** The owner's requests per minute; null when it has no rate limit. */
  rpm: number | null;
  granted: number;
  /** The window's count after this grant (requests let through or granted, and refused ones). */
  counted: number;
  windowStart: Date | null;
  resetMs: number | null;
}

export type TakeGrant = (owner: string, want: number, giveBack: number, giveBackWindow: Date | null) => Promise<RateGrant>;

/** An instance's share of one owner's window. */
interface Lease {
  rpm: number | null;
  /** Granted and not used yet. */
  tokens: number;
  /** Used since the last grant (sizes the next one). */
  used: number;
  /** The size of the last grant. */
  granted: number;
  counted: number;
  windowStart: Date | null;
  windowEndsAt: number;
  /** Renewed after this, whatever is left: bounds how long a change of limits may go unseen. */
  expiresAt: number;
  /** The database refused: refuse here until the lease expires, without asking for each request. */
  exhausted: boolean;
}

/** How long an instance uses a grant (and an owner's "no rate limit") before asking again. */
export const LEASE_MS = 1000;
const MAX_WANT = 10_000;

/**
 * A per-owner requests-per-minute limit shared by every instance, without a database write per request.
 * Each instance takes requests from the owner's window in the database in grants (mgw_rate_take): the
 * grant grows with the owner's traffic here but never beyond a sixteenth of what is left, so far from
 * the limit one statement serves many requests, and near it grants are of one request and the count is
 * exact across instances. Unused requests are given back with the next grant. A change of the owner's
 * limits drops the lease at once (`forget`, on a database notification); leases also end after LEASE_MS.
 */
export class RateLimiter {
  private readonly leases = new Map<string, Lease>();
  private readonly renewals = new Map<string, Promise<void>>();
  private readonly waiting = new Map<string, number>();
  /** Renewals put off (topUpSoon), each with what sends it now. */
  private readonly deferred = new Map<string, () => void>();

  constructor(private readonly take: TakeGrant) {}

  async count(owner: string): Promise<RateDecision> {
    for (;;) {
      const now = Date.now();
      const lease = this.leases.get(owner);
      if (lease && now < lease.expiresAt) {
        if (lease.rpm === null) {
          // past half its time: looked at again in the background (a limit set since shows there), so that an
          // owner without a rate limit never waits for it (a few requests a second, a door's callers waiting on
          // their vendor, often left the last quarter of a lease empty, and the next request renewed it on its
          // path), a moment later (off the request that found it aging)
          if (now > lease.expiresAt - LEASE_MS / 2 && !this.renewals.has(owner)) this.topUpSoon(owner, lease);
          return { limited: false };
        }
        if (now < lease.windowEndsAt) {
          if (lease.tokens > 0) {
            lease.tokens--;
            lease.used++;
            // running low, or about to end: ask for more in the background, so no request waits for it
            const ending = now > lease.expiresAt - LEASE_MS / 4;
            if ((lease.tokens <= lease.granted / 4 || ending) && !this.renewals.has(owner)) void this.topUp(owner, lease);
            return this.decision(lease, true, now);
          }
          if (lease.exhausted) return this.decision(lease, false, now);
        }
      }
      this.waiting.set(owner, (this.waiting.get(owner) ?? 0) + 1);
      try {
        await this.renew(owner);
      } finally {
        this.waiting.set(owner, this.waiting.get(owner)! - 1);
        if (this.waiting.get(owner) === 0) this.waiting.delete(owner);
      }
    }
  }

  /** The owner's limits changed: the next request asks the database again. */
  forget(owner: string): void {
    this.leases.delete(owner);
  }

  /**
   * One renewal per owner at a time; requests that arrive meanwhile wait for it. One put off (topUpSoon) goes
   * out now: a request that must wait for it does not wait for its delay too.
   */
  private renew(owner: string): Promise<void> {
    this.deferred.get(owner)?.();
    let renewal = this.renewals.get(owner);
    if (!renewal) {
      renewal = this.renewFromDatabase(owner).finally(() => this.renewals.delete(owner));
      this.renewals.set(owner, renewal);
    }
    return renewal;
  }

  private async renewFromDatabase(owner: string): Promise<void> {
    const previous = this.leases.get(owner);
    const want = Math.min(MAX_WANT, Math.max(this.waiting.get(owner) ?? 1, 2 * (previous?.used ?? 0), 1));
    const giveBack = previous && previous.rpm !== null ? previous.tokens : 0;
    const grant = await this.take(owner, want, giveBack, previous?.windowStart ?? null);
    const now = Date.now();
    this.leases.set(owner, {
      rpm: grant.rpm,
      tokens: grant.granted,
      used: 0,
      granted: grant.granted,
      counted: grant.counted,
      windowStart: grant.windowStart,
      windowEndsAt: grant.resetMs === null ? Infinity : now + grant.resetMs,
      expiresAt: now + LEASE_MS,
      exhausted: grant.rpm !== null && grant.granted === 0,
    });
  }

  /**
   * topUp, READ_AHEAD_DELAY_MS from now (off the request that found the lease aging), marked at once as the
   * owner's renewal; sent at once if a request needs it first (renew). Only for an owner without a limit: a
   * grant's is asked for at once (put off too, and renewed from half its time, the accept bench's 16 teams
   * read lower: performance.md, twelfth round).
   */
  private topUpSoon(owner: string, lease: Lease): void {
    let settle!: () => void;
    const renewal = new Promise<void>((resolve) => (settle = resolve));
    this.renewals.set(owner, renewal);
    const send = readAheadSoon(() => {
      this.deferred.delete(owner);
      if (this.renewals.get(owner) === renewal) this.renewals.delete(owner);
      // forgotten meanwhile (its limits changed): nothing to take for it; else topUp is the renewal from here on
      if (this.leases.get(owner) === lease) void this.topUp(owner, lease);
      settle();
    });
    this.deferred.set(owner, send);
  }

  /**
   * More requests for a lease still in use: added to what is left of it (nothing is given back), and the
   * lease lives on. A failure is left for the next renewal on the request path to meet.
   */
  private async topUp(owner: string, lease: Lease): Promise<void> {
    const renewal = (async () => {
      const want = Math.min(MAX_WANT, Math.max(2 * lease.used, 1));
      const grant = await this.take(owner, want, 0, null);
      if (this.leases.get(owner) !== lease) return; // forgotten meanwhile: the next request asks afresh
      const now = Date.now();
      lease.rpm = grant.rpm;
      lease.tokens += grant.granted;
      lease.granted = grant.granted;
      lease.used = 0;
      lease.counted = grant.counted;
      lease.windowStart = grant.windowStart;
      lease.windowEndsAt = grant.resetMs === null ? Infinity : now + grant.resetMs;
      lease.expiresAt = now + LEASE_MS;
      lease.exhausted = grant.rpm !== null && grant.granted === 0 && lease.tokens === 0;
    })();
    this.renewals.set(owner, renewal.then(() => undefined).catch(() => undefined));
    try {
      await renewal;
    } catch {
      // the database is away: the lease runs out, and a request's renewal reports it
    } finally {
      this.renewals.delete(owner);
    }
  }

  private decision(lease: Lease, allowed: boolean, now: number): RateDecision {
    const rpm = lease.rpm!;
    return { limited: true, allowed, rpm, remaining: Math.max(0, rpm - (lease.counted - lease.tokens)), resetS: Math.max(1, Math.ceil((lease.windowEndsAt - now) / 1000)) };
  }
}
