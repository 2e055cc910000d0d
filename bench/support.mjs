// Shared pieces of the benchmarks: a database, child servers, autocannon rounds, tables.
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { chmod, mkdtemp, rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import autocannon from 'autocannon';
import pg from 'pg';

export const ROOT = path.resolve(path.dirname(new URL(import.meta.url).pathname), '..');
// made for each run: the service refuses a key value the repository ships
export const ADMIN_KEY = randomBytes(24).toString('hex');
/** The sealing key of every gateway of a run: instances that share a database must share it. */
const SEALING_KEY = randomBytes(32).toString('hex');

export function freePort() {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
    server.on('error', reject);
  });
}

const cleanups = [];
export function onExit(fn) {
  cleanups.push(fn);
}
export async function cleanUp() {
  while (cleanups.length) await cleanups.pop()().catch(() => undefined);
}
for (const signal of ['SIGINT', 'SIGTERM']) process.on(signal, () => cleanUp().finally(() => process.exit(130)));

/**
 * A database of its own for this run: on the server of DATABASE_URL a new database (dropped at the end;
 * the given one itself when the role may not create databases), or else an embedded PostgreSQL (the
 * service's own) in a temporary directory. Runs never see each other's tasks and jobs.
 */
export async function database() {
  if (process.env.DATABASE_URL) {
    const name = `mgw_bench_${process.pid}_${Date.now()}`;
    const admin = new pg.Client({ connectionString: process.env.DATABASE_URL });
    await admin.connect();
    try {
      await admin.query(`CREATE DATABASE "${name}"`);
    } catch (err) {
      await admin.end();
      console.warn(`could not create a database for the run (${err.message}); using DATABASE_URL's own`);
      return { url: process.env.DATABASE_URL, kind: 'server (DATABASE_URL)' };
    }
    await admin.end();
    onExit(async () => {
      const c = new pg.Client({ connectionString: process.env.DATABASE_URL });
      await c.connect();
      await c.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
      await c.end();
    });
    const url = new URL(process.env.DATABASE_URL);
    url.pathname = `/${name}`;
    return { url: url.toString(), kind: 'server (DATABASE_URL), a database of its own' };
  }
  const { startEmbeddedPostgres } = await import(path.join(ROOT, 'dist/infra/database/embedded-postgres.js'));
  const dir = await mkdtemp(path.join(tmpdir(), 'mgw-bench-'));
  await chmod(dir, 0o755); // run as root, PostgreSQL runs as the postgres user, which must reach its cluster
  const db = await startEmbeddedPostgres({ dir: path.join(dir, 'pg'), port: await freePort(), database: 'bench', log: { info: () => undefined, debug: () => undefined } });
  onExit(async () => {
    await db.stop();
    await rm(dir, { recursive: true, force: true });
  });
  return { url: db.url, kind: 'embedded' };
}

/**
 * Another database on the server of `dbUrl` for this run (dropped at the end), named after it with
 * `suffix`. Fails with the server's words when the role may not create databases.
 */
export async function siblingDatabase(dbUrl, suffix) {
  const url = new URL(dbUrl);
  const name = `${url.pathname.slice(1)}_${suffix}`.slice(0, 63);
  const admin = new pg.Client({ connectionString: dbUrl });
  await admin.connect();
  try {
    await admin.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
    await admin.query(`CREATE DATABASE "${name}"`);
  } catch (err) {
    throw new Error(`the scale scenario needs a second database on the server and could not create it: ${err.message}`);
  } finally {
    await admin.end();
  }
  onExit(async () => {
    const c = new pg.Client({ connectionString: dbUrl });
    await c.connect();
    await c.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
    await c.end();
  });
  url.pathname = `/${name}`;
  return url.toString();
}

/** Starts `node <script>` with `env`; resolves once `ready()` holds. Its output goes to a log in the temp dir. */
export async function startChild(name, script, env, ready, nodeArgs = []) {
  const child = spawn(process.execPath, [...nodeArgs, script], { cwd: ROOT, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  const keep = (chunk) => {
    output = (output + chunk.toString()).slice(-20_000);
  };
  child.stdout.on('data', keep);
  child.stderr.on('data', keep);
  const exited = new Promise((resolve) => child.on('exit', resolve));
  const stop = async (signal = 'SIGTERM') => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    child.kill(signal);
    const timer = setTimeout(() => child.kill('SIGKILL'), 15_000);
    await exited;
    clearTimeout(timer);
  };
  onExit(stop);
  const deadline = Date.now() + 120_000;
  while (!(await ready().catch(() => false))) {
    if (child.exitCode !== null) throw new Error(`${name} exited (${child.exitCode}):\n${output}`);
    if (Date.now() > deadline) throw new Error(`${name} did not become ready:\n${output}`);
    await new Promise((r) => setTimeout(r, 200));
  }
  return { child, stop, output: () => output, pid: child.pid };
}

export const httpReady = (url) => async () => (await fetch(url)).ok;

/** The gateway as production runs it (ROLE=api unless set), on `db`. */
export async function startGateway(dbUrl, env = {}, nodeArgs = []) {
  const port = await freePort();
  const dataDir = await mkdtemp(path.join(tmpdir(), 'mgw-bench-app-'));
  onExit(() => rm(dataDir, { recursive: true, force: true }));
  const url = `http://127.0.0.1:${port}`;
  const child = await startChild('the gateway', 'dist/main.js', { DATABASE_URL: dbUrl, PORT: String(port), ROLE: 'api', ADMIN_API_KEY: ADMIN_KEY, CHANNEL_SECRET_KEY: SEALING_KEY, DATA_DIR: dataDir, LOG_LEVEL: 'info', ...env }, httpReady(`${url}/health/ready`), nodeArgs);
  return { ...child, url };
}

export async function startFloor(dbUrl) {
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const child = await startChild('the floor', 'bench/floor.mjs', { DATABASE_URL: dbUrl, PORT: String(port) }, async () => (await fetch(url, { method: 'POST' })).status === 404);
  return { ...child, url };
}

export async function adminCall(base, method, route, body) {
  const res = await fetch(base + route, { method, headers: { authorization: `Bearer ${ADMIN_KEY}`, 'content-type': 'application/json' }, body: body ? JSON.stringify(body) : undefined });
  if (!res.ok) throw new Error(`${method} ${route}: ${res.status} ${await res.text()}`);
  return res.json();
}

/** A key of `owner`, with every limit switched on (high enough never to refuse), as in production. */
export async function benchKey(gateway, owner) {
  await adminCall(gateway.url, 'PUT', `/admin/owners/${owner}/limits`, { requests_per_minute: 10_000_000, max_concurrent_tasks: 1_000_000, monthly_credits: 2_000_000_000 });
  return (await adminCall(gateway.url, 'POST', '/admin/keys', { owner, name: 'bench' })).key;
}

/**
 * One autocannon run: req/s (2xx only), p50, p99 in ms, and the count of other answers. `key`: one key, or
 * several (teams): connection i sends keys[i % keys.length], so each team has its share of the connections.
 */
export function load({ url, path: route, key, body, connections, durationS }) {
  const keys = Array.isArray(key) ? key : [key];
  const headersOf = (k) => ({ authorization: `Bearer ${k}`, 'content-type': 'application/json' });
  let nextClient = 0;
  return new Promise((resolve, reject) => {
    autocannon(
      {
        url: url + route,
        method: 'POST',
        connections,
        duration: durationS,
        headers: headersOf(keys[0]),
        body: JSON.stringify(body),
        ...(keys.length > 1 ? { setupClient: (client) => client.setHeaders(headersOf(keys[nextClient++ % keys.length])) } : {}),
      },
      (err, result) => {
        if (err) return reject(err);
        const ok = result['2xx'];
        resolve({ rps: ok / durationS, p50: result.latency.p50, p99: result.latency.p99, bad: result.non2xx + result.errors + result.timeouts });
      },
    );
  });
}

export function table(rows, columns) {
  const widths = columns.map((c) => Math.max(c.length, ...rows.map((r) => String(r[c]).length)));
  const line = (cells) => `| ${cells.map((cell, i) => String(cell).padEnd(widths[i])).join(' | ')} |`;
  return [line(columns), `|${widths.map((w) => '-'.repeat(w + 2)).join('|')}|`, ...rows.map((r) => line(columns.map((c) => r[c])))].join('\n');
}

export function arg(name, fallback) {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? process.argv[i + 1] : fallback;
}

/** Removes what a scenario left behind (tasks of `owner`, and every job no worker took), so the next starts clean. */
export async function cleanUpAfter(dbUrl, owner) {
  const c = new pg.Client({ connectionString: dbUrl });
  await c.connect();
  try {
    await c.query("DELETE FROM pgboss.job WHERE name LIKE '%.run' AND state = 'created'");
    await c.query('DELETE FROM tasks WHERE owner = $1', [owner]);
    await c.query('DELETE FROM owner_counters WHERE owner = $1', [owner]);
    await c.query('VACUUM ANALYZE');
  } finally {
    await c.end();
  }
}
