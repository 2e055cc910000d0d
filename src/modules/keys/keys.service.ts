import { randomUUID } from 'node:crypto';
import { Injectable, Logger } from '@nestjs/common';
import { isUUID } from 'class-validator';
import type { KeyCheck } from '../../common/auth/credential.js';
import { AppError } from '../../common/errors/app-error.js';
import { AppConfig } from '../../infra/config/app-config.js';
import type { CreateKeyDto } from './dto/create-key.dto.js';
import type { CreatedKeyDto, KeyDto } from './dto/key.dto.js';
import { KEY_SHAPE, generateKey, keyMatchesHash, prefixOf, secretsEqual } from './key-material.js';
import { type ApiKeyRow, KeysRepository } from './keys.repository.js';

/** Compared against when a prefix is unknown, so a miss costs the same as a hit. */
const DUMMY_HASH = '0'.repeat(64);
/** last_used_at is written at most this often per key, to keep writes off the request path. */
const TOUCH_INTERVAL_MS = 60_000;
const MAX_CACHED_KEYS = 10_000;

@Injectable()
export class KeysService {
  private readonly logger = new Logger(KeysService.name);
  private readonly cache = new Map<string, { row: ApiKeyRow; expiresAt: number }>();
  private readonly touchedAt = new Map<string, number>();

  constructor(
    private readonly keys: KeysRepository,
    private readonly config: AppConfig,
  ) {}

  async createKey(input: CreateKeyDto): Promise<CreatedKeyDto> {
    const material = generateKey();
    const row = await this.keys.createKey({ id: randomUUID(), prefix: material.prefix, keyHash: material.hash, owner: input.owner, name: input.name });
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
    this.cache.delete(row.prefix);
    return toKeyDto(row);
  }

  /** Reads the Authorization header. Never throws for a bad credential: the guard decides per route. */
  async resolveCredential(header: string | undefined): Promise<KeyCheck> {
    if (header === undefined || header.trim() === '') {
      return { kind: 'none', error: new AppError('AUTH_MISSING', 'Authorization header is required: send "Authorization: Bearer <API_KEY>"') };
    }
    const match = /^Bearer +(\S+) *$/i.exec(header);
    if (!match) {
      return { kind: 'rejected', error: new AppError('AUTH_MALFORMED', 'Authorization header must have the form "Bearer <API_KEY>"') };
    }
    const token = match[1];
    if (this.config.adminApiKey && secretsEqual(token, this.config.adminApiKey)) {
      return { kind: 'admin' };
    }
    if (!KEY_SHAPE.test(token)) {
      return { kind: 'rejected', error: new AppError('AUTH_MALFORMED', 'API key is malformed: keys are "mgw_" followed by 48 letters and digits') };
    }
    const row = await this.lookup(prefixOf(token));
    if (!keyMatchesHash(token, row?.keyHash ?? DUMMY_HASH) || !row) {
      return { kind: 'rejected', error: new AppError('AUTH_FAILED', 'API key is not valid') };
    }
    if (row.revokedAt) {
      return { kind: 'rejected', error: new AppError('AUTH_REVOKED', `API key ${row.prefix}… was revoked at ${row.revokedAt.toISOString()}`) };
    }
    this.touch(row.id);
    return { kind: 'key', identity: { owner: row.owner, keyId: row.id } };
  }

  /** Known keys are cached for AUTH_CACHE_TTL_MS, so a revocation reaches every instance within that time. */
  private async lookup(prefix: string): Promise<ApiKeyRow | null> {
    const now = Date.now();
    const cached = this.cache.get(prefix);
    if (cached && cached.expiresAt > now) {
      return cached.row;
    }
    const row = await this.keys.findByPrefix(prefix);
    if (row && this.config.authCacheTtlMs > 0) {
      if (this.cache.size >= MAX_CACHED_KEYS) this.cache.clear();
      this.cache.set(prefix, { row, expiresAt: now + this.config.authCacheTtlMs });
    } else {
      this.cache.delete(prefix);
    }
    return row;
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
