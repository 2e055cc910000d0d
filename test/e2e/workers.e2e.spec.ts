import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { TaskRunner } from '../../src/common/tasks/task-runner.js';
import { png } from '../support/images.js';
import { Child } from '../support/child-process.js';
import { freePort } from '../support/free-port.js';
import { startHeldFiles } from '../support/held-files.js';
import { pollUntil } from '../support/poll.js';
import { api, createKeyThrough, createTestDatabase, queryDb as query, startTestApp, type TestApp } from '../support/test-app.js';

const EXPAND = '/video-a/v1/images/editing/expand';
const ADMIN = 'admin-secret-0123456789';
/** An expand body; `image` an http(s) URL the task fetches when it runs, or (without it) the image inline. */
const body = async (n = 1, image?: string) => ({ image: image ?? (await png(320, 320)).toString('base64'), up_expansion_ratio: 0.1, bottom_expansion_ratio: 0.1, left_expansion_ratio: 0.1, right_expansion_ratio: 0.1, n });

describe('a worker killed mid-task', () => {
  it('leaves the task to be finished, exactly once, after a restart (kill -9)', async () => {
    const db = await createTestDatabase({ migrated: true });
    const port = await freePort();
    const env = { WORKER_LEASE_S: '2', ALLOW_PRIVATE_URLS: 'true', LOG_LEVEL: 'info' };
    const dataDir = await mkdtemp(path.join(tmpdir(), 'mgw-crash-'));
    const base = `http://127.0.0.1:${port}`;
    // the task's image waits on this server until the test lets it: the first worker cannot finish the task before
    // its kill, however slow the machine (a sandbox delay only made that likely)
    const files = await startHeldFiles('image/png', await png(320, 320));
    // the killed worker is a process of its own; the instance that finishes its task may be any other (here one in the test's process)
    const first = Child.start('dist/main.js', [], { ...env, ADMIN_API_KEY: ADMIN, DATABASE_URL: db.url, PORT: String(port), DATA_DIR: dataDir });
    let second: TestApp | undefined;
    try {
      await first.waitFor(/listening/);
      const key = await createKeyThrough(base, ADMIN, 'crash');
      const created = await api(base, 'POST', EXPAND, { key, body: await body(2, `${files.url}/photo.png`) });
      const id = created.body.data.task_id as string;
      await pollUntil(async () => files.waiting(), (n) => n === 1, { what: 'the task to start and ask for its image' });
      await first.stop('SIGKILL');
      // the next instance's fetch of the image is answered
      files.release();

      second = await startTestApp(env, { db });
      const done = await pollUntil(() => api(second!.url, 'GET', `${EXPAND}/${id}`, { key }), (r) => ['succeed', 'failed'].includes(r.body.data?.task_status), { timeoutMs: 60_000, what: 'the task to finish after the restart' });
      expect(done.body.data.task_status).toBe('succeed');
      expect(done.body.data.task_result.images).toHaveLength(2);

      const [row] = await query<{ attempts: number; files: number }>(db, 'SELECT attempts, (SELECT count(*)::int FROM media WHERE task_id = $1) AS files FROM tasks WHERE id = $1', [id]);
      expect(row).toEqual({ attempts: 2, files: 2 });
      const finishedByFirst = first.output.split('\n').filter((l) => l.includes('"expand task succeeded"') && l.includes(id)).length;
      const finishedBySecond = second.logs.lines.filter((l) => l.msg === 'expand task succeeded' && JSON.stringify(l).includes(id)).length;
      expect([finishedByFirst, finishedBySecond]).toEqual([0, 1]);
    } finally {
      await first.stop('SIGKILL').catch(() => undefined);
      await second?.close();
      await files.close();
      await db.drop();
      await rm(dataDir, { recursive: true, force: true });
    }
  });
});

describe('two instances on one database', () => {
  it('share the work without running any task twice', async () => {
    const db = await createTestDatabase({ migrated: true });
    const env = { WORKER_CONCURRENCY: '2', ALLOW_PRIVATE_URLS: 'true' };
    // every task's image waits on this server until the test lets it: an instance runs at most 2 (WORKER_CONCURRENCY),
    // so 4 waiting at once are 2 on each, however slow the machine (a sandbox delay only made sharing likely)
    const files = await startHeldFiles('image/png', await png(320, 320));
    const a = await startTestApp(env, { db });
    const b = await startTestApp(env, { db });
    try {
      const key = await a.createKey();
      const ids: string[] = [];
      for (let i = 0; i < 12; i++) ids.push((await api(i % 2 ? b.url : a.url, 'POST', EXPAND, { key, body: await body(1, `${files.url}/photo-${i}.png`) })).body.data.task_id);
      await pollUntil(async () => files.waiting(), (n) => n === 4, { what: 'both instances to run two tasks each' });
      files.release();
      await pollUntil(() => query<{ n: number }>(db, "SELECT count(*)::int AS n FROM tasks WHERE state = 'succeeded'"), (rows) => rows[0].n === 12, { timeoutMs: 60_000, what: 'all tasks' });
      const attempts = await query<{ attempts: number }>(db, 'SELECT attempts FROM tasks');
      expect(attempts.map((r) => r.attempts)).toEqual(Array(12).fill(1));
      // the worker that finishes a task stays recorded as its lease owner
      const finishers = await query<{ id: string; lease_owner: string }>(db, 'SELECT id, lease_owner FROM tasks');
      const doneBy = (app: typeof a) => new Set(finishers.filter((r) => r.lease_owner === app.app.get(TaskRunner).worker).map((r) => r.id));
      const [byA, byB] = [doneBy(a), doneBy(b)];
      expect(byA.size).toBeGreaterThan(0);
      expect(byB.size).toBeGreaterThan(0);
      expect([...byA].filter((id) => byB.has(id))).toEqual([]);
      expect([...byA, ...byB].sort()).toEqual([...ids].sort());
    } finally {
      await files.close(); // a held step would keep its app's close waiting
      await b.close();
      await a.close();
      await db.drop();
    }
  });

  it('splits the roles: an api-only instance queues, a worker-only instance runs', async () => {
    const db = await createTestDatabase();
    const api1 = await startTestApp({ ROLE: 'api' }, { db });
    try {
      const key = await api1.createKey();
      const created = await api(api1.url, 'POST', EXPAND, { key, body: await body() });
      const id = created.body.data.task_id;
      // nothing runs it yet
      expect((await api(api1.url, 'GET', `${EXPAND}/${id}`, { key })).body.data.task_status).toBe('submitted');
      const worker = await startTestApp({ ROLE: 'worker' }, { db });
      try {
        const done = await pollUntil(() => api(api1.url, 'GET', `${EXPAND}/${id}`, { key }), (r) => r.body.data.task_status === 'succeed', { what: 'the worker instance' });
        expect(done.body.data.task_result.images).toHaveLength(1);
        expect((await api(worker.url, 'GET', `${EXPAND}/${id}`, { key })).status).toBe(404); // no API routes on a worker
        expect((await api(worker.url, 'GET', '/health/ready')).status).toBe(200); // but its health checks
      } finally {
        await worker.close();
      }
    } finally {
      await api1.close();
      await db.drop();
    }
  });
});
