import PgBoss from 'pg-boss';
import { png } from '../support/images.js';
import { pollUntil } from '../support/poll.js';
import { startReceiver } from '../support/webhook-receiver.js';
import { api, createTestDatabase, queryDb as sql, startTestApp } from '../support/test-app.js';

const EXPAND = '/video-a/v1/images/editing/expand';
const LEASE_S = 3;
const body = async (extra: Record<string, unknown> = {}) => ({ image: (await png(320, 320)).toString('base64'), up_expansion_ratio: 0.1, bottom_expansion_ratio: 0.1, left_expansion_ratio: 0.1, right_expansion_ratio: 0.1, ...extra });

/**
 * A worker that takes a job and dies before claiming its task leaves the job "active" in pg-boss until
 * its expiry (an hour for tasks). The sweeper must notice within about two leases and queue the work again.
 */
describe('work whose job died before any worker claimed it', () => {
  it.each([
    ['taken by a worker that died before claiming it (active)', 'steal'],
    ['failed while the database was down (failed)', 'fail'],
    ['gone from the queue', 'delete'],
  ])('a waiting task whose job was %s finishes within 3 leases, once', async (_, how) => {
    const db = await createTestDatabase({ migrated: true });
    const front = await startTestApp({ ROLE: 'api' }, { db });
    let worker: Awaited<ReturnType<typeof startTestApp>> | undefined;
    const boss = new PgBoss({ connectionString: db.url, schema: 'pgboss', supervise: false, schedule: false });
    try {
      const key = await front.createKey();
      const id = (await api(front.url, 'POST', EXPAND, { key, body: await body() })).body.data.task_id as string;
      await boss.start();
      const [job] = await boss.fetch<{ taskId: string }>('expand.run');
      expect(job.data).toEqual({ taskId: id });
      const orphanedAt = Date.now();
      if (how === 'fail') await sql(db, "UPDATE pgboss.job SET state = 'failed', completed_on = now() WHERE id = $1", [job.id]);
      if (how === 'delete') await sql(db, 'DELETE FROM pgboss.job WHERE id = $1', [job.id]);
      // the stolen job stays active: the thief never completes it, as a killed worker would not
      await boss.stop({ graceful: false, wait: true, close: true });

      worker = await startTestApp({ ROLE: 'worker', WORKER_LEASE_S: String(LEASE_S) }, { db });
      const done = await pollUntil(() => api(front.url, 'GET', `${EXPAND}/${id}`, { key }), (r) => r.body.data.task_status === 'succeed', { timeoutMs: 3 * LEASE_S * 1000, what: 'the orphaned task to finish' });
      expect(done.body.data.task_result.images).toHaveLength(1);
      expect(Date.now() - orphanedAt).toBeLessThan(3 * LEASE_S * 1000);
      const [row] = await sql<{ attempts: number; job_id: string }>(db, 'SELECT attempts, job_id FROM tasks WHERE id = $1', [id]);
      expect(row.attempts).toBe(1); // run once
      expect(row.job_id).not.toBe(job.id); // by the new job
      expect(worker.logs.lines.some((l) => /re-queued: their job was taken/.test(String(l.msg)))).toBe(true);
    } finally {
      await boss.stop({ graceful: false, close: true }).catch(() => undefined);
      await worker?.close();
      await front.close();
      await db.drop();
    }
  }, 60_000);

  it('leaves a task whose job is merely queued alone', async () => {
    const db = await createTestDatabase({ migrated: true });
    const front = await startTestApp({ ROLE: 'api', WORKER_LEASE_S: '2' }, { db });
    try {
      const key = await front.createKey();
      const id = (await api(front.url, 'POST', EXPAND, { key, body: await body() })).body.data.task_id as string;
      await sql(db, "UPDATE tasks SET created_at = now() - interval '1 hour' WHERE id = $1", [id]);
      const [task] = await sql<{ job_id: string }>(db, 'SELECT job_id FROM tasks WHERE id = $1', [id]);
      // a sweeper on another instance (a worker with no free slot would look the same): nothing to re-queue
      const sweeper = await startTestApp({ ROLE: 'worker', WORKER_LEASE_S: '2', WORKER_CONCURRENCY: '1' }, { db });
      try {
        await pollUntil(() => api(front.url, 'GET', `${EXPAND}/${id}`, { key }), (r) => r.body.data.task_status === 'succeed', { what: 'the task' });
        const [after] = await sql<{ job_id: string; attempts: number }>(db, 'SELECT job_id, attempts FROM tasks WHERE id = $1', [id]);
        expect(after).toEqual({ job_id: task.job_id, attempts: 1 });
      } finally {
        await sweeper.close();
      }
    } finally {
      await front.close();
      await db.drop();
    }
  });

  it('a callback delivery whose job died is sent again within 3 leases, with the same webhook-id', async () => {
    const receiver = await startReceiver();
    const t = await startTestApp({ ALLOW_PRIVATE_URLS: 'true', WORKER_LEASE_S: String(LEASE_S) });
    try {
      const key = await t.createKey();
      const id = (await api(t.url, 'POST', EXPAND, { key, body: await body({ callback_url: `${receiver.url}/hook` }) })).body.data.task_id as string;
      await pollUntil(async () => receiver.received.length, (n) => n >= 2, { what: 'both notifications' });
      const [delivery] = await sql<{ id: string }>(t.db, "SELECT id FROM callback_deliveries WHERE task_id = $1 AND status = 'succeed'", [id]);

      // Its next attempt's job was taken by a sender that died before sending: the job stays active, unfinished.
      const boss = new PgBoss({ connectionString: t.db.url, schema: 'pgboss', supervise: false, schedule: false });
      await boss.start();
      const jobId = await boss.send('callback.deliver', { deliveryId: delivery.id }, { startAfter: 3600 });
      await boss.stop({ graceful: false, close: true });
      await sql(t.db, "UPDATE pgboss.job SET state = 'active', started_on = now(), start_after = now() WHERE id = $1", [jobId]);
      await sql(t.db, "UPDATE callback_deliveries SET state = 'pending', finished_at = NULL, next_attempt_at = now(), job_id = $2 WHERE id = $1", [delivery.id, jobId]);
      const orphanedAt = Date.now();
      const before = receiver.received.length;

      await pollUntil(async () => receiver.received.length, (n) => n > before, { timeoutMs: 3 * LEASE_S * 1000, what: 'the delivery to be sent again' });
      expect(Date.now() - orphanedAt).toBeLessThan(3 * LEASE_S * 1000);
      const again = receiver.received[receiver.received.length - 1];
      expect(again.headers['webhook-id']).toBe(delivery.id);
      // the receiver has the request before the sender has written down its answer
      await pollUntil(() => sql<{ state: string }>(t.db, 'SELECT state FROM callback_deliveries WHERE id = $1', [delivery.id]), (rows) => rows[0].state === 'delivered', { timeoutMs: 5000, what: 'the delivery to be recorded' });
    } finally {
      await t.close();
      await receiver.close();
    }
  }, 60_000);
});
