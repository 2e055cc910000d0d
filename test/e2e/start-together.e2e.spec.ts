import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Child } from '../support/child-process.js';
import { freePort } from '../support/free-port.js';
import { api, createTestDatabase } from '../support/test-app.js';

const ROLES = ['api', 'worker', 'all'] as const;

/**
 * A first install on Kubernetes starts the api and worker Deployments at the same moment on an empty
 * database: every instance must come up (migrations and the queue's tables are created by one of them
 * at a time), whatever order their start-up steps interleave in.
 */
describe('instances started at the same moment on an empty database', () => {
  it.each([1, 2, 3])('all three become ready (round %i)', async () => {
    const db = await createTestDatabase();
    const dir = await mkdtemp(path.join(tmpdir(), 'mgw-together-'));
    const ports = await Promise.all(ROLES.map(() => freePort()));
    const children = ROLES.map((role, i) =>
      Child.start('dist/main.js', [], { DATABASE_URL: db.url, ROLE: role, PORT: String(ports[i]), DATA_DIR: path.join(dir, role), STORAGE_DRIVER: 'postgres', LOG_LEVEL: 'warn' }),
    );
    try {
      await Promise.all(children.map((c) => c.waitFor(/listening on/, 90_000)));
      for (const port of ports) expect((await api(`http://127.0.0.1:${port}`, 'GET', '/health/ready')).status).toBe(200);
      for (const c of children) expect(c.output).not.toMatch(/Failed to start|deadlock/);
    } finally {
      await Promise.all(children.map((c) => c.stop('SIGTERM').catch(() => c.stop('SIGKILL'))));
      await db.drop();
      await rm(dir, { recursive: true, force: true });
    }
  }, 120_000);
});
