import { randomBytes } from 'node:crypto';
import pg from 'pg';

// The run's PostgreSQL as the tests use it: databases of their own, copied from the template global-setup.mjs
// made, and one-off statements. Apart from test-app.ts (which loads the whole application), so that a test
// of child processes alone does not load it.

export interface TestDatabase {
  url: string;
  name: string;
  drop(): Promise<void>;
}

function serverUrl(): string {
  const url = process.env.TEST_PG_SERVER_URL;
  if (!url) throw new Error('TEST_PG_SERVER_URL is not set: run the tests through jest (global-setup.ts)');
  return url;
}

/**
 * Connections to the server's maintenance database, kept a while between statements: a test file creates and
 * drops a database for each app it starts, and a connection of its own for each cost the server a process
 * start (about 25 ms of its CPU). Unreferenced when idle, so they never hold the worker up.
 */
let adminPool: pg.Pool | undefined;

/** Runs one statement against the server's maintenance database. */
export async function adminQuery(sql: string): Promise<void> {
  if (!adminPool) {
    adminPool = new pg.Pool({ connectionString: `${serverUrl()}/postgres`, max: 2, idleTimeoutMillis: 10_000, allowExitOnIdle: true });
    adminPool.on('error', () => undefined); // an idle connection the server ended: the next statement opens another
  }
  await adminPool.query(sql);
}

/** Runs one query on a test database and returns its rows. */
export async function queryDb<T extends pg.QueryResultRow>(db: TestDatabase, sql: string, params: unknown[] = []): Promise<T[]> {
  const client = new pg.Client({ connectionString: db.url });
  await client.connect();
  try {
    return (await client.query<T>(sql, params)).rows;
  } finally {
    await client.end();
  }
}

/**
 * A fresh database of its own for a test file, dropped at the end: empty (what a first start or a migration
 * test needs), or with `migrated` a copy of the run's template (global-setup.mjs), which has every migration
 * and the job queue's schema and queues already, as a service that started on it before would have left it.
 */
export async function createTestDatabase(options: { migrated?: boolean } = {}): Promise<TestDatabase> {
  const name = `t_${randomBytes(6).toString('hex')}`;
  const template = process.env.TEST_PG_TEMPLATE;
  if (options.migrated && !template) throw new Error('TEST_PG_TEMPLATE is not set: run the tests through jest (global-setup.mjs)');
  // FILE_COPY (PostgreSQL 15+; global-setup.mjs says when the server has it): a copy of the files, where the
  // default (WAL_LOG) writes every block of the template to the WAL as well; measured on the embedded server,
  // 90 ms of its CPU per database instead of 180 ms (a run makes a few hundred)
  const strategy = process.env.TEST_PG_CREATE_STRATEGY ? ` STRATEGY ${process.env.TEST_PG_CREATE_STRATEGY}` : '';
  await adminQuery(`CREATE DATABASE ${name}${options.migrated ? ` TEMPLATE ${template}` : ''}${strategy}`);
  return { url: `${serverUrl()}/${name}`, name, drop: () => adminQuery(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`) };
}
