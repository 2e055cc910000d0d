import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Child } from '../support/child-process.js';
import { freePort } from '../support/free-port.js';
import { startHeldFiles } from '../support/held-files.js';
import { sendBytes, startServer, type TestServer } from '../support/http-server.js';
import { png } from '../support/images.js';
import { wav } from '../support/media.js';
import { OwnPostgres } from '../support/own-postgres.js';
import { pollUntil } from '../support/poll.js';
import { api, createKeyThrough } from '../support/api-client.js';
import { queryDb } from '../support/test-database.js';

const EXPAND = '/video-a/v1/images/editing/expand';
const ADMIN = 'admin-secret-0123456789';
const OUTAGE_MS = 6000;

/** The process still runs; if not, the failure shows how it ended. */
function expectAlive(child: Child): void {
  const ended = child.process.exitCode !== null || child.process.signalCode !== null;
  expect(ended ? `exited ${child.process.exitCode ?? child.process.signalCode}:\n${child.output.slice(-4000)}` : 'running').toBe('running');
}

/**
 * The real process (dist/main.js) on a PostgreSQL of the test's own, stopped while tasks run and
 * started again: the process must not exit, must answer 503 meanwhile and serve again by itself, and
 * every task it accepted must complete.
 */
describe('a database outage while jobs run', () => {
  let files: TestServer;
  beforeAll(async () => {
    const clip = wav(1.5);
    files = await startServer((_req, res) => sendBytes(res, 'audio/wav', clip));
  });
  afterAll(() => files.close());

  it.each([
    ['one instance (ROLE=all)', ['all']],
    ['an api instance and a worker instance (ROLE=api, ROLE=worker)', ['api', 'worker']],
  ])('%s: no process exits, requests get 503 with Retry-After, and every accepted task completes', async (_, roles) => {
    const pg = await OwnPostgres.start();
    const dataDir = await mkdtemp(path.join(tmpdir(), 'mgw-outage-'));
    const ports = await Promise.all(roles.map(() => freePort()));
    const env = (role: string, port: number) => ({ DATABASE_URL: pg.url, ROLE: role, PORT: String(port), ADMIN_API_KEY: ADMIN, SANDBOX_DELAY_MS: '2500', ALLOW_PRIVATE_URLS: 'true', LOG_LEVEL: 'info', DATA_DIR: dataDir });
    const base = `http://127.0.0.1:${ports[0]}`;
    const processes: Child[] = [];
    // the expand task's image waits on this server until the test lets it: the task is surely running when the
    // database stops, however slow the machine (the sandbox delay alone only made that likely)
    const images = await startHeldFiles('image/png', await png(320, 320));
    try {
      for (const [i, role] of roles.entries()) processes.push(Child.start('dist/main.js', [], env(role, ports[i])));
      await Promise.all(processes.map((p) => p.waitFor(/"listening"/)));
      const key = await createKeyThrough(base, ADMIN, 'outage');

      const expandBody = { image: `${images.url}/photo.png`, up_expansion_ratio: 0.1, bottom_expansion_ratio: 0.1, left_expansion_ratio: 0.1, right_expansion_ratio: 0.1 };
      const submit = async () => ({
        expand: (await api(base, 'POST', EXPAND, { key, body: expandBody })).body.data.task_id as string,
        video: (await api(base, 'POST', '/video-b/v1/generations', { key, body: { prompt: 'rain on a window' } })).body.id as string,
        audio: (await api(base, 'POST', '/music-a/uploads/audio-url', { key, body: { url: `${files.url}/clip.wav` } })).body.data as string,
      });
      const before = await submit();
      await pollUntil(async () => images.waiting(), (n) => n === 1, { what: 'the expand task to start and ask for its image' });

      await pg.stop();
      const down = Date.now();
      // the running task goes on (its sandbox delay, its render) while the database is away
      images.release();
      // During the outage: alive, not ready, and requests that need the database answer 503 with Retry-After.
      const ready = await pollUntil(() => api(base, 'GET', '/health/ready'), (r) => r.status === 503, { what: 'readiness to fail' });
      expect(ready.headers.get('retry-after')).toMatch(/^\d+$/);
      const refused = await pollUntil(() => api(base, 'POST', EXPAND, { key, body: expandBody }), (r) => r.status !== 200, { what: 'submissions to be refused' });
      expect([refused.status, refused.body.code, refused.headers.get('retry-after')]).toEqual([503, 5001, expect.stringMatching(/^\d+$/)]);
      expect(refused.body.request_id).toBe(refused.headers.get('x-request-id'));
      await pollUntil(() => api(base, 'GET', '/health'), (r) => r.status !== 200 || Date.now() - down > OUTAGE_MS, { what: 'the outage to last', timeoutMs: OUTAGE_MS + 10_000 }).then((r) => expect(r.status).toBe(200));
      for (const p of processes) expectAlive(p);

      await pg.restart();
      await pollUntil(() => api(base, 'GET', '/health/ready'), (r) => r.status === 200, { timeoutMs: 20_000, what: 'readiness after the database returned' });
      const after = await submit();

      const states = async (ids: typeof before) => [
        (await api(base, 'GET', `${EXPAND}/${ids.expand}`, { key })).body.data?.task_status,
        (await api(base, 'GET', `/video-b/v1/generations/${ids.video}`, { key })).body.state,
        (await api(base, 'GET', `/music-a/uploads/${ids.audio}`, { key })).body.data?.status,
      ];
      for (const [when, ids] of [['before', before], ['after', after]] as const) {
        const final = await pollUntil(() => states(ids), (s) => s.every((v) => ['succeed', 'completed', 'ready', 'failed'].includes(v)), { timeoutMs: 60_000, what: `every task submitted ${when} the outage to finish` }).catch(
          async (err: Error) => {
            // what the database and the processes say of the tasks that did not finish
            const rows = await queryDb({ url: pg.url, name: 'gateway', drop: async () => undefined }, 'SELECT id, kind, state, lease_owner, lease_until, attempts, started_at, now() AS now FROM tasks WHERE id = ANY($1::uuid[])', [Object.values(ids)]).catch((e: Error) => e.message);
            const lines = processes.map((p, i) => `${roles[i]}:\n${p.output.split('\n').filter((l) => Object.values(ids).some((id) => l.includes(id)) || /"level":"(warn|error)"/.test(l)).slice(-30).join('\n')}`);
            throw new Error(`${err.message}\n${JSON.stringify(rows)}\n${lines.join('\n')}`);
          },
        );
        expect(final).toEqual(['succeed', 'completed', 'ready']);
      }
      for (const p of processes) expectAlive(p);
      expect(processes.map((p) => p.output).join('\n')).toMatch(/the database answers again/);
    } finally {
      for (const p of processes) await p.stop('SIGTERM').catch(() => p.stop('SIGKILL'));
      await images.close();
      await pg.destroy();
      await rm(dataDir, { recursive: true, force: true });
    }
  }, 300_000);
});
