import { mkdtemp, rm } from 'node:fs/promises';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Writable } from 'node:stream';
import type { NestExpressApplication } from '@nestjs/platform-express';
import { createApp } from '../../src/app.factory.js';
import type { KindModule } from '../../src/common/tasks/task-kind.js';
import { loadAppConfig } from '../../src/config.js';
import type { AppConfig, AppConfigValues } from '../../src/infra/config/app-config.js';
import type { HostResolver } from '../../src/infra/outbound/host-resolver.js';
import { TASK_KIND_MODULES } from '../../src/modules/task-kinds.js';
import { AppLogger, createRootLogger } from '../../src/infra/logger/app-logger.js';
import { KeysService } from '../../src/modules/keys/keys.service.js';
import { runsKinds } from './openapi-validator.js';
import { TEST_SEALING_KEY } from './sealing-key.js';
import { createTestDatabase, type TestDatabase } from './test-database.js';

// what most tests import with startTestApp, from the light modules where they live
export { api, type ApiResponse, createKeyThrough } from './api-client.js';
export { adminQuery, createTestDatabase, queryDb, type TestDatabase } from './test-database.js';

/** A teardown step slower than this is reported on stderr. */
const SLOW_TEARDOWN_MS = 10_000;

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
  const server = app.getHttpServer() as Server;
  const { port } = server.address() as AddressInfo;
  // the answers not yet fully sent, by request: a close slow on one of them names it (see close)
  const answering = new Map<ServerResponse, string>();
  server.on('request', (req: IncomingMessage, res: ServerResponse) => {
    answering.set(res, `${req.method} ${req.url}`);
    res.once('close', () => answering.delete(res));
  });
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
        let unsent = '';
        let hooks = '';
        const slow = setTimeout(() => {
          waiting = process.getActiveResourcesInfo().join(', ');
          hooks = [...inHooks.entries()].map(([name, since]) => `${name} (${Date.now() - since} ms)`).join(', ');
          // an answer its client never read to the end holds its connection, and the server's close waits for
          // it: every test is over by now, so it is cut, as the drain's deadline cuts it in production, and named
          // here so its test can read what it fetched
          unsent = [...answering.values()].join(', ');
          if (unsent) server.closeAllConnections();
        }, SLOW_TEARDOWN_MS).unref();
        await work().finally(() => clearTimeout(slow));
        const ms = Date.now() - started;
        if (ms > SLOW_TEARDOWN_MS) {
          const lines = logs.lines.filter((l) => String(l.time) >= since).map((l) => `  ${String(l.time)} ${String(l.context ?? '')} ${String(l.msg).slice(0, 300)}`);
          // which file and test: Jest prints a worker's stderr as it comes, not beside the file it came from
          const state = (globalThis as { expect?: { getState(): { testPath?: string; currentTestName?: string } } }).expect?.getState();
          const where = state ? `${path.relative(process.cwd(), state.testPath ?? '?')}, after "${state.currentTestName ?? '?'}"` : 'outside a test';
          process.stderr.write(`test-app: ${what} took ${ms} ms (${db.name}; ${where}); waiting on: ${waiting}${hooks ? `; in the lifecycle hooks: ${hooks}` : ''}${unsent ? `; answers unread by their clients, cut: ${unsent}` : ''}; logged meanwhile:\n${lines.slice(-30).join('\n')}\n`);
        }
      };
      const inHooks = timeHooks(app);
      await timed('app.close()', () => app.close());
      if (!options.db) await timed('DROP DATABASE', () => db.drop());
      // a step handed back at the drain may still finish a file it was writing into the store after close (left
      // alone for now: issue 56's note); the removal goes over the directory again rather than fail the file
      if (dataDir) await rm(dataDir, { recursive: true, force: true, maxRetries: 5, retryDelay: 200 });
    },
  };
}

const SHUTDOWN_HOOKS = ['onModuleDestroy', 'beforeApplicationShutdown', 'onApplicationShutdown'] as const;

/**
 * The shutdown hooks of the app's providers, timed: the ones running now, by name, with when each began (epoch
 * ms). A close slow in one of them then names it (Nest's container is not public API: a test aid only).
 */
function timeHooks(app: NestExpressApplication): Map<string, number> {
  const running = new Map<string, number>();
  type Instance = Record<string, unknown> & { constructor: { name: string } };
  const container = (app as unknown as { container?: { getModules(): Map<string, { providers: Map<unknown, { instance?: unknown }> }> } }).container;
  for (const module of container?.getModules().values() ?? []) {
    for (const wrapper of module.providers.values()) {
      const instance = wrapper.instance as Instance | undefined;
      if (!instance || typeof instance !== 'object') continue;
      for (const hook of SHUTDOWN_HOOKS) {
        const fn = instance[hook];
        if (typeof fn !== 'function' || Object.hasOwn(instance, hook)) continue;
        const name = `${instance.constructor.name}.${hook}`;
        instance[hook] = async (...args: unknown[]) => {
          running.set(name, Date.now());
          try {
            return (await (fn as (...a: unknown[]) => unknown).apply(instance, args)) as unknown;
          } finally {
            running.delete(name);
          }
        };
      }
    }
  }
  return running;
}
