import { loadAppConfig } from '../config.js';
import { openDatabase } from '../infra/database/database.js';
import { applyMigrations } from '../infra/database/migrator.js';
import { createRootLogger } from '../infra/logger/app-logger.js';
import { runCli } from './run-cli.js';

/** `npm run db:migrate`: applies pending migrations from prisma/migrations, without the Prisma CLI. */
runCli(async () => {
  const config = loadAppConfig(process.env);
  const root = createRootLogger(config.logLevel);
  const db = await openDatabase(config, root);
  try {
    const applied = await applyMigrations(db.config.databaseUrl!, { info: (m) => root.info(m), warn: (m) => root.warn(m) });
    root.info(applied.length ? `applied ${applied.length} migration(s)` : 'the database is up to date');
  } finally {
    await db.close();
  }
});
