import { Injectable, Logger } from '@nestjs/common';
import ipaddr from 'ipaddr.js';
import { LRUCache } from 'lru-cache';
import { AppConfig } from '../../infra/config/app-config.js';

/** Addresses remembered at once: past it the least recently seen is forgotten (its count starts again). */
const MAX_ADDRESSES = 100_000;

interface Window {
  failures: number;
  /** When the window that began with the first failure ends (ms, Date.now()). */
  endsAt: number;
  /** Set once the address reached the limit in this window (it is logged once). */
  limited: boolean;
}

/**
 * The counting rules, in memory and nothing else: failures per address in windows of `windowS` opened by
 * an address's first failure; an address with `limit` of them in its window is limited until it ends.
 */
export class FailureWindows {
  private readonly windows = new LRUCache<string, Window>({ max: MAX_ADDRESSES });
  private readonly windowMs: number;
  private lastFailureAt = Number.NEGATIVE_INFINITY;

  constructor(private readonly limit: number, windowS: number) {
    this.windowMs = windowS * 1000;
  }

  /** Seconds until `address`'s window ends, if it is limited; 0 when it is not. */
  retryAfterS(address: string | undefined): number {
    // nothing refused within a window's length (the usual case): no address can be limited, none is parsed
    if (this.limit === 0 || Date.now() - this.lastFailureAt >= this.windowMs) return 0;
    const window = this.windows.get(clientKey(address));
    if (!window || window.failures < this.limit) return 0;
    const leftMs = window.endsAt - Date.now();
    return leftMs > 0 ? Math.ceil(leftMs / 1000) : 0;
  }

  /**
   * Adds `failures` to the window of `key` (a clientKey), opening one if none is open: whether the address
   * was limited before, and, when these made it limited, its window (once per window).
   */
  add(key: string, failures: number): { wasLimited: boolean; limited?: Window } {
    const now = Date.now();
    this.lastFailureAt = now;
    let window = this.windows.get(key);
    if (!window || window.endsAt <= now) {
      window = { failures: 0, endsAt: now + this.windowMs, limited: false };
      this.windows.set(key, window);
    }
    const wasLimited = window.failures >= this.limit;
    window.failures += failures;
    if (window.failures < this.limit || window.limited) return { wasLimited };
    window.limited = true;
    return { wasLimited, limited: window };
  }
}

/**
 * Failed authentications per client address. An address that made AUTH_FAILURE_LIMIT of them within
 * AUTH_FAILURE_WINDOW_S (the window opens with its first failure) is limited until the window ends: the
 * guard refuses its further failed credentials with 429 (and finds them out without a database lookup),
 * while its valid keys and the admin key are served as always. Failures past the limit are counted but
 * do not extend the window: a client that keeps failing is told the same end (Retry-After), and once it
 * has waited it is answered for what it sends again (its next refusals 401, saying why) rather than kept
 * out for as long as it retried too early; nothing a valid key does depends on it.
 *
 * In memory: each instance counts its own (a failure costs no write anywhere). IPv6 clients are counted by
 * their /64, which one host usually holds whole. Bounded: MAX_ADDRESSES, least recently seen forgotten first.
 */
@Injectable()
export class AuthFailures {
  private readonly logger = new Logger('Auth');
  private readonly windows: FailureWindows;
  private readonly limit: number;

  constructor(config: AppConfig) {
    this.limit = config.authFailures.limit;
    this.windows = new FailureWindows(this.limit, config.authFailures.windowS);
  }

  /** Seconds until `address`'s window ends, if it is limited; 0 when it is not. */
  retryAfterS(address: string | undefined): number {
    return this.windows.retryAfterS(address);
  }

  /** Counts a refused credential from `address`. */
  record(address: string | undefined): void {
    if (this.limit === 0) return;
    const key = clientKey(address);
    const { limited } = this.windows.add(key, 1);
    if (limited) {
      this.logger.warn({ msg: 'too many failed authentications: failed credentials from the address answered 429 until its window ends', address: key, failures: limited.failures, retry_after_s: Math.ceil((limited.endsAt - Date.now()) / 1000) });
    }
  }
}

/** The address counted: IPv4 (an IPv4-mapped IPv6 address as its IPv4), or an IPv6 address's /64. */
export function clientKey(address: string | undefined): string {
  if (!address) return 'unknown';
  try {
    const parsed = ipaddr.process(address);
    if (parsed.kind() === 'ipv4') return parsed.toString();
    const parts = (parsed as ipaddr.IPv6).parts.slice(0, 4);
    return `${new ipaddr.IPv6([...parts, 0, 0, 0, 0]).toString()}/64`;
  } catch {
    return address;
  }
}
