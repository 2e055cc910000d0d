import pg from 'pg';
import { applyMigrations } from '../../src/infra/database/migrator.js';
import { createTestDatabase, type TestDatabase } from '../support/test-app.js';

const STORED = 40_000;

/**
 * Flat at scale: every query that serves a request or a sweeper finds its rows through an index, so its
 * cost does not grow with the tasks stored. Checked on the plans PostgreSQL chooses for the statements the
 * service runs (the same SQL, or for Prisma's queries the SQL they compile to), with many stored tasks.
 */
describe('query plans with many stored tasks', () => {
  let db: TestDatabase;
  let client: pg.Client;

  beforeAll(async () => {
    db = await createTestDatabase();
    await applyMigrations(db.url, { info: () => undefined, warn: () => undefined });
    client = new pg.Client({ connectionString: db.url });
    await client.connect();
    const common = `now() - make_interval(secs => i), now() - make_interval(secs => i), now() + interval '1 hour'`;
    await client.query(
      `INSERT INTO expand_tasks (id, owner, external_task_id, status, up_ratio, bottom_ratio, left_ratio, right_ratio, n, created_at, updated_at, deadline_at, finished_at, started_at)
       SELECT gen_random_uuid(), 'o' || (i % 3), 'ext-' || i, (CASE WHEN i % 50 = 0 THEN 'processing' ELSE 'succeed' END)::expand_task_status, 0.1, 0.1, 0.1, 0.1, 1, ${common},
              CASE WHEN i % 50 = 0 THEN NULL ELSE now() - make_interval(secs => i) END, now() - make_interval(secs => i)
       FROM generate_series(1, ${STORED}) i`,
    );
    await client.query(
      `INSERT INTO video_generations (id, owner, state, prompt, aspect_ratio, loop, enhance, created_at, updated_at, deadline_at, finished_at)
       SELECT gen_random_uuid(), 'o' || (i % 3), 'completed', 'p', '16:9', false, true, ${common}, now() - make_interval(secs => i) FROM generate_series(1, ${STORED}) i`,
    );
    await client.query(
      `INSERT INTO audio_uploads (id, owner, url, status, created_at, updated_at, deadline_at)
       SELECT gen_random_uuid(), 'o' || (i % 3), 'https://example.com/a.mp3', 'ready', ${common} FROM generate_series(1, ${STORED}) i`,
    );
    await client.query(
      `INSERT INTO media (id, owner, task_id, role, index, content_type, size_bytes, driver, storage_key)
       SELECT gen_random_uuid(), owner, id, 'image', 0, 'image/png', 1000, 'local', id || '/image-0.png' FROM expand_tasks`,
    );
    await client.query(
      `INSERT INTO callback_deliveries (id, owner, task_kind, task_id, sequence, status, url, payload, state)
       SELECT gen_random_uuid(), owner, 'expand', id, 1, 'succeed', 'https://example.com/hook', '{}', 'delivered' FROM expand_tasks`,
    );
    await client.query('ANALYZE');
  }, 120_000);
  afterAll(async () => {
    await client.end();
    await db.drop();
  });

  /** The tables the plan reads whole (sequential scans), among those that grow with the tasks. */
  async function seqScans(sql: string, params: unknown[] = []): Promise<string[]> {
    const { rows } = await client.query<{ 'QUERY PLAN': [{ Plan: PlanNode }] }>(`EXPLAIN (FORMAT JSON) ${sql}`, params);
    const found: string[] = [];
    const walk = (node: PlanNode) => {
      if (node['Node Type'] === 'Seq Scan' && ['expand_tasks', 'video_generations', 'audio_uploads', 'media', 'callback_deliveries'].includes(node['Relation Name'] ?? '')) found.push(node['Relation Name']!);
      for (const child of node.Plans ?? []) walk(child);
    };
    walk(rows[0]['QUERY PLAN'][0].Plan);
    return found;
  }

  const anId = async (table: string) => (await client.query(`SELECT id FROM ${table} LIMIT 1`)).rows[0].id as string;

  it.each([
    ['expand: by task_id or external_task_id', 'SELECT * FROM expand_tasks WHERE owner = $1 AND (id = $2::uuid OR external_task_id = $3) ORDER BY created_at LIMIT 1', async () => ['o1', await anId('expand_tasks'), 'ext-77']],
    ['expand: list page 1', 'SELECT * FROM expand_tasks WHERE owner = $1 ORDER BY created_at DESC, id DESC LIMIT 30 OFFSET 0', async () => ['o1']],
    ['expand: list by external_task_id', 'SELECT * FROM expand_tasks WHERE owner = $1 AND external_task_id = $2 ORDER BY created_at DESC, id DESC LIMIT 30', async () => ['o1', 'ext-7']],
    ['video: by id', 'SELECT * FROM video_generations WHERE id = $1::uuid AND owner = $2 AND deleted_at IS NULL', async () => [await anId('video_generations'), 'o1']],
    ['video: list page', 'SELECT * FROM video_generations WHERE owner = $1 AND deleted_at IS NULL ORDER BY created_at DESC, id DESC LIMIT 11 OFFSET 0', async () => ['o1']],
    ['audio: by id', 'SELECT * FROM audio_uploads WHERE id = $1::uuid AND owner = $2', async () => [await anId('audio_uploads'), 'o1']],
    ['sweeper: overdue', "SELECT id FROM expand_tasks WHERE status IN ('submitted', 'processing') AND started_at IS NOT NULL AND deadline_at < now() LIMIT 500", async () => []],
    ['sweeper: abandoned', "SELECT id FROM video_generations WHERE state = 'dreaming' AND lease_until < now() LIMIT 500", async () => []],
    ['sweeper: orphaned', "SELECT id FROM audio_uploads t WHERE t.status = 'pending' AND t.lease_until IS NULL AND t.created_at < now() - interval '5 seconds' ORDER BY t.created_at LIMIT 200", async () => []],
    ['claim: running under a cap', "SELECT count(*) FROM expand_tasks WHERE status = 'processing' AND started_at IS NOT NULL", async () => []],
    ['retention: media to expire', 'SELECT id FROM expand_tasks WHERE finished_at < $1 AND media_expired_at IS NULL', async () => [new Date(Date.now() - 30 * 86400_000)]],
    ['retention: video media to expire', 'SELECT id FROM video_generations WHERE finished_at < $1 AND media_expired_at IS NULL', async () => [new Date(Date.now() - 30 * 86400_000)]],
    ['usage: an owner this month', 'SELECT count(*) FROM expand_tasks WHERE owner = $1 AND created_at >= $2 AND created_at < $3', async () => ['o1', new Date(Date.now() - 3600_000), new Date()]],
    ['usage: every owner by day', 'SELECT owner, count(*) FROM video_generations WHERE created_at >= $1 AND created_at < $2 GROUP BY owner', async () => [new Date(Date.now() - 3600_000), new Date(Date.now() - 1800_000)]],
    ['media of tasks', 'SELECT * FROM media WHERE task_id = ANY($1::uuid[])', async () => [[await anId('expand_tasks')]]],
    ['callbacks due', "SELECT id FROM callback_deliveries WHERE state = 'pending' AND next_attempt_at <= now() LIMIT 50", async () => []],
  ])('%s reads through an index', async (_name, sql, params) => {
    expect(await seqScans(sql, await params())).toEqual([]);
  });

  it('the check itself sees a sequential scan when there is no index to use', async () => {
    expect(await seqScans("SELECT * FROM expand_tasks WHERE prompt = 'x'")).toEqual(['expand_tasks']);
  });
});

interface PlanNode {
  'Node Type': string;
  'Relation Name'?: string;
  Plans?: PlanNode[];
}
