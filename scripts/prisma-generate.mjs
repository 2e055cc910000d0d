// Runs `prisma generate` offline. The Prisma CLI wants its schema-engine binary present, which it
// downloads from outside; generate itself never uses it, so any existing file satisfies the check.
// Migrations are applied by the service itself (src/infra/database/migrator.ts).
import { spawnSync } from 'node:child_process';
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);
const cli = require.resolve('prisma/build/index.js');
const env = {
  ...process.env,
  PRISMA_SCHEMA_ENGINE_BINARY: process.env.PRISMA_SCHEMA_ENGINE_BINARY ?? process.execPath,
  PRISMA_HIDE_UPDATE_MESSAGE: '1',
  CHECKPOINT_DISABLE: '1',
};
const result = spawnSync(process.execPath, [cli, 'generate', ...process.argv.slice(2)], { stdio: 'inherit', env });
process.exit(result.status ?? 1);
