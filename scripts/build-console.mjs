// Builds the web console (console/) into dist/console; `npm run build` runs it after compiling the service.
//  1. writes the OpenAPI document of the service just compiled (dist/cli/openapi.js: no database needed);
//  2. generates the console's typed API client from it (@hey-api/openapi-ts) into console/src/api/;
//  3. type-checks the console against that client (tsc), so an API change that breaks it fails the build;
//  4. bundles it with Vite into dist/console (hashed file names, no inline script or style).
// Skipped when nothing it reads changed since the last build (the sources, the document, the lock file).
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const consoleDir = path.join(root, 'console');
const outDir = path.join(root, 'dist', 'console');
const documentFile = path.join(consoleDir, '.openapi.json');
const stampFile = path.join(outDir, '.build-stamp');
const bin = (name) => path.join(root, 'node_modules', '.bin', name);
const run = (cmd, args, env = process.env, stdout = 'inherit') => execFileSync(cmd, args, { cwd: root, stdio: ['ignore', stdout, 'inherit'], env });

// The document as the service describes itself, whatever this shell's settings: a fixed, minimal environment.
run(process.execPath, [path.join(root, 'dist', 'cli', 'openapi.js'), documentFile], { PATH: process.env.PATH, LOG_LEVEL: 'error' }, 'ignore');

const hash = createHash('sha256');
const walk = (dir) => {
  for (const name of readdirSync(dir).sort()) {
    const file = path.join(dir, name);
    if (file === path.join(consoleDir, 'src', 'api') || name === 'node_modules') continue;
    if (statSync(file).isDirectory()) walk(file);
    else {
      hash.update(path.relative(root, file));
      hash.update(readFileSync(file));
    }
  }
};
walk(consoleDir);
hash.update(readFileSync(path.join(root, 'package-lock.json')));
hash.update(readFileSync(new URL(import.meta.url)));
const stamp = hash.digest('hex');
if (existsSync(stampFile) && existsSync(path.join(outDir, 'index.html')) && existsSync(path.join(consoleDir, 'src', 'api', 'sdk.gen.ts')) && readFileSync(stampFile, 'utf8') === stamp) {
  process.stdout.write('console: up to date (dist/console)\n');
  process.exit(0);
}

run(bin('openapi-ts'), ['-i', documentFile, '-o', path.join(consoleDir, 'src', 'api'), '-c', '@hey-api/client-fetch', '--no-log-file', '-s']);
run(bin('tsc'), ['-p', path.join(consoleDir, 'tsconfig.json')]);
run(bin('vite'), ['build', '--config', path.join(consoleDir, 'vite.config.mjs'), '--logLevel', 'warn']);
writeFileSync(stampFile, stamp);
process.stdout.write('console: built into dist/console\n');
