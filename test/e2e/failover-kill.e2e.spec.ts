import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Child } from '../support/child-process.js';
import type { FakeUpstream } from '../support/fake-upstreams.js';
import { startFakeLuma } from '../support/vendors/luma/luma.fake.js';
import type { FakeVideoVendor } from '../support/vendors/video-fake.js';
import { startFakeKlingVideo } from '../support/vendors/kling/kling.fake.js';
import { freePort } from '../support/free-port.js';
import { pollUntil } from '../support/poll.js';
import { api, createKeyThrough } from '../support/api-client.js';
import { createTestDatabase, queryDb, type TestDatabase } from '../support/test-database.js';

const GEN = '/video-b/v1/generations';
const ADMIN = 'admin-secret-0123456789';
const KLING: [string, string] = ['ak-kill-000000001', 'sk-kill-secret-0001'];
const LUMA_KEY = 'luma-kill-key-0123456';
const GENERATIONS = 30;
/** The worker is killed (SIGKILL) once Kling has had this many create requests, each time, and started again. */
const KILL_AT = [6, 14, 22];

/**
 * A worker killed while generations fail over: Luma accepts each generation and then fails it (its own
 * error), Kling makes it. The worker process is killed three times while Kling's creates are in flight (each
 * held 400 ms before Kling makes it). Before: a generation whose Kling create was in flight when the worker
 * died failed ("the upstream never answered the create request"), though Kling had made it (and billed it)
 * under our id; a kill between Luma's id being saved and its accepted attempt being written could send Luma a
 * second create. Now every generation completes, made once by Kling (found by its external_task_id when the
 * answer was lost), sent once to Luma, and charged once.
 */
describe('a worker killed three times during failovers', () => {
  let db: TestDatabase;
  let luma: FakeUpstream;
  let kling: FakeVideoVendor;
  let dir: string;
  beforeAll(async () => {
    luma = await startFakeLuma(LUMA_KEY);
    luma.knobs.pollsUntilDone = 1;
    luma.knobs.failWith = 'Internal server error: the job crashed';
    kling = await startFakeKlingVideo(...KLING);
    kling.knobs.pollsUntilDone = 1;
    kling.knobs.createDelayMs = 400;
    db = await createTestDatabase({ migrated: true });
    dir = await mkdtemp(path.join(tmpdir(), 'mgw-failover-kill-'));
  });
  afterAll(async () => {
    await Promise.all([luma.close(), kling.close()]);
    await db.drop();
    await rm(dir, { recursive: true, force: true });
  });

  it(`${GENERATIONS} generations fail over from Luma to Kling: all complete, each made once by Kling and never sent twice to Luma, charged once`, async () => {
    const env = {
      DATABASE_URL: db.url,
      VIDEO_PROVIDER: 'relay',
      ADMIN_API_KEY: ADMIN,
      CHANNEL_SECRET_KEY: 'c'.repeat(64),
      OUTBOUND_ALLOW_HOSTS: '127.0.0.1',
      RELAY_POLL_MS: '100',
      // a killed worker's tasks are taken again within about two leases
      WORKER_LEASE_S: '6',
      DEFAULT_REQUESTS_PER_MINUTE: '1000000',
      LOG_LEVEL: 'warn',
      DATA_DIR: dir, // one storage for both, as a shared volume or bucket would be
    };
    const start = async (role: string) => {
      const port = await freePort();
      const child = Child.start('dist/main.js', [], { ...env, ROLE: role, PORT: String(port) });
      await child.waitFor(/listening on/, 90_000);
      return { child, url: `http://127.0.0.1:${port}` };
    };
    const api1 = await start('api');
    let worker = await start('worker');
    // every worker's output, the killed ones' too: what a failed generation's steps logged
    const workers = [worker.child];
    try {
      const add = async (name: string, priority: number, model: string, body: Record<string, unknown>) => {
        const models = [{ name: model, vendor_model: model, price: { per_second: { '720p': 0.1 } } }];
        const res = await api(api1.url, 'POST', '/admin/channels', { key: ADMIN, body: { name, operations: ['video'], priority, models, ...body } });
        expect(res.status).toBe(201);
      };
      await add('luma', 10, 'ray-2', { protocol: 'luma', base_url: luma.url, credentials: { api_key: LUMA_KEY } });
      await add('kling', 1, 'kling-v1-6', { protocol: 'kling', base_url: kling.url, credentials: { access_key: KLING[0], secret_key: KLING[1] } });
      const key = await createKeyThrough(api1.url, ADMIN, 'failover-kill');

      const ids: string[] = [];
      for (let i = 0; i < GENERATIONS; i++) {
        const res = await api(api1.url, 'POST', GEN, { key, body: { prompt: `generation ${i}`, resolution: '720p', duration: '5s', aspect_ratio: '16:9' } });
        expect(res.status).toBe(201);
        ids.push(res.body.id as string);
      }
      for (const at of KILL_AT) {
        await pollUntil(async () => kling.createRequests ?? 0, (n) => n >= at, { timeoutMs: 120_000, what: `Kling's create request ${at}` });
        worker.child.process.kill('SIGKILL');
        await worker.child.exited;
        worker = await start('worker');
        workers.push(worker.child);
      }
      const states = () => queryDb<{ state: string; n: number }>(db, 'SELECT state, count(*)::int AS n FROM tasks WHERE id = ANY($1::uuid[]) GROUP BY state', [ids]);
      const final = await pollUntil(states, (rows) => rows.every((r) => r.state === 'succeeded' || r.state === 'failed') && rows.reduce((n, r) => n + r.n, 0) === GENERATIONS, {
        timeoutMs: 240_000,
        intervalMs: 1000,
        what: 'every generation to end',
      });
      // a failure names why each failed (its message and how many steps it took)
      const failed = await queryDb(db, "SELECT message, attempts, count(*)::int AS n FROM tasks WHERE id = ANY($1::uuid[]) AND state = 'failed' GROUP BY 1, 2", [ids]);
      // and, should one fail, its attempts and what the workers logged of it (at warn: the step's own account)
      const failedIds = (await queryDb<{ id: string }>(db, "SELECT id FROM tasks WHERE id = ANY($1::uuid[]) AND state = 'failed'", [ids])).map((r) => r.id);
      const why = failedIds.length
        ? {
            attempts: await queryDb(db, 'SELECT task_id, at, outcome, message, upstream_id FROM task_attempts WHERE task_id = ANY($1::uuid[]) ORDER BY at', [failedIds]),
            rows: await queryDb(db, 'SELECT id, attempts, created_at, started_at, deadline_at, finished_at, lease_owner, upstream_id, submit_started_at FROM tasks WHERE id = ANY($1::uuid[])', [failedIds]),
            logs: workers.map((w, i) => `worker ${i}:\n${w.output.split('\n').filter((l) => failedIds.some((id) => l.includes(id))).join('\n')}`),
          }
        : undefined;
      expect({ final, failed, why }).toEqual({ final: [{ state: 'succeeded', n: GENERATIONS }], failed: [], why: undefined });
      for (const [i, id] of ids.entries()) {
        const byKling = [...kling.created.values()].filter((c) => c.body.external_task_id === id).length;
        const byLuma = [...luma.created.values()].filter((c) => c.body.prompt === `generation ${i}`).length;
        // Luma never twice (a kill after the create was marked but before it left leaves Luma none: it fails over unsent)
        expect([id, byKling, byLuma <= 1]).toEqual([id, 1, true]);
      }
      // charged once each: 5 s at PRICE_VIDEO_SECOND (1)
      expect((await api(api1.url, 'GET', '/usage', { key })).body.credits.used).toBe(GENERATIONS * 5);
    } finally {
      await worker.child.stop('SIGTERM').catch(() => worker.child.stop('SIGKILL'));
      await api1.child.stop('SIGTERM').catch(() => api1.child.stop('SIGKILL'));
    }
  }, 420_000);
});
