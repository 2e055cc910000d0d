import 'reflect-metadata';
import { setFlagsFromString } from 'node:v8';
import { pino } from 'pino';
import { createApp } from './app.factory.js';
import { ConfigError } from './infra/config/app-config.js';
import { loadAppConfig } from './config.js';
import { openDatabase } from './infra/database/database.js';
import { SealingError } from './infra/database/secret-sealing.js';
import { AppLogger, createRootLogger } from './infra/logger/app-logger.js';
import { installLastResortHandlers } from './infra/process/last-resort.js';
import { KeysService } from './modules/keys/keys.service.js';
import { GracefulShutdown } from './common/tasks/graceful-shutdown.js';

async function main(): Promise<void> {
  const config = loadAppConfig(process.env);
  // Each media answer passes megabytes through the heap and its buffers (a vendor's Base64, the decoded
  // bytes, the answer's Base64); with V8's own growth (a factor of about 1.2 there: a heap of 64 MB collected
  // again at about 70) the gateway ran a full collection for nearly every image it answered, 20-30 ms of
  // marking on its one thread each time; under the accept path's load V8 chose 4 (300 %), and a fixed 2 made
  // twice its collections (docs/contributors/performance.md, thirteenth round). V8 reads the flag at each
  // collection, so it holds once set.
  if (config.heapGrowingPercent > 0) setFlagsFromString(`--heap-growing-percent=${config.heapGrowingPercent}`);
  // Asynchronous writes: lines written while one write is in flight go out together (one syscall per
  // burst rather than per line); pino flushes what is pending when the process exits.
  const root = createRootLogger(config.logLevel, pino.destination({ dest: 1, sync: false }), { traceIds: config.tracing !== undefined });
  const db = await openDatabase(config, root);
  const app = await createApp(db.config, new AppLogger(root));
  await app.listen(config.port);

  let closing = false;
  const shutdown = async (signal: string, exitCode = 0): Promise<void> => {
    if (closing) return;
    closing = true;
    root.info(`${signal} received: draining, then closing (within ${config.shutdownTimeoutS} s)`);
    setTimeout(() => process.exit(exitCode), config.shutdownTimeoutS * 1000).unref(); // never hang on the way out
    await app
      .get(GracefulShutdown)
      .drain(exitCode === 0 ? config.shutdownTimeoutS : 1)
      .catch((err: unknown) => root.error({ err }, 'error while draining'));
    await app.close().catch((err: unknown) => root.error({ err }, 'error while closing the application'));
    await db.close().catch((err: unknown) => root.error({ err }, 'error while stopping the embedded database'));
    root.flush();
    process.exit(exitCode);
  };
  process.once('SIGINT', () => void shutdown('SIGINT'));
  process.once('SIGTERM', () => void shutdown('SIGTERM'));
  installLastResortHandlers(root, (reason, exitCode) => void shutdown(reason, exitCode));

  const base = `http://localhost:${(app.getHttpServer().address() as { port: number }).port}`;
  const lines = [`Media gateway listening on ${base}`, `Console: ${base}/console   Swagger UI: ${base}/docs   OpenAPI: ${base}/docs-json   Health: ${base}/health/ready`];
  if (db.embedded) {
    const first = await app.get(KeysService).createFirstKeyIfNone();
    if (first) {
      lines.push(`First API key (owner "${first.owner}"), shown only once: ${first.key}`);
      lines.push(`Try: curl -H "Authorization: Bearer ${first.key}" ${base}/video-b/v1/generations`);
    } else {
      lines.push('Create more keys with: npm run key:create -- --owner OWNER --name NAME');
    }
  }
  root.info({ url: base }, 'listening');
  process.stdout.write(`\n${lines.map((l) => `  ${l}`).join('\n')}\n\n`);
}

main().catch((err: unknown) => {
  if (err instanceof ConfigError) {
    process.stderr.write(`${err.message}\n`);
  } else if (err instanceof SealingError) {
    process.stderr.write(`Failed to start: ${err.message}\n`);
  } else {
    process.stderr.write(`Failed to start: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
  }
  process.exit(1);
});
