// One real PostgreSQL for the whole run: the server of DATABASE_URL when it is set, otherwise an
// embedded one in a fresh temporary directory. Each test file creates its own databases on it
// (test-app.ts): empty ones, or copies of a template made here once, with every migration and the job
// queue's schema applied (what each start of the service would otherwise do again). Jest loads this file
// outside its module system, so it uses the build in dist/ (`npm test` builds first).
import { randomBytes } from 'node:crypto';
import { chmod, mkdtemp } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pg from 'pg';
import PgBoss from 'pg-boss';
import { startEmbeddedPostgres } from '../../dist/infra/database/embedded-postgres.js';
import { applyMigrations } from '../../dist/infra/database/migrator.js';
import { FIXED_QUEUES, taskQueues } from '../../dist/infra/queue/jobs.js';
import { TASK_KIND_MODULES } from '../../dist/modules/task-kinds.js';

export default async function globalSetup() {
  if (process.env.DATABASE_URL) {
    const url = new URL(process.env.DATABASE_URL);
    url.pathname = '';
    process.env.TEST_PG_SERVER_URL = url.toString().replace(/\/$/, '');
  } else {
    const dir = await mkdtemp(path.join(tmpdir(), 'mgw-test-'));
    await chmod(dir, 0o755); // as root the cluster runs as the postgres user, which must reach it
    const db = await startEmbeddedPostgres({
      dir: path.join(dir, 'pg'),
      port: await freePort(),
      database: 'postgres',
      log: { info: () => undefined, debug: () => undefined },
      // a cluster that lives as long as the run: no commit waits for its WAL to reach the disk
      // scram_iterations: the password the run's few thousand connections present is checked by one round of
      // SCRAM's hash, not 4,096 (each connection cost the server 34 ms of CPU here with 4,096, 29 ms with one)
      settings: { fsync: 'off', synchronous_commit: 'off', full_page_writes: 'off', scram_iterations: '1' },
    });
    process.env.TEST_PG_SERVER_URL = db.url.replace(/\/postgres$/, '');
    // initdb stored the password's verifier at the default 4,096 iterations: store it again at the setting's one
    const { username, password } = new URL(db.url);
    await admin(process.env.TEST_PG_SERVER_URL, `ALTER ROLE ${pg.escapeIdentifier(username)} PASSWORD ${pg.escapeLiteral(decodeURIComponent(password))}`);
    globalThis.__TEST_PG__ = db;
  }
  process.env.TEST_PG_TEMPLATE = await createTemplate(process.env.TEST_PG_SERVER_URL);
  // how test-app.ts copies the template: by file where the server can (PostgreSQL 15+), half the server's CPU
  const [{ server_version_num: version }] = await admin(process.env.TEST_PG_SERVER_URL, 'SHOW server_version_num');
  if (Number(version) >= 150000) process.env.TEST_PG_CREATE_STRATEGY = 'FILE_COPY';
  // what the run makes once and every test file reads: the fakes' clips (media.ts), the OpenAPI document (openapi-validator.ts)
  process.env.TEST_CACHE_DIR = await mkdtemp(path.join(tmpdir(), 'mgw-test-cache-'));
}

/**
 * A database as the service's first start leaves it: every migration, pg-boss's schema and the job queues
 * (its fixed ones and one per task kind of the registry, each a table of its own: made by every app on its
 * copy, they were a quarter of a second of the server's CPU per start). Closed to connections:
 * `CREATE DATABASE … TEMPLATE` copies it, and refuses while anyone is connected to it.
 */
async function createTemplate(server) {
  const name = `mgw_template_${randomBytes(4).toString('hex')}`;
  await admin(server, `CREATE DATABASE ${name}`);
  const url = `${server}/${name}`;
  await applyMigrations(url, { info: () => undefined, warn: (message) => process.stderr.write(`${message}\n`) });
  const boss = new PgBoss({ connectionString: url, schema: 'pgboss', supervise: false, schedule: false });
  await boss.start();
  const kinds = TASK_KIND_MODULES.map((m) => m.kind.definition.name);
  for (const [queue, settings] of [...Object.entries(FIXED_QUEUES), ...taskQueues(kinds)]) await boss.createQueue(queue, { name: queue, ...settings });
  await boss.stop({ graceful: false, close: true, wait: true });
  await admin(server, `ALTER DATABASE ${name} WITH IS_TEMPLATE true ALLOW_CONNECTIONS false`);
  // pg-boss's pool ends its connections without waiting for the server to see them go
  await admin(server, `SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = '${name}'`);
  return name;
}

/** Runs `sql` on the server's `postgres` database, on a connection of its own; returns its rows. */
export async function admin(server, sql) {
  const client = new pg.Client({ connectionString: `${server}/postgres` });
  await client.connect();
  try {
    return (await client.query(sql)).rows;
  } finally {
    await client.end();
  }
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
