import { rm } from 'node:fs/promises';
import { admin } from './global-setup.mjs';

export default async function globalTeardown() {
  // on a server of DATABASE_URL the template stays otherwise; an embedded one goes with its cluster
  if (!globalThis.__TEST_PG__ && process.env.TEST_PG_TEMPLATE) {
    await admin(process.env.TEST_PG_SERVER_URL, `ALTER DATABASE ${process.env.TEST_PG_TEMPLATE} WITH IS_TEMPLATE false`);
    await admin(process.env.TEST_PG_SERVER_URL, `DROP DATABASE IF EXISTS ${process.env.TEST_PG_TEMPLATE} WITH (FORCE)`);
  }
  await globalThis.__TEST_PG__?.stop();
  if (process.env.TEST_CACHE_DIR) await rm(process.env.TEST_CACHE_DIR, { recursive: true, force: true });
}
