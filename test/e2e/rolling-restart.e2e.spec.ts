import http from 'node:http';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { png } from '../support/images.js';
import { Child } from '../support/child-process.js';
import { freePort } from '../support/free-port.js';
import { startHeldFiles } from '../support/held-files.js';
import { pollUntil } from '../support/poll.js';
import { createKeyThrough } from '../support/api-client.js';
import { createTestDatabase, queryDb as query } from '../support/test-database.js';

const EXPAND = '/video-a/v1/images/editing/expand';
const ADMIN = 'admin-secret-0123456789';

interface Sent {
  status?: number;
  taskId?: string;
  error?: string;
}

/** One POST on a connection of its own (as a load balancer without upstream keep-alive would send it). */
function post(port: number, key: string, body: string): Promise<Sent> {
  return new Promise((resolve) => {
    const req = http.request({ host: '127.0.0.1', port, path: EXPAND, method: 'POST', agent: false, headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) } }, (res) => {
      let text = '';
      res.on('data', (c: Buffer) => (text += c.toString()));
      res.on('end', () => resolve({ status: res.statusCode, taskId: res.statusCode === 200 ? (JSON.parse(text).data.task_id as string) : undefined }));
      res.on('error', (err: NodeJS.ErrnoException) => resolve({ error: err.code ?? err.message }));
    });
    req.on('error', (err: NodeJS.ErrnoException) => resolve({ error: err.code ?? err.message }));
    req.end(body);
  });
}

/** GET on a kept-alive connection of `agent`. */
function get(agent: http.Agent, port: number, route: string): Promise<{ status?: number; connection?: string; error?: string }> {
  return new Promise((resolve) => {
    const req = http.request({ host: '127.0.0.1', port, path: route, agent }, (res) => {
      res.resume();
      res.on('end', () => resolve({ status: res.statusCode, connection: res.headers.connection }));
    });
    req.on('error', (err: NodeJS.ErrnoException) => resolve({ error: err.code ?? err.message }));
    req.end();
  });
}

describe('a rolling restart: SIGTERM to one of two instances under load', () => {
  it('loses no accepted request: in-flight requests are answered, held tasks move to the other instance at once, and every task completes', async () => {
    const db = await createTestDatabase({ migrated: true });
    const [portA, portB] = [await freePort(), await freePort()];
    const dirs = [await mkdtemp(path.join(tmpdir(), 'mgw-roll-a-')), await mkdtemp(path.join(tmpdir(), 'mgw-roll-b-'))];
    // a lease far longer than the test: only the hand-back can move A's running tasks to B in time
    // Every task's image waits on this server until A has stopped: a task A runs cannot end before A's drain
    // hands it back, however slow the machine (a sandbox delay only made that likely).
    const images = await startHeldFiles('image/png', await png(320, 320));
    const common = { DATABASE_URL: db.url, ADMIN_API_KEY: ADMIN, STORAGE_DRIVER: 'postgres', ALLOW_PRIVATE_URLS: 'true', WORKER_LEASE_S: '120', SHUTDOWN_TIMEOUT_S: '3', LOG_LEVEL: 'info' };
    // B, left alone with the backlog, runs more at once: the test waits for it to finish what A let go of, not for
    // 3 slots to work through 60 tasks
    const a = Child.start('dist/main.js', [], { ...common, WORKER_CONCURRENCY: '3', PORT: String(portA), DATA_DIR: dirs[0] });
    const b = Child.start('dist/main.js', [], { ...common, WORKER_CONCURRENCY: '20', PORT: String(portB), DATA_DIR: dirs[1] });
    const keepAlive = new http.Agent({ keepAlive: true, maxSockets: 1 });
    try {
      await Promise.all([a.waitFor(/listening/), b.waitFor(/listening/)]);
      const key = await createKeyThrough(`http://127.0.0.1:${portB}`, ADMIN, 'roll');
      const body = JSON.stringify({ image: `${images.url}/photo.png`, up_expansion_ratio: 0.1, bottom_expansion_ratio: 0.1, left_expansion_ratio: 0.1, right_expansion_ratio: 0.1 });
      expect((await get(keepAlive, portA, '/health/ready')).status).toBe(200);

      // The load: 4 clients, 60 requests, spread over both instances. A connection A refuses, or resets before
      // any answer (one that reached its listen queue just as the listener closed: the kernel resets those), goes
      // to the other instance, as a load balancer does; the count of tasks below proves none of those was run.
      const sent: Sent[] = [];
      let aDown = false;
      let next = 0;
      const clients = Array.from({ length: 4 }, async () => {
        while (next < 60) {
          const i = next++;
          const toA = i % 2 === 0 && !aDown;
          let result = await post(toA ? portA : portB, key, body);
          if (toA && (result.error === 'ECONNREFUSED' || result.error === 'ECONNRESET')) {
            aDown = true;
            result = await post(portB, key, body);
          }
          sent.push(result);
        }
      });
      await pollUntil(async () => sent.length, (n) => n >= 16, { what: 'the first answers' });
      await pollUntil(() => query<{ n: number; o: string }>(db, "SELECT count(*) FILTER (WHERE lease_owner LIKE $1)::int AS n, string_agg(DISTINCT state::text || ':' || coalesce(lease_owner, '-'), ' ') AS o FROM tasks WHERE state = 'running'", [`${a.process.pid}-%`]), (r) => r[0].n > 0, { what: `A (${a.process.pid}) to hold a running task (answers ${JSON.stringify(sent.slice(0, 3))})` });
      const stoppedAt = Date.now();
      a.process.kill('SIGTERM');
      await a.waitFor(/draining/);
      // readiness fails from the first moment, on a connection a load balancer already had open
      const ready = await get(keepAlive, portA, '/health/ready');
      expect(ready).toEqual({ status: 503, connection: 'close' });

      const exit = await a.exited;
      expect(exit.code).toBe(0);
      expect(Date.now() - stoppedAt).toBeLessThan(3000 + 1500);
      // A is gone: the tasks may fetch their image now, and B runs them all
      images.release();
      await Promise.all(clients);

      // every request was answered 200 (a refused connection was sent again to B, as a load balancer does)
      expect(sent.filter((s) => s.status !== 200)).toEqual([]);
      expect(a.output).toMatch(/handed back to the queue/);
      const ids = sent.map((s) => s.taskId!);
      const done = await pollUntil(
        () => query<{ state: string; n: number }>(db, 'SELECT state::text, count(*)::int AS n FROM tasks WHERE id = ANY($1::uuid[]) GROUP BY state', [ids]),
        (rows) => rows.length === 1 && rows[0].state === 'succeeded',
        { timeoutMs: 90_000, what: 'every accepted task to succeed on B' },
      );
      expect(done).toEqual([{ state: 'succeeded', n: 60 }]);
      // each finished exactly once, with one stored result
      const [files] = await query<{ n: number }>(db, "SELECT count(*)::int AS n FROM media WHERE task_id = ANY($1::uuid[]) AND role = 'image'", [ids]);
      expect(files.n).toBe(60);
      // and nothing ran that was not answered: a request sent again after a reset was not also run by A
      const [all] = await query<{ n: number }>(db, 'SELECT count(*)::int AS n FROM tasks');
      expect(all.n).toBe(60);
    } finally {
      keepAlive.destroy();
      await a.stop('SIGKILL').catch(() => undefined);
      await b.stop('SIGTERM').catch(() => undefined);
      await images.close();
      await db.drop();
      for (const dir of dirs) await rm(dir, { recursive: true, force: true });
    }
  }, 180_000);
});
