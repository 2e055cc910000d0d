// One real PostgreSQL for the whole run: the server of DATABASE_URL when it is set, otherwise an
// embedded one in a fresh temporary directory. Each test file creates its own database on it
// (test-app.ts). Jest loads this file outside its module system, so it uses the build in dist/
// (`npm test` builds first).
import { chmod, mkdtemp } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { startEmbeddedPostgres } from '../../dist/infra/database/embedded-postgres.js';

export default async function globalSetup() {
  if (process.env.DATABASE_URL) {
    const url = new URL(process.env.DATABASE_URL);
    url.pathname = '';
    process.env.TEST_PG_SERVER_URL = url.toString().replace(/\/$/, '');
    return;
  }
  const dir = await mkdtemp(path.join(tmpdir(), 'mgw-test-'));
  await chmod(dir, 0o755); // as root the cluster runs as the postgres user, which must reach it
  const db = await startEmbeddedPostgres({
    dir: path.join(dir, 'pg'),
    port: await freePort(),
    database: 'postgres',
    log: { info: () => undefined, debug: () => undefined },
  });
  process.env.TEST_PG_SERVER_URL = db.url.replace(/\/postgres$/, '');
  globalThis.__TEST_PG__ = db;
}

function freePort() {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
}
