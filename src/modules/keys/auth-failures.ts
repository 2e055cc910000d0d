import { randomUUID } from 'node:crypto';
import { type BeforeApplicationShutdown, Injectable, Logger, type OnModuleInit } from '@nestjs/common';
import ipaddr from 'ipaddr.js';
import { LRUCache } from 'lru-cache';
import { AppConfig } from '../../infra/config/app-config.js';
import { NotificationsService } from '../../infra/database/notifications.service.js';
import { AUTH_FAILURES_CHANNEL, KeysRepository } from './keys.repository.js';

/** Addresses remembered at once: past it the least recently seen is forgotten (its count starts again). */
const MAX_ADDRESSES = 100_000;
/** An instance tells the others of the failures it counted at most this often, in one statement. */
const SHARE_EVERY_MS = 200;
/** A notification's payload stays under PostgreSQL's 8,000 bytes. */
const MAX_MESSAGE_CHARS = 7000;
/** An address that long (only an unparsed one: a proxy's X-Forwarded-For) is counted here but not shared. */
const MAX_SHARED_ADDRESS_CHARS = 100;

interface Window {
  failures: number;
  /** When the window that began with the first failure ends (ms, Date.now()). */
  endsAt: number;
  /** Set once the address reached the limit in this window (it is logged once). */
  limited: boolean;
}

/** What one instance tells the others: the failures it counted per address since it last told them. */
interface SharedFailures {
  from: string;
  failures: Record<string, number>;
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
 * Counted across instances without a round trip per request: each instance counts in memory, and tells
 * the others (PostgreSQL NOTIFY on AUTH_FAILURES_CHANNEL, heard on the LISTEN connection every API instance
 * keeps) of the failures it counted from addresses not limited yet, batched every SHARE_EVERY_MS: one
 * statement for all addresses, none for an address once it is limited. So an address reaches the limit on
 * every instance within a fraction of a second of reaching it over all of them; while an instance's LISTEN
 * connection is down it counts its own only. IPv6 clients are counted by their /64, which one host usually
 * holds whole. Bounded: MAX_ADDRESSES, least recently seen forgotten first.
 */
@Injectable()
export class AuthFailures implements OnModuleInit, BeforeApplicationShutdown {
  private readonly logger = new Logger('Auth');
  private readonly windows: FailureWindows;
  private readonly limit: number;
  /** Tells this instance's notifications from the others'. */
  private readonly instance = randomUUID();
  /** Failures counted here and not told yet, by address. */
  private readonly unshared = new Map<string, number>();
  private shareTimer?: NodeJS.Timeout;

  constructor(
    private readonly config: AppConfig,
    private readonly keys: KeysRepository,
    private readonly notifications: NotificationsService,
  ) {
    this.limit = config.authFailures.limit;
    this.windows = new FailureWindows(this.limit, config.authFailures.windowS);
  }

  async onModuleInit(): Promise<void> {
    if (this.limit > 0 && this.config.runsApi) await this.notifications.listen(AUTH_FAILURES_CHANNEL, (payload) => this.hear(payload));
  }

  beforeApplicationShutdown(): void {
    clearTimeout(this.shareTimer);
    this.shareTimer = undefined;
  }

  /** Seconds until `address`'s window ends, if it is limited; 0 when it is not. */
  retryAfterS(address: string | undefined): number {
    return this.windows.retryAfterS(address);
  }

  /** Counts a refused credential from `address`. */
  record(address: string | undefined): void {
    if (this.limit === 0) return;
    const key = clientKey(address);
    if (!this.add(key, 1) && key.length <= MAX_SHARED_ADDRESS_CHARS) this.share(key);
  }

  /** Adds `failures` to `key`'s window, and logs the address once per window, when it is limited. Whether it was limited before. */
  private add(key: string, failures: number): boolean {
    const { wasLimited, limited } = this.windows.add(key, failures);
    if (limited) {
      this.logger.warn({ msg: 'too many failed authentications: failed credentials from the address answered 429 until its window ends', address: key, failures: limited.failures, retry_after_s: Math.ceil((limited.endsAt - Date.now()) / 1000) });
    }
    return wasLimited;
  }

  private share(key: string): void {
    this.unshared.set(key, (this.unshared.get(key) ?? 0) + 1);
    if (this.shareTimer) return;
    this.shareTimer = setTimeout(() => this.publish(), SHARE_EVERY_MS);
    this.shareTimer.unref();
  }

  /** Tells the other instances what was counted here since the last time, in as few notifications as fit. */
  private publish(): void {
    this.shareTimer = undefined;
    const messages: string[] = [];
    let failures: Record<string, number> = {};
    let chars = 0;
    for (const [key, count] of this.unshared) {
      const entryChars = key.length + 16;
      if (chars > 0 && chars + entryChars > MAX_MESSAGE_CHARS) {
        messages.push(JSON.stringify({ from: this.instance, failures } satisfies SharedFailures));
        failures = {};
        chars = 0;
      }
      failures[key] = count;
      chars += entryChars;
    }
    messages.push(JSON.stringify({ from: this.instance, failures } satisfies SharedFailures));
    this.unshared.clear();
    this.keys.publishFailures(messages).catch((err: unknown) => this.logger.warn(`could not tell the other instances of failed authentications: ${String(err)}`));
  }

  /** Another instance's failures, counted here as if they were this one's. */
  private hear(payload: string): void {
    let message: Partial<SharedFailures>;
    try {
      message = JSON.parse(payload) as Partial<SharedFailures>;
    } catch {
      return;
    }
    if (message.from === this.instance || typeof message.failures !== 'object' || message.failures === null) return;
    for (const [key, count] of Object.entries(message.failures)) {
      if (Number.isInteger(count) && count > 0) this.add(key, Math.min(count, this.limit));
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
