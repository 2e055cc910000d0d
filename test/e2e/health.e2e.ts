import { type ChildProcess, spawn } from 'node:child_process';
import { availableParallelism } from 'node:os';
import { pollUntil } from '../support/poll.js';
import { startTcpProxy } from '../support/tcp-proxy.js';
import { adminQuery, api, createTestDatabase, startTestApp } from '../support/test-app.js';

describe('health', () => {
  it('answers /health and /health/ready without a key while the database answers', async () => {
    const t = await startTestApp();
    try {
      const live = await api(t.url, 'GET', '/health');
      expect(live.status).toBe(200);
      expect(live.body.status).toBe('ok');
      const ready = await api(t.url, 'GET', '/health/ready');
      expect(ready.status).toBe(200);
      expect(ready.body.details.database.status).toBe('up');
      // a bad key on a public route does not matter
      expect((await api(t.url, 'GET', '/health/ready', { key: 'nonsense' })).status).toBe(200);
    } finally {
      await t.close();
    }
  });

  it('answers /health/ready with 503/5001 when the database is gone, while /health stays up', async () => {
    const db = await createTestDatabase({ migrated: true });
    const t = await startTestApp({}, { db });
    try {
      await adminQuery(`DROP DATABASE ${db.name} WITH (FORCE)`);
      const ready = await api(t.url, 'GET', '/health/ready');
      expect(ready.status).toBe(503);
      expect(ready.body).toEqual({ code: 5001, message: 'Not ready: the database does not answer', request_id: ready.headers.get('x-request-id') });
      expect((await api(t.url, 'GET', '/health')).status).toBe(200);
    } finally {
      await t.close().catch(() => undefined);
      await db.drop();
    }
  });

  it('stays ready while the CPUs are saturated and the database answers slowly, and turns 503 within seconds of the database stopping', async () => {
    const db = await createTestDatabase({ migrated: true });
    const url = new URL(db.url);
    const proxy = await startTcpProxy({ host: url.hostname, port: Number(url.port) });
    url.port = String(proxy.port);
    const t = await startTestApp({}, { db: { ...db, url: url.toString() } });
    const burners: ChildProcess[] = [];
    try {
      // the check's own connection is made while the database is quick (a connection's handshake takes several round trips)
      expect((await api(t.url, 'GET', '/health/ready')).status).toBe(200);
      // every core busy twice over, and each of the database's answers held 1.2 s each way: SELECT 1 takes 2.4 s or more
      for (let i = 0; i < 2 * availableParallelism(); i++) burners.push(spawn(process.execPath, ['-e', 'for (;;) {}'], { stdio: 'ignore' }));
      proxy.delayMs = 1200;
      for (let i = 0; i < 6; i++) {
        const ready = await api(t.url, 'GET', '/health/ready');
        expect([i, ready.status, ready.body.status]).toEqual([i, 200, 'ok']);
      }
      // the database stops: its connections dropped, new ones refused
      await proxy.close();
      const down = await pollUntil(() => api(t.url, 'GET', '/health/ready'), (r) => r.status === 503, { timeoutMs: 10_000, what: 'readiness to turn 503' });
      expect(down.body.message).toBe('Not ready: the database does not answer');
    } finally {
      for (const burner of burners) burner.kill('SIGKILL');
      await proxy.close();
      await t.close().catch(() => undefined);
      await db.drop();
    }
  });
});
