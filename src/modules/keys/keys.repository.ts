import { Injectable } from '@nestjs/common';
import type { ApiKey } from '../../generated/prisma/client.js';
import { PrismaService } from '../../infra/prisma/prisma.service.js';

export type ApiKeyRow = ApiKey;

/** Where each instance tells the others of the failed authentications it counted (AuthFailures). */
export const AUTH_FAILURES_CHANNEL = 'mgw_auth_failures';

@Injectable()
export class KeysRepository {
  constructor(private readonly prisma: PrismaService) {}

  createKey(data: { id: string; prefix: string; keyHash: string; owner: string; name: string }): Promise<ApiKeyRow> {
    return this.prisma.apiKey.create({ data });
  }

  findByPrefix(prefix: string): Promise<ApiKeyRow | null> {
    return this.prisma.apiKey.findUnique({ where: { prefix } });
  }

  /** The prefixes of every key not revoked (12 characters each). */
  async activePrefixes(): Promise<string[]> {
    const rows = await this.prisma.apiKey.findMany({ where: { revokedAt: null }, select: { prefix: true } });
    return rows.map((row) => row.prefix);
  }

  /** Sends each of `messages` on AUTH_FAILURES_CHANNEL, in one statement. */
  async publishFailures(messages: string[]): Promise<void> {
    await this.prisma.pool.query(`SELECT pg_notify('${AUTH_FAILURES_CHANNEL}', m) FROM unnest($1::text[]) AS m`, [messages]);
  }

  listKeys(owner?: string): Promise<ApiKeyRow[]> {
    return this.prisma.apiKey.findMany({ where: owner ? { owner } : {}, orderBy: [{ createdAt: 'desc' }, { id: 'asc' }] });
  }

  countKeys(): Promise<number> {
    return this.prisma.apiKey.count();
  }

  /** Sets revoked_at once; revoking again keeps the first time. Null when there is no such key. */
  async markRevoked(id: string, at: Date): Promise<ApiKeyRow | null> {
    await this.prisma.apiKey.updateMany({ where: { id, revokedAt: null }, data: { revokedAt: at } });
    return this.prisma.apiKey.findUnique({ where: { id } });
  }

  async touchLastUsed(id: string, at: Date): Promise<void> {
    await this.prisma.apiKey.update({ where: { id }, data: { lastUsedAt: at } });
  }
}
