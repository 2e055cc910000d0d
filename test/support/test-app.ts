import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Writable } from 'node:stream';
import type { NestExpressApplication } from '@nestjs/platform-express';
import pg from 'pg';
import { createApp } from '../../src/app.factory.js';
import type { KindModule } from '../../src/common/tasks/task-kind.js';
import { loadAppConfig } from '../../src/config.js';
import type { AppConfig, AppConfigValues } from '../../src/infra/config/app-config.js';
import type { HostResolver } from '../../src/infra/outbound/host-resolver.js';
import { TASK_KIND_MODULES } from '../../src/modules/task-kinds.js';
import { AppLogger, createRootLogger } from '../../src/infra/logger/app-logger.js';
import { KeysService } from '../../src/modules/keys/keys.service.js';
import { runsKinds, validatorFor } from './openapi-validator.js';
import { TEST_SEALING_KEY } from './sealing-key.js';

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

/** Runs one statement against the server's maintenance database. */
export async function adminQuery(sql: string): Promise<void> {
  const client = new pg.Client({ connectionString: `${serverUrl()}/postgres` });
  await client.connect();
  try {
    await client.query(sql);
  } finally {
    await client.end();
  }
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

/** A teardown step slower than this is reported on stderr. */
const SLOW_TEARDOWN_MS = 10_000;

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

/** Log lines written by the application under test, parsed. */
export class LogCapture extends Writable {
  readonly lines: Record<string, unknown>[] = [];
  override _write(chunk: Buffer, _enc: BufferEncoding, done: () => void): void {
    for (const line of chunk.toString('utf8').split('\n')) {
      if (line.trim()) this.lines.push(JSON.parse(line) as Record<string, unknown>);
    }
    done();
  }
}

/** The metrics token every test app gets unless its env sets another (or '' for none): what Prometheus sends. */
export const TEST_METRICS_TOKEN = 'test-metrics-token-0123456789';

export interface TestApp {
  app: NestExpressApplication;
  url: string;
  config: AppConfig;
  db: TestDatabase;
  logs: LogCapture;
  /** Creates a key for `owner` and returns the plaintext. */
  createKey(owner?: string): Promise<string>;
  /** GET /metrics with the metrics token: the Prometheus text (throws on any other answer than 200). */
  metrics(): Promise<string>;
  close(): Promise<void>;
}

/**
 * Boots the real application (AppModule, migrations, middleware, Swagger) on a real database (a copy of the
 * run's migrated template), listening on a free loopback port. Pass `db` to run a second instance on the same database, `kinds`
 * to run other task kinds than the registry's (a test's own kind beside them), `config` for settings no
 * variable sets (soleInstance: what the embedded database gives), `hostResolver` to resolve host names from a
 * table of the test's (HostTable: `relay.internal` → 127.0.0.1). Every app gets TEST_SEALING_KEY as its
 * CHANNEL_SECRET_KEY unless `env` sets one ('' for none).
 */
export async function startTestApp(env: Record<string, string> = {}, options: { db?: TestDatabase; kinds?: readonly KindModule[]; config?: Partial<AppConfigValues>; hostResolver?: HostResolver } = {}): Promise<TestApp> {
  const kinds = options.kinds ?? TASK_KIND_MODULES;
  const db = options.db ?? (await createTestDatabase({ migrated: true }));
  const dataDir = env.DATA_DIR ? undefined : await mkdtemp(path.join(tmpdir(), 'mgw-app-'));
  const config = loadAppConfig({ LOG_LEVEL: 'info', DATA_DIR: dataDir, CHANNEL_SECRET_KEY: TEST_SEALING_KEY, METRICS_TOKEN: TEST_METRICS_TOKEN, ...env, DATABASE_URL: db.url, PORT: '0' }, { kinds }).with(options.config ?? {});
  const logs = new LogCapture();
  const app = await createApp(config, new AppLogger(createRootLogger(config.logLevel, logs, { traceIds: config.tracing !== undefined })), { kinds, hostResolver: options.hostResolver });
  await app.listen(0, '127.0.0.1');
  const { port } = app.getHttpServer().address() as { port: number };
  runsKinds(`http://127.0.0.1:${port}`, kinds.map((m) => m.kind.definition.name));
  return {
    app,
    url: `http://127.0.0.1:${port}`,
    config,
    db,
    logs,
    createKey: async (owner = 'team-a') => (await app.get(KeysService).createKey({ owner, name: 'test' })).key,
    metrics: async () => {
      const res = await fetch(`http://127.0.0.1:${port}/metrics`, { headers: { authorization: `Bearer ${config.metricsToken}` } });
      const text = await res.text();
      if (res.status !== 200) throw new Error(`GET /metrics answered ${res.status}: ${text.slice(0, 300)}`);
      return text;
    },
    close: async () => {
      // a teardown that takes long says which part did (one hit jest's 60 s hook limit once, on a loaded CI machine)
      const timed = async (what: string, work: () => Promise<unknown>) => {
        const started = Date.now();
        const since = new Date(started).toISOString();
        // what the process waits on once it is slow, and what the app logged meanwhile: where the time went
        let waiting = '';
        const slow = setTimeout(() => (waiting = process.getActiveResourcesInfo().join(', ')), SLOW_TEARDOWN_MS).unref();
        await work().finally(() => clearTimeout(slow));
        const ms = Date.now() - started;
        if (ms > SLOW_TEARDOWN_MS) {
          const lines = logs.lines.filter((l) => String(l.time) >= since).map((l) => `  ${String(l.time)} ${String(l.context ?? '')} ${String(l.msg).slice(0, 300)}`);
          process.stderr.write(`test-app: ${what} took ${ms} ms (${db.name}); waiting on: ${waiting}; logged meanwhile:\n${lines.slice(-30).join('\n')}\n`);
        }
      };
      await timed('app.close()', () => app.close());
      if (!options.db) await timed('DROP DATABASE', () => db.drop());
      if (dataDir) await rm(dataDir, { recursive: true, force: true });
    },
  };
}

/**
 * A key for `owner`, made through the admin API (POST /admin/keys) of a running instance whose ADMIN_API_KEY
 * is `admin`: what a test of a child process needs, with no process start of its own (the key-create CLI is
 * tested in startup.e2e).
 */
export async function createKeyThrough(base: string, admin: string, owner: string): Promise<string> {
  const res = await api(base, 'POST', '/admin/keys', { key: admin, body: { owner, name: 'test' } });
  if (res.status !== 201) throw new Error(`POST /admin/keys answered ${res.status}: ${res.text.slice(0, 300)}`);
  return res.body.key as string;
}

export interface ApiResponse<T = any> {
  status: number;
  headers: Headers;
  body: T;
  text: string;
}

/**
 * A small fetch wrapper: JSON in, JSON (or text) out. Every answer is checked against the service's own
 * OpenAPI document (its status must be documented for the route, its JSON body must match the schema);
 * a mismatch fails the test. `unchecked` skips that, for answers the test means to be odd.
 */
export async function api<T = any>(
  base: string,
  method: string,
  path: string,
  options: { key?: string; body?: unknown; rawBody?: string | Buffer; headers?: Record<string, string>; unchecked?: boolean } = {},
): Promise<ApiResponse<T>> {
  const headers: Record<string, string> = { ...options.headers };
  if (options.key) headers.authorization = `Bearer ${options.key}`;
  let body: string | Buffer | undefined = options.rawBody;
  if (options.body !== undefined) {
    body = JSON.stringify(options.body);
    headers['content-type'] ??= 'application/json';
  }
  const res = await fetch(base + path, { method, headers, body });
  const text = await res.text();
  let parsed: unknown = text;
  try {
    parsed = JSON.parse(text);
  } catch {
    // not JSON; tests that care look at `text`
  }
  if (!options.unchecked) {
    const problem = (await validatorFor(base))?.check(method, path, res.status, res.headers.get('content-type'), parsed);
    if (problem) throw new Error(`the answer does not match the OpenAPI document: ${problem}\nbody: ${text.slice(0, 600)}`);
  }
  return { status: res.status, headers: res.headers, body: parsed as T, text };
}
