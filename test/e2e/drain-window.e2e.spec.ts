import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { TaskRunner } from '../../src/common/tasks/task-runner.js';
import { TaskSweeper } from '../../src/common/tasks/task-sweeper.js';
import { Child } from '../support/child-process.js';
import { freePort } from '../support/free-port.js';
import { startHeldFiles } from '../support/held-files.js';
import { png } from '../support/images.js';
import { pollUntil } from '../support/poll.js';
import { api, createKeyThrough, createTestDatabase, queryDb as query, startTestApp, type TestDatabase } from '../support/test-app.js';

const EXPAND = '/video-a/v1/images/editing/expand';
const ADMIN = 'admin-secret-0123456789';

interface TaskRow {
  state: string;
  lease_owner: string | null;
  attempts: number;
}

/**
 * The moments of a task's life a SIGTERM can find it in, driven deterministically: the test holds the
 * task's row lock, so the instance's claim is sent and stays unanswered exactly as long as the test wants.
 * The lease is far longer than the test: only the hand-back (or the sweep of a stopped worker's late
 * claim) can move the task to another instance in time.
 */
describe('the drain, when a claim is in flight', () => {
  let db: TestDatabase;
  let dir: string;
  let key: string;
  let common: Record<string, string>;
  let api_: Child;
  let body: string;

  beforeAll(async () => {
    db = await createTestDatabase({ migrated: true });
    dir = await mkdtemp(path.join(tmpdir(), 'mgw-drain-'));
    common = { DATABASE_URL: db.url, STORAGE_DRIVER: 'postgres', WORKER_LEASE_S: '120', SHUTDOWN_TIMEOUT_S: '4', ALLOW_PRIVATE_URLS: 'true', LOG_LEVEL: 'info' };
    // the tasks are accepted by an instance that runs no worker, so only the instance under test claims them
    const port = await freePort();
    api_ = Child.start('dist/main.js', [], { ...common, ROLE: 'api', ADMIN_API_KEY: ADMIN, PORT: String(port), DATA_DIR: path.join(dir, 'api') });
    await api_.waitFor(/listening on/);
    common.API = `http://127.0.0.1:${port}`;
    key = await createKeyThrough(common.API, ADMIN, 'drain');
    body = JSON.stringify({ image: (await png(320, 320)).toString('base64'), up_expansion_ratio: 0.1, bottom_expansion_ratio: 0.1, left_expansion_ratio: 0.1, right_expansion_ratio: 0.1 });
  }, 120_000);
  afterAll(async () => {
    await api_?.stop('SIGTERM').catch(() => api_.stop('SIGKILL'));
    await db.drop();
    await rm(dir, { recursive: true, force: true });
  });

  /** A task accepted (`rawBody`: the test's expand body unless given), its row locked by the test, and a worker instance started whose claim of it waits on that lock. */
  async function claimHeldUp(name: string, rawBody = body): Promise<{ id: string; lock: pg.Client; worker: Child }> {
    const accepted = await api(common.API, 'POST', EXPAND, { key, rawBody, headers: { 'content-type': 'application/json' } });
    expect(accepted.status).toBe(200);
    const id = accepted.body.data.task_id as string;
    const lock = new pg.Client({ connectionString: db.url });
    await lock.connect();
    await lock.query('BEGIN');
    await lock.query('SELECT id FROM tasks WHERE id = $1 FOR UPDATE', [id]);
    const worker = Child.start('dist/main.js', [], { ...common, ROLE: 'worker', PORT: String(await freePort()), DATA_DIR: path.join(dir, name) });
    await worker.waitFor(/listening on/);
    // the worker's claim is sent, and waits on the test's lock: the claim's own statement (it names `claimable`),
    // not another statement of the instance's start that touches the row (a sweep), which left no claim in flight
    // when the SIGTERM came and failed the test once on a loaded machine
    await pollUntil(
      () => query<{ n: number }>(db, "SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock' AND query LIKE '%claimable%' AND query LIKE '%lease_owner%'"),
      (rows) => rows[0].n === 1,
      { what: 'the worker to send its claim and wait on the row lock' },
    );
    return { id, lock, worker };
  }

  /** Another worker instance on the database, the one that finishes what the stopped one let go of (in the test's process: only the instance under test needs a process of its own, for its SIGTERM). */
  const otherInstance = () => startTestApp({ STORAGE_DRIVER: 'postgres', WORKER_LEASE_S: '120', ALLOW_PRIVATE_URLS: 'true', ROLE: 'worker' }, { db });

  const task = async (id: string) => (await query<TaskRow>(db, 'SELECT state::text, lease_owner, attempts FROM tasks WHERE id = $1', [id]))[0];

  it('a claim answered during the drain: the hand-back waits for it, so the task is handed back, not held', async () => {
    // the task's image waits on this server until the test lets it: once claimed, its step cannot end (and the
    // task succeed) before the hand-back, however slow the machine (a sandbox delay only made that likely)
    const images = await startHeldFiles('image/png', await png(320, 320));
    const fetched = JSON.stringify({ ...JSON.parse(body), image: `${images.url}/photo.png` });
    const { id, lock, worker } = await claimHeldUp('a', fetched);
    try {
      worker.process.kill('SIGTERM');
      await worker.waitFor(/1 claim\(s\) in flight/);
      // the claim is answered now, after the drain began and before the hand-back
      await lock.query('COMMIT');
      expect((await worker.exited).code).toBe(0);
      expect(worker.output).toMatch(/1 expand running task\(s\) handed back/);
      // handed back at once, with a job another instance takes now: not held by the stopped worker
      expect(await task(id)).toEqual({ state: 'running', lease_owner: '~abandoned', attempts: 1 });
      const [job] = await query<{ state: string }>(db, "SELECT j.state::text FROM tasks t JOIN pgboss.job j ON j.id = t.job_id AND j.name = 'expand.run' WHERE t.id = $1", [id]);
      expect(job.state).toBe('created');
    } finally {
      await lock.end();
      await worker.stop('SIGKILL').catch(() => undefined);
      // the other instance's fetch of the image is answered
      images.release();
    }
    const b = await otherInstance();
    try {
      await pollUntil(() => task(id), (t) => t.state === 'succeeded', { timeoutMs: 30_000, what: 'the task to succeed on the other instance' });
    } finally {
      await b.close();
      await images.close();
    }
  }, 120_000);

  it('a claim that lands after the instance stopped: the next sweep of another instance takes the task back, long before the lease ends', async () => {
    const { id, lock, worker } = await claimHeldUp('c');
    try {
      worker.process.kill('SIGTERM');
      // the drain waits for the claim, then gives up on it and stops
      expect((await worker.exited).code).toBe(0);
      expect(worker.output).toMatch(/1 claim\(s\) still unanswered at the hand-back/);
    } finally {
      // the stopped worker's claim can land only now
      await lock.query('COMMIT');
      await lock.end();
    }
    // it did land: the task is held by a worker that no longer exists, under a 120 s lease
    await pollUntil(() => task(id), (t) => t.state === 'running' && t.lease_owner !== null && t.lease_owner !== '~abandoned', { what: "the stopped worker's late claim" });
    const startedAt = Date.now();
    const b = await otherInstance();
    try {
      await pollUntil(() => task(id), (t) => t.state === 'succeeded', { timeoutMs: 30_000, what: 'the task to succeed on the other instance' });
      // well within its 120 s lease: the stopped worker's claim did not hold it
      expect(Date.now() - startedAt).toBeLessThan(30_000);
    } finally {
      await b.close();
    }
  }, 120_000);
});

describe("a sole instance's first sweep", () => {
  it('takes back what a previous run left, never a task this process already holds: the step runs once', async () => {
    // soleInstance: what the embedded database gives (this process owns it, so its first sweep voids old leases)
    const t = await startTestApp({ SANDBOX_DELAY_MS: '1500', STORAGE_DRIVER: 'postgres' }, { config: { soleInstance: true } });
    try {
      const key = await t.createKey('sole');
      const image = (await png(320, 320)).toString('base64');
      const submitted = await api(t.url, 'POST', EXPAND, { key, body: { image, up_expansion_ratio: 0.1, bottom_expansion_ratio: 0.1, left_expansion_ratio: 0.1, right_expansion_ratio: 0.1 } });
      const id = submitted.body.data.task_id as string;
      const worker = t.app.get(TaskRunner).worker;
      // a task this process claimed before its first sweep
      await pollUntil(() => query<TaskRow>(t.db, 'SELECT state::text, lease_owner, attempts FROM tasks WHERE id = $1', [id]), (rows) => rows[0].lease_owner === worker, { what: 'the task to be claimed' });
      await t.app.get(TaskSweeper).sweepAtStart();
      await t.app.get(TaskSweeper).sweep();
      const done = await pollUntil(() => query<TaskRow>(t.db, 'SELECT state::text, lease_owner, attempts FROM tasks WHERE id = $1', [id]), (rows) => rows[0].state === 'succeeded', { what: 'the task to succeed' });
      expect(done[0].attempts).toBe(1);
      expect(t.logs.lines.filter((l) => /finished too late|left running by a previous run/.test(String(l.msg)))).toEqual([]);
    } finally {
      await t.close();
    }
  });

  it('voids the lease of a previous run at once', async () => {
    const t = await startTestApp({ SANDBOX_DELAY_MS: '0', STORAGE_DRIVER: 'postgres', ROLE: 'api' }, { config: { soleInstance: true } });
    try {
      const key = await t.createKey('sole');
      const image = (await png(320, 320)).toString('base64');
      const submitted = await api(t.url, 'POST', EXPAND, { key, body: { image, up_expansion_ratio: 0.1, bottom_expansion_ratio: 0.1, left_expansion_ratio: 0.1, right_expansion_ratio: 0.1 } });
      const id = submitted.body.data.task_id as string;
      // as a previous run killed mid-task leaves it: running, under a lease that lasts another hour
      await query(t.db, "UPDATE tasks SET state = 'running', started_at = now(), attempts = 1, lease_owner = 'dead-run', lease_until = now() + interval '1 hour' WHERE id = $1", [id]);
      await t.app.get(TaskSweeper).sweepAtStart();
      await t.app.get(TaskSweeper).sweep();
      const [row] = await query<{ lease_owner: string; job: string }>(t.db, "SELECT t.lease_owner, j.state::text AS job FROM tasks t JOIN pgboss.job j ON j.id = t.job_id AND j.name = 'expand.run' WHERE t.id = $1", [id]);
      expect(row).toEqual({ lease_owner: '~abandoned', job: 'created' });
      expect(t.logs.lines.some((l) => /1 task\(s\) were left running by a previous run/.test(String(l.msg)))).toBe(true);
    } finally {
      await t.close();
    }
  });
});
