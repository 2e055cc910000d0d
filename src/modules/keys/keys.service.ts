import { randomUUID } from 'node:crypto';
import { Injectable, Logger } from '@nestjs/common';
import { isUUID } from 'class-validator';
import { LRUCache } from 'lru-cache';
import type { KeyCheck } from '../../common/auth/credential.js';
import { readAheadSoon } from '../../common/caches/read-ahead.js';
import { AppError } from '../../common/errors/app-error.js';
import { AppConfig } from '../../infra/config/app-config.js';
import { MetricsService } from '../../infra/metrics/metrics.service.js';
import type { CreateKeyDto } from './dto/create-key.dto.js';
import type { CreatedKeyDto, KeyDto } from './dto/key.dto.js';
import { readBearer } from './bearer.js';
import { KEY_SHAPE, generateKey, keyMatchesHash, prefixOf, secretsEqual } from './key-material.js';
import { type ApiKeyRow, KeysRepository } from './keys.repository.js';

/** Compared against when a prefix is unknown, so a miss costs the same as a hit. */
const DUMMY_HASH = '0'.repeat(64);
/** last_used_at is written at most this often per key, to keep writes off the request path. */
const TOUCH_INTERVAL_MS = 60_000;
const MAX_CACHED_KEYS = 10_000;
/** The prefixes of the keys not revoked are read again at most this often, AUTH_CACHE_TTL_MS if it is longer. */
const MIN_PREFIXES_TTL_MS = 1000;

@Injectable()
export class KeysService {
  private readonly logger = new Logger(KeysService.name);
  /** Keys found, by prefix, for AUTH_CACHE_TTL_MS (none when it is 0). */
  private readonly known?: LRUCache<string, ApiKeyRow>;
  /**
   * Prefixes looked up and not found, for AUTH_CACHE_TTL_MS too: the same unknown key sent again and again
   * costs one query per that time, and a key created meanwhile on another instance works within it, as a
   * revocation reaches every instance within it. Apart from `known`, so a flood of made-up keys never
   * pushes the real ones out.
   */
  private readonly unknown?: LRUCache<string, true>;
  private readonly touchedAt = new Map<string, number>();
  /** The keys being read again ahead of their cache time's end (refreshAhead), each with the read's own mark. */
  private readonly refreshing = new Map<string, symbol>();
  /**
   * The prefixes of every key not revoked, as read (one query) when a request from a limited address
   * (AuthFailures) first needed them, and again at most once per `prefixesTtlMs`: none is read while no
   * address is limited.
   */
  private prefixes?: { set: Set<string>; readAt: number };
  private readingPrefixes?: Promise<Set<string>>;
  private readonly prefixesTtlMs: number;

  constructor(
    private readonly keys: KeysRepository,
    private readonly config: AppConfig,
    private readonly metrics: MetricsService,
  ) {
    if (config.authCacheTtlMs > 0) {
      this.known = new LRUCache({ max: MAX_CACHED_KEYS, ttl: config.authCacheTtlMs });
      this.unknown = new LRUCache({ max: MAX_CACHED_KEYS, ttl: config.authCacheTtlMs });
    }
    this.prefixesTtlMs = Math.max(config.authCacheTtlMs, MIN_PREFIXES_TTL_MS);
  }

  async createKey(input: CreateKeyDto): Promise<CreatedKeyDto> {
    const material = generateKey();
    const row = await this.keys.createKey({ id: randomUUID(), prefix: material.prefix, keyHash: material.hash, owner: input.owner, name: input.name });
    this.unknown?.delete(row.prefix);
    this.prefixes?.set.add(row.prefix);
    return { id: row.id, key: material.key, prefix: row.prefix, owner: row.owner, name: row.name, created_at: row.createdAt.toISOString() };
  }

  /** On a fresh embedded database, a first key lets a newcomer try the API at once. */
  async createFirstKeyIfNone(): Promise<CreatedKeyDto | null> {
    if ((await this.keys.countKeys()) > 0) {
      return null;
    }
    return this.createKey({ owner: 'default', name: 'first key (created at start)' });
  }

  async listKeys(owner?: string): Promise<KeyDto[]> {
    return (await this.keys.listKeys(owner)).map(toKeyDto);
  }

  async revokeKey(id: string): Promise<KeyDto> {
    const row = isUUID(id) ? await this.keys.markRevoked(id, new Date()) : null;
    if (!row) {
      throw new AppError('NOT_FOUND', `No API key with id ${id}`);
    }
    this.known?.delete(row.prefix);
    this.refreshing.delete(row.prefix); // a read begun before the revocation must not put the key back
    return toKeyDto(row);
  }

  /**
   * Reads the Authorization header. Never throws for a bad credential: the guard decides per route.
   * `fromLimitedAddress`: the request comes from an address past AUTH_FAILURE_LIMIT, whose refused
   * credentials must cost no lookup: a key whose prefix is neither cached nor among the keys not revoked
   * (read at most once per `prefixesTtlMs`) is refused from memory; any other is checked as always.
   * `use`: the key is being used (its last use is recorded); false where it is only recognised, then refused.
   */
  async resolveCredential(header: string | undefined, fromLimitedAddress = false, use = true): Promise<KeyCheck> {
    const bearer = readBearer(header, 'API_KEY');
    if ('kind' in bearer) return bearer;
    const { token } = bearer;
    if (this.config.adminApiKey && secretsEqual(token, this.config.adminApiKey)) {
      return { kind: 'admin' };
    }
    if (!KEY_SHAPE.test(token)) {
      return { kind: 'rejected', error: new AppError('AUTH_MALFORMED', 'API key is malformed: keys are "mgw_" followed by 48 letters and digits') };
    }
    const prefix = prefixOf(token);
    if (fromLimitedAddress && !(await this.mayExist(prefix))) {
      return { kind: 'rejected', error: new AppError('AUTH_FAILED', 'API key is not valid') };
    }
    const row = await this.lookup(prefix);
    if (!keyMatchesHash(token, row?.keyHash ?? DUMMY_HASH) || !row) {
      return { kind: 'rejected', error: new AppError('AUTH_FAILED', 'API key is not valid') };
    }
    if (row.revokedAt) {
      return { kind: 'rejected', error: new AppError('AUTH_REVOKED', `API key ${row.prefix}… was revoked at ${row.revokedAt.toISOString()}`) };
    }
    if (use) this.touch(row.id);
    return { kind: 'key', identity: { owner: row.owner, keyId: row.id } };
  }

  /**
   * Known keys are cached for AUTH_CACHE_TTL_MS, so a revocation reaches every instance within that time;
   * unknown prefixes too, so a key created on another instance works here within that time.
   */
  private async lookup(prefix: string): Promise<ApiKeyRow | null> {
    const cached = this.known?.get(prefix);
    if (cached) {
      this.refreshAhead(prefix);
      return cached;
    }
    if (this.unknown?.has(prefix)) return null;
    this.metrics.apiKeyReads.inc({ when: 'request' });
    const row = await this.keys.findByPrefix(prefix);
    if (row) this.known?.set(prefix, row);
    else this.unknown?.set(prefix, true);
    return row;
  }

  /**
   * A key in use is read again in the background once half its cache time has passed, so that its requests
   * do not wait for that read (one in every AUTH_CACHE_TTL_MS of a busy key's requests did, on its path).
   * The read goes out READ_AHEAD_DELAY_MS later, off the request that found the row aging. The cached row
   * still ends at its own time if the read fails or hangs, and a row read before a revocation is at most
   * AUTH_CACHE_TTL_MS older than it: a revoked key still stops within that time.
   */
  private refreshAhead(prefix: string): void {
    const known = this.known!;
    if (this.refreshing.has(prefix) || known.getRemainingTTL(prefix) > this.config.authCacheTtlMs / 2) return;
    const mark = Symbol(prefix);
    this.refreshing.set(prefix, mark);
    readAheadSoon(() => this.readAgain(prefix, mark));
  }

  private readAgain(prefix: string, mark: symbol): void {
    const known = this.known!;
    if (this.refreshing.get(prefix) !== mark) return; // revoked here meanwhile
    this.metrics.apiKeyReads.inc({ when: 'ahead' });
    this.keys
      .findByPrefix(prefix)
      .then(
        (row) => {
          if (this.refreshing.get(prefix) !== mark) return; // revoked here meanwhile
          if (row) known.set(prefix, row);
          else known.delete(prefix);
        },
        // the cached row ends at its time; a request after it reads the key itself, and answers the error if any
        (err: unknown) => this.logger.debug(`could not read key ${prefix}… again ahead of its cache time: ${String(err)}`),
      )
      .finally(() => {
        if (this.refreshing.get(prefix) === mark) this.refreshing.delete(prefix);
      });
  }

  /**
   * Whether a key with `prefix` may exist, from memory: found or not found lately (the caches), or else
   * among the prefixes of the keys not revoked. A key made on another instance since they were read is
   * not there yet: it is refused here for `prefixesTtlMs` at most (only to a limited address).
   */
  private async mayExist(prefix: string): Promise<boolean> {
    if (this.known?.has(prefix)) return true;
    if (this.unknown?.has(prefix)) return false;
    return (await this.activePrefixes()).has(prefix);
  }

  private activePrefixes(): Promise<Set<string>> | Set<string> {
    if (this.prefixes && Date.now() - this.prefixes.readAt < this.prefixesTtlMs) return this.prefixes.set;
    // one read at a time, whoever asks meanwhile waits for it
    this.readingPrefixes ??= (async () => {
      const readAt = Date.now();
      const set = new Set(await this.keys.activePrefixes());
      this.prefixes = { set, readAt };
      return set;
    })().finally(() => (this.readingPrefixes = undefined));
    return this.readingPrefixes;
  }

  private touch(id: string): void {
    const now = Date.now();
    if (now - (this.touchedAt.get(id) ?? 0) < TOUCH_INTERVAL_MS) return;
    if (this.touchedAt.size >= MAX_CACHED_KEYS) this.touchedAt.clear();
    this.touchedAt.set(id, now);
    this.keys.touchLastUsed(id, new Date(now)).catch((err: unknown) => this.logger.warn(`could not record key use: ${String(err)}`));
  }
}

function toKeyDto(row: ApiKeyRow): KeyDto {
  return {
    id: row.id,
    prefix: row.prefix,
    owner: row.owner,
    name: row.name,
    created_at: row.createdAt.toISOString(),
    last_used_at: row.lastUsedAt?.toISOString() ?? null,
    revoked_at: row.revokedAt?.toISOString() ?? null,
  };
}
