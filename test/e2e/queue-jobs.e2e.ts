import { randomUUID } from 'node:crypto';
import { QueueService } from '../../src/infra/queue/queue.service.js';
import { PrismaService } from '../../src/infra/prisma/prisma.service.js';
import { Statement } from '../../src/infra/prisma/statement.js';
import { queryDb, startTestApp, type TestApp } from '../support/test-app.js';

/**
 * A task's job is written by our own SQL in the statement that inserts the task (QueueService.jobRowsSql),
 * not by pg-boss's send(): the row must be the one send() writes, or pg-boss would retry, expire and
 * archive it differently.
 */
describe('jobs written with the task', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp({ ROLE: 'api' }); // no worker takes the jobs away
  });
  afterAll(() => t.close());

  it('are the rows pg-boss send() writes, with the priority asked for', async () => {
    for (const name of ['expand.run', 'video.run', 'audio.run'] as const) {
      const [bySend, byOurs] = [randomUUID(), randomUUID()];
      const payload = (id: string) => ({ taskId: id });
      await t.app.get(QueueService).send(name, payload(bySend), { id: bySend, priority: -3 });
      const s = new Statement();
      const sql = QueueService.jobRowsSql(`(SELECT ${s.param(byOurs)}::uuid AS id, ${s.param(name)}::text AS name, ${s.param(JSON.stringify(payload(byOurs)))}::jsonb AS data, -3 AS priority)`);
      await t.app.get(PrismaService).pool.query(sql, s.values);
      const rows = await queryDb<Record<string, unknown>>(
        t.db,
        `SELECT id, name, priority, state, retry_limit, retry_count, retry_delay, retry_backoff, expire_in::text, policy, dead_letter, singleton_key, singleton_on,
                round(extract(epoch FROM keep_until - start_after)) AS keep_s, start_after <= now() AS due, data
         FROM pgboss.job WHERE id = ANY($1::uuid[]) ORDER BY id = $2 DESC`,
        [[bySend, byOurs], bySend],
      );
      expect(rows).toHaveLength(2);
      const strip = ({ id: _, data: __, ...rest }: Record<string, unknown>) => rest;
      expect(strip(rows[1])).toEqual(strip(rows[0]));
      expect(rows[1].data).toEqual(payload(byOurs));
      expect(rows[1].priority).toBe(-3);
    }
  });
});
