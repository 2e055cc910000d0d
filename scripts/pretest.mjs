// What `npm test` runs first, on both cores at once: the build (the service, then the console, which needs the
// service's OpenAPI document) beside the type check of everything and the layer rules. Run one after the other
// they took a minute of a fresh clone's `npm test`; each is a single-threaded process. Each one's output is
// shown when it ends; the first failure fails the whole (its exit code), once both have ended.
import { spawn } from 'node:child_process';

function run(label, scripts) {
  return new Promise((resolve) => {
    const command = scripts.map((s) => `npm run ${s} --silent`).join(' && ');
    const child = spawn(command, { shell: true, stdio: ['ignore', 'pipe', 'pipe'], env: process.env });
    const output = [];
    child.stdout.on('data', (chunk) => output.push(chunk));
    child.stderr.on('data', (chunk) => output.push(chunk));
    child.on('close', (code, signal) => {
      const text = Buffer.concat(output).toString('utf8').trimEnd();
      if (text) process.stdout.write(`${text}\n`);
      if (code !== 0) process.stderr.write(`pretest: ${label} failed (${signal ?? `exit ${code}`})\n`);
      resolve(code ?? 1);
    });
  });
}

const codes = await Promise.all([run('the build', ['build']), run('the type check and layer rules', ['typecheck', 'lint:deps'])]);
process.exit(codes.find((c) => c !== 0) ?? 0);
