import { Injectable, Logger, type OnApplicationShutdown, type OnModuleInit } from '@nestjs/common';
import { PrismaPg } from '@prisma/adapter-pg';
import pg from 'pg';
import { PrismaClient } from '../../generated/prisma/client.js';
import { AppConfig } from '../config/app-config.js';
import { SealingKeys } from '../crypto/sealing-keys.js';
import { KEPT_CONNECTIONS } from '../database/kept-connections.js';
import { applyMigrations } from '../database/migrator.js';
import { sealStoredSecrets } from '../database/secret-sealing.js';
import { Tracing } from '../tracing/tracing.service.js';

/**
 * The Prisma client over node-postgres. Before the first query it applies pending migrations,
 * so every start (and every instance) runs on the current schema, then proves that the sealing key opens
 * every stored secret (sealing those from before, and those under a previous key, again: sealStoredSecrets).
 * Only repositories inject it.
 */
@Injectable()
export class PrismaService extends PrismaClient implements OnModuleInit, OnApplicationShutdown {
  private readonly logger = new Logger(PrismaService.name);

  /**
   * The node-postgres pool under the client, for the few statements on the request path that repositories
   * write as one round trip of SQL (see TaskRepository.insertTasks); Prisma runs on the same connections.
   * With tracing on, its queries are spans (Tracing.tracePool).
   */
  readonly pool: pg.Pool;
  private readonly rawPool: pg.Pool;

  constructor(
    private readonly config: AppConfig,
    tracing: Tracing,
    private readonly sealing: SealingKeys,
  ) {
    const pool = new pg.Pool({ connectionString: requireUrl(config), max: config.databasePoolSize, connectionTimeoutMillis: config.databasePoolTimeoutMs, ...KEPT_CONNECTIONS });
    super({
      adapter: new PrismaPg(pool),
      // A transaction that cannot get a connection in time fails (P2028: 503 with Retry-After) instead of waiting for ever.
      transactionOptions: { maxWait: config.databasePoolTimeoutMs, timeout: Math.max(15_000, config.databasePoolTimeoutMs * 3) },
    });
    this.rawPool = pool;
    this.pool = tracing.tracePool(pool);
    // an idle connection that breaks (the database restarts) is reported here; queries then reconnect
    pool.on('error', (err) => this.logger.warn(`an idle database connection failed: ${err.message}`));
  }

  async onModuleInit(): Promise<void> {
    // on one of the pool's connections, which it keeps for the queries that follow (one process start of
    // PostgreSQL's each, rather than a connection of their own)
    await applyMigrations(this.rawPool, { info: (m) => this.logger.log(m), warn: (m) => this.logger.warn(m) });
    const sealed = await sealStoredSecrets(this.rawPool, this.sealing);
    if (sealed.sealed > 0) this.logger.log(`sealed ${sealed.sealed} stored secret(s) kept in plain text until now, with ${this.sealing.source}`);
    // during a rotation's first rollout CHANNEL_SECRET_KEY_PREVIOUS holds the new key and nothing is sealed again: nothing to say then
    if (sealed.resealed > 0) this.logger.log(`sealed ${sealed.resealed} stored secret(s) again with ${this.sealing.source} (they were under CHANNEL_SECRET_KEY_PREVIOUS): every stored secret is now sealed with it; CHANNEL_SECRET_KEY_PREVIOUS can go once every instance runs with this key and has started once`);
    await this.$connect();
  }

  /** Last of all at shutdown: workers (stopped in onModuleDestroy) may still finish their step first. */
  async onApplicationShutdown(): Promise<void> {
    await this.$disconnect();
    await this.rawPool.end().catch(() => undefined);
  }
}

function requireUrl(config: AppConfig): string {
  if (!config.databaseUrl) {
    throw new Error('AppConfig.databaseUrl must be set (the embedded database is started before the application)');
  }
  return config.databaseUrl;
}
