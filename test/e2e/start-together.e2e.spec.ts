import { mkdtemp, rm } from 'node:fs/promises';
import pg from 'pg';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Child } from '../support/child-process.js';
import { freePort } from '../support/free-port.js';
import { pollUntil } from '../support/poll.js';
import { api } from '../support/api-client.js';
import { createTestDatabase } from '../support/test-database.js';

const ROLES = ['api', 'worker', 'all'] as const;
/** The advisory lock under which an instance starts the job queue and creates its queues (QueueService). */
const QUEUE_SETUP_LOCK_ID = 72_804_116;

/**
 * A first install on Kubernetes starts the api and worker Deployments at the same moment on an empty
 * database: every instance must come up (migrations and the queue's tables are created by one of them
 * at a time), whatever order their start-up steps interleave in. The orders that broke it are made to
 * happen rather than hoped for: the queue's set-up below (the test holds its lock), the migrations in
 * migrator.e2e (four runs at once), the first seal of the secrets in sealed-secrets.e2e (two instances at
 * once). A case that only started three instances and let them interleave as they happen proved nothing the
 * case below does not (its three instances migrate at once, then wait at the queue's set-up, then all come up),
 * at the cost of three more process starts.
 */
describe('instances started at the same moment on an empty database', () => {
  /**
   * Deterministic form of the race: the test holds the set-up lock while three instances start, so each
   * migrates (at once with the others) and reaches its queue set-up and waits. No queue may exist then
   * (pg-boss's scheduler creates one of its own during its start: outside the lock it collides with another
   * instance creating ours); once the lock is let go, all three come up.
   */
  it('all three become ready, and create no queue outside the set-up lock', async () => {
    const db = await createTestDatabase();
    const dir = await mkdtemp(path.join(tmpdir(), 'mgw-together-'));
    const holder = new pg.Client({ connectionString: db.url });
    await holder.connect();
    await holder.query('SELECT pg_advisory_lock($1)', [QUEUE_SETUP_LOCK_ID]);
    const ports = await Promise.all(ROLES.map(() => freePort()));
    const children = ROLES.map((role, i) =>
      Child.start('dist/main.js', [], { DATABASE_URL: db.url, ROLE: role, PORT: String(ports[i]), DATA_DIR: path.join(dir, role), STORAGE_DRIVER: 'postgres', LOG_LEVEL: 'warn' }),
    );
    try {
      const waiting = async () =>
        Number(
          (await holder.query(`SELECT count(*)::int AS n FROM pg_locks WHERE locktype = 'advisory' AND objid = $1 AND NOT granted`, [QUEUE_SETUP_LOCK_ID])).rows[0].n,
        );
      await pollUntil(waiting, (n) => n === ROLES.length, { timeoutMs: 60_000, what: 'all three instances to wait for the set-up lock' });
      const queues = await holder.query(`SELECT to_regclass('pgboss.queue') IS NOT NULL AS present`);
      if (queues.rows[0].present) expect((await holder.query('SELECT name FROM pgboss.queue')).rows).toEqual([]);
      await holder.query('SELECT pg_advisory_unlock($1)', [QUEUE_SETUP_LOCK_ID]);
      await Promise.all(children.map((c) => c.waitFor(/listening on/, 90_000)));
      for (const port of ports) expect((await api(`http://127.0.0.1:${port}`, 'GET', '/health/ready')).status).toBe(200);
      for (const c of children) expect(c.output).not.toMatch(/Failed to start|deadlock/);
    } finally {
      await holder.end().catch(() => undefined);
      await Promise.all(children.map((c) => c.stop('SIGTERM').catch(() => c.stop('SIGKILL'))));
      await db.drop();
      await rm(dir, { recursive: true, force: true });
    }
  }, 120_000);
});
