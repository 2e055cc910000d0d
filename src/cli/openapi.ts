import 'reflect-metadata';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { createApp } from '../app.factory.js';
import { loadAppConfig } from '../config.js';
import { buildOpenApiDocument } from '../common/swagger/openapi.js';
import { TASK_KIND_MODULES } from '../modules/task-kinds.js';
import { AppLogger, createRootLogger } from '../infra/logger/app-logger.js';
import { runCli } from './run-cli.js';

/**
 * `npm run openapi [-- out.json]`: writes the OpenAPI document served at /docs-json.
 * The application is built in preview mode: nothing is instantiated, so no database is needed.
 */
runCli(async () => {
  const out = path.resolve(process.argv[2] ?? 'openapi.json');
  const config = loadAppConfig({ ...process.env, DATABASE_URL: 'postgresql://unused/openapi' });
  const app = await createApp(config, new AppLogger(createRootLogger('error')), { preview: true });
  await writeFile(out, `${JSON.stringify(buildOpenApiDocument(app, TASK_KIND_MODULES.map((m) => m.kind.definition), config), null, 2)}\n`);
  await app.close();
  process.stdout.write(`wrote ${out}\n`);
});
