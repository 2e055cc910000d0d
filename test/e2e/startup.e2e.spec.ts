import { existsSync, readFileSync, statSync } from 'node:fs';
import { chmod, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Child } from '../support/child-process.js';
import { freePort } from '../support/free-port.js';
import { startHeldFiles } from '../support/held-files.js';
import { png } from '../support/images.js';
import { pollUntil } from '../support/poll.js';
import { api } from '../support/api-client.js';

const ADMIN = 'admin-secret-0123456789';

/**
 * `npm start` as a newcomer runs it: the built server with no DATABASE_URL, so it starts the
 * embedded PostgreSQL under DATA_DIR, applies the migrations and prints a first key.
 */
describe('npm start on the embedded database', () => {
  let dataDir: string;
  let env: Record<string, string>;
  let base: string;
  let firstKey: string;

  beforeAll(async () => {
    const dir = await mkdtemp(path.join(tmpdir(), 'mgw-start-'));
    await chmod(dir, 0o755);
    dataDir = path.join(dir, 'data');
    const port = await freePort();
    // no CHANNEL_SECRET_KEY, as a newcomer runs it: the sealing key is made in DATA_DIR, beside the database
    env = { DATA_DIR: dataDir, PORT: String(port), EMBEDDED_PG_PORT: String(await freePort()), ADMIN_API_KEY: ADMIN, LOG_LEVEL: 'warn', CHANNEL_SECRET_KEY: '' };
    base = `http://localhost:${port}`;
  });
  afterAll(async () => {
    // a test that failed before the stop leaves the server running: stopped here, its PostgreSQL with it
    await server?.stop('SIGTERM').catch(() => server?.stop('SIGKILL'));
    await rm(path.dirname(dataDir), { recursive: true, force: true });
  });

  // The first start's steps are tests of their own, each within the test timeout: on a loaded machine the
  // whole of them (initdb, the service's start, a CLI's start beside it, the stop) once took longer than one.
  let server: Child | undefined;

  it('initialises the embedded PostgreSQL on the first start and prints a first key once', async () => {
    server = Child.start('dist/main.js', [], env);
    const [, key] = await server.waitFor(/First API key .*: (mgw_[A-Za-z0-9]{48})/);
    firstKey = key;
    expect(server.output).toContain(`Swagger UI: ${base}/docs`);
  });

  it('serves /docs and /health/ready; the printed key authenticates', async () => {
    expect(server).toBeDefined();
    expect((await api(base, 'GET', '/health/ready')).status).toBe(200);
    expect((await api(base, 'GET', '/docs')).status).toBe(200);
    // the printed key authenticates (403: valid key, but not the admin key)
    expect((await api(base, 'GET', '/admin/keys', { key: firstKey })).body.code).toBe(1103);
    expect((await api(base, 'GET', '/admin/keys', { key: firstKey.slice(0, -1) + (firstKey.endsWith('a') ? 'b' : 'a') })).status).toBe(401);
  });

  it('key:create while the server runs joins its embedded PostgreSQL', async () => {
    expect(server).toBeDefined();
    const cli = Child.start('dist/cli/key-create.js', ['--owner', 'cli-team', '--name', 'from-shell'], env);
    expect((await cli.exited).code).toBe(0);
    // stdout is the key's JSON alone, whatever the service logged at start (on stderr)
    const created = JSON.parse(cli.stdout);
    expect(created).toEqual(expect.objectContaining({ owner: 'cli-team', name: 'from-shell', key: expect.stringMatching(/^mgw_/) }));
    expect((await api(base, 'GET', '/admin/keys', { key: created.key })).status).toBe(403);
  });

  it('stops cleanly on SIGTERM, with its PostgreSQL; the stored secrets\' sealing key is the owner\'s alone', async () => {
    expect(server).toBeDefined();
    const stopped = await server!.stop('SIGTERM');
    server = undefined;
    expect(stopped).toEqual({ code: 0, signal: null });
    expect(existsSync(path.join(dataDir, 'pg', 'postmaster.pid'))).toBe(false);
    // the stored secrets' sealing key, the owner's alone (the CLI used the same one)
    expect(readFileSync(path.join(dataDir, 'sealing.key'), 'utf8')).toMatch(/^[0-9a-f]{64}\n$/);
    expect(statSync(path.join(dataDir, 'sealing.key')).mode & 0o777).toBe(0o600);
  });

  it('prints no new key on the next start, and after a SIGKILL mid-task (PostgreSQL left running) restarts and finishes the task', async () => {
    // the task's image waits on this server until the test lets it: the task is surely mid-run when the process is
    // killed, however slow the machine (a sandbox delay only made that likely)
    const files = await startHeldFiles('image/png', await png(300, 300));
    const fetching = { ...env, ALLOW_PRIVATE_URLS: 'true' };
    const first = Child.start('dist/main.js', [], fetching);
    await first.waitFor(/Swagger UI/);
    expect(first.output).not.toContain('First API key');
    expect(first.output).toContain('npm run key:create');
    const created = await api(base, 'POST', '/video-a/v1/images/editing/expand', {
      key: firstKey,
      body: { image: `${files.url}/photo.png`, up_expansion_ratio: 0.5, bottom_expansion_ratio: 0, left_expansion_ratio: 0, right_expansion_ratio: 0 },
    });
    const task = `/video-a/v1/images/editing/expand/${created.body.data.task_id}`;
    await pollUntil(async () => files.waiting(), (n) => n === 1, { what: 'the task to start and ask for its image' });
    const pid = Number(readFileSync(path.join(dataDir, 'pg', 'postmaster.pid'), 'utf8').split('\n')[0]);
    await first.stop('SIGKILL');
    expect(() => process.kill(pid, 0)).not.toThrow(); // the orphaned postgres still runs
    // the next run's fetch of the image is answered
    files.release();

    const second = Child.start('dist/main.js', [], fetching);
    try {
      await second.waitFor(/Swagger UI/);
      expect((await api(base, 'GET', '/health/ready')).status).toBe(200);
      // the embedded database has no other instance: the dead run's lease is void at once (not after WORKER_LEASE_S = 30 s)
      const done = await pollUntil(() => api(base, 'GET', task, { key: firstKey }), (r) => r.body.data.task_status === 'succeed', { timeoutMs: 15_000, what: 'the task to finish' });
      expect(done.body.data.task_result.images).toHaveLength(1);
    } finally {
      const stopped = await second.stop('SIGTERM');
      await files.close();
      expect(stopped.code).toBe(0);
    }
    // two starts of the service, a kill and a task between them: on a loaded machine (the full suite beside it)
    // more than the 60 s one start is given; each step keeps its own deadline
  }, 180_000);
});

describe('npm run key:create', () => {
  it('refuses bad arguments with a message naming the field', async () => {
    const cli = Child.start('dist/cli/key-create.js', ['--owner', 'bad owner', '--name', 'x'], { DATABASE_URL: 'postgresql://unused/none' });
    expect((await cli.exited).code).toBe(1);
    expect(cli.output).toMatch(/owner may contain only/);
    const unknown = Child.start('dist/cli/key-create.js', ['--team', 'x'], { DATABASE_URL: 'postgresql://unused/none' });
    expect((await unknown.exited).code).toBe(1);
    expect(unknown.output).toMatch(/Unknown option '--team'/);
  });

  it('refuses a bad setting with a message naming the variable', async () => {
    const cli = Child.start('dist/main.js', [], { PORT: 'eighty' });
    expect((await cli.exited).code).toBe(1);
    expect(cli.output).toMatch(/Invalid configuration:\n {2}- PORT/);
  });
});
