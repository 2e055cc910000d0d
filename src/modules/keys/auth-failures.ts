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
 * Failed authentications per client address, in memory (each instance counts its own: a failure costs no
 * write anywhere). An address that made AUTH_FAILURE_LIMIT of them within AUTH_FAILURE_WINDOW_S (the window
 * opens with its first failure) is refused until the window ends, whatever credential it sends, a valid
 * one included: a guesser learns nothing more from it, and its requests cost no lookup. IPv6 clients are
 * counted by their /64, which one host usually holds whole. Bounded: MAX_ADDRESSES, least recently seen
 * forgotten first.
 */
@Injectable()
export class AuthFailures {
  private readonly logger = new Logger('Auth');
  private readonly windows = new LRUCache<string, Window>({ max: MAX_ADDRESSES });
  private readonly limit: number;
  private readonly windowMs: number;
  private lastFailureAt = Number.NEGATIVE_INFINITY;

  constructor(config: AppConfig) {
    this.limit = config.authFailures.limit;
    this.windowMs = config.authFailures.windowS * 1000;
  }

  /** Seconds until `address` may authenticate again; 0 when it may now. */
  retryAfterS(address: string | undefined): number {
    // nothing refused within a window's length (the usual case): no address can be limited, none is parsed
    if (this.limit === 0 || Date.now() - this.lastFailureAt >= this.windowMs) return 0;
    const window = this.windows.get(clientKey(address));
    if (!window || window.failures < this.limit) return 0;
    const leftMs = window.endsAt - Date.now();
    return leftMs > 0 ? Math.ceil(leftMs / 1000) : 0;
  }

  /** Counts a refused credential from `address`. */
  record(address: string | undefined): void {
    if (this.limit === 0) return;
    const key = clientKey(address);
    const now = Date.now();
    this.lastFailureAt = now;
    let window = this.windows.get(key);
    if (!window || window.endsAt <= now) {
      window = { failures: 0, endsAt: now + this.windowMs, limited: false };
      this.windows.set(key, window);
    }
    window.failures++;
    if (window.failures >= this.limit && !window.limited) {
      window.limited = true;
      this.logger.warn({ msg: 'too many failed authentications: address refused until its window ends', address: key, failures: window.failures, retry_after_s: Math.ceil((window.endsAt - now) / 1000) });
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
