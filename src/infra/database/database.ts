import path from 'node:path';
import type { Logger } from 'pino';
import type { AppConfig } from '../config/app-config.js';
import { startEmbeddedPostgres } from './embedded-postgres.js';

export interface OpenDatabase {
  /** The configuration with `databaseUrl` set. */
  config: AppConfig;
  embedded: boolean;
  close(): Promise<void>;
}

export const EMBEDDED_DATABASE_NAME = 'media_gateway';

/** Uses DATABASE_URL when set; otherwise starts (or joins) the embedded PostgreSQL under DATA_DIR. */
export async function openDatabase(config: AppConfig, logger: Logger): Promise<OpenDatabase> {
  if (config.databaseUrl) {
    return { config, embedded: false, close: async () => undefined };
  }
  const db = await startEmbeddedPostgres({
    dir: path.join(config.dataDir, 'pg'),
    port: config.embeddedPgPort,
    database: EMBEDDED_DATABASE_NAME,
    log: { info: (m) => logger.info(m), debug: (m) => logger.debug(m) },
  });
  return { config: config.with({ databaseUrl: db.url, soleInstance: true }), embedded: true, close: () => db.stop() };
}
