import pg from 'pg';
import { FIND_UNENDED_BY_FINGERPRINT_SQL } from '../../src/common/tasks/task.repository.js';
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
    const expandParams = `'{"up_ratio": 0.1, "bottom_ratio": 0.1, "left_ratio": 0.1, "right_ratio": 0.1, "n": 1, "watermark": false}'`;
    await client.query(
      `INSERT INTO tasks (id, kind, owner, external_id, state, params, created_at, updated_at, deadline_at, finished_at, started_at)
       SELECT gen_random_uuid(), 'expand', 'o' || (i % 3), 'ext-' || i, (CASE WHEN i % 50 = 0 THEN 'running' ELSE 'succeeded' END)::task_state, ${expandParams}, ${common},
              CASE WHEN i % 50 = 0 THEN NULL ELSE now() - make_interval(secs => i) END, now() - make_interval(secs => i)
       FROM generate_series(1, ${STORED}) i`,
    );
    await client.query(
      `INSERT INTO tasks (id, kind, owner, state, params, created_at, updated_at, deadline_at, finished_at)
       SELECT gen_random_uuid(), 'video', 'o' || (i % 3), 'succeeded', '{"prompt": "p", "aspectRatio": "16:9", "loop": false, "model": "ray-2", "door": "luma"}',
              ${common}, now() - make_interval(secs => i) FROM generate_series(1, ${STORED}) i`,
    );
    await client.query(
      `INSERT INTO tasks (id, kind, owner, state, params, created_at, updated_at, deadline_at)
       SELECT gen_random_uuid(), 'audio', 'o' || (i % 3), 'succeeded', '{"url": "https://example.com/a.mp3"}', ${common} FROM generate_series(1, ${STORED}) i`,
    );
    await client.query(
      `INSERT INTO media (id, owner, task_id, role, index, content_type, size_bytes, driver, storage_key)
       SELECT gen_random_uuid(), owner, id, 'image', 0, 'image/png', 1000, 'local', id || '/image-0.png' FROM tasks WHERE kind = 'expand'`,
    );
    await client.query(
      `INSERT INTO callback_deliveries (id, owner, task_kind, task_id, sequence, status, url, payload, state)
       SELECT gen_random_uuid(), owner, 'expand', id, 1, 'succeed', 'https://example.com/hook', '{}', 'delivered' FROM tasks WHERE kind = 'expand'`,
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
      if (node['Node Type'] === 'Seq Scan' && ['tasks', 'media', 'callback_deliveries'].includes(node['Relation Name'] ?? '')) found.push(node['Relation Name']!);
      for (const child of node.Plans ?? []) walk(child);
    };
    walk(rows[0]['QUERY PLAN'][0].Plan);
    return found;
  }

  const anId = async (kind: string) => (await client.query('SELECT id FROM tasks WHERE kind = $1 LIMIT 1', [kind])).rows[0].id as string;

  it.each([
    ['expand: by task_id or external_task_id', "SELECT * FROM tasks WHERE kind = 'expand' AND owner = $1 AND deleted_at IS NULL AND (id = $2::uuid OR external_id = $3) ORDER BY created_at LIMIT 1", async () => ['o1', await anId('expand'), 'ext-77']],
    ['expand: list page 1', "SELECT * FROM tasks WHERE kind = 'expand' AND owner = $1 AND deleted_at IS NULL ORDER BY created_at DESC, id DESC LIMIT 30 OFFSET 0", async () => ['o1']],
    ['expand: list by external_task_id', "SELECT * FROM tasks WHERE kind = 'expand' AND owner = $1 AND deleted_at IS NULL AND external_id = $2 ORDER BY created_at DESC, id DESC LIMIT 30", async () => ['o1', 'ext-7']],
    ['video: by id', "SELECT * FROM tasks WHERE id = $1::uuid AND kind = 'video' AND owner = $2 AND deleted_at IS NULL", async () => [await anId('video'), 'o1']],
    ['video: list page', "SELECT * FROM tasks WHERE kind = 'video' AND owner = $1 AND deleted_at IS NULL ORDER BY created_at DESC, id DESC LIMIT 11 OFFSET 0", async () => ['o1']],
    ['audio: by id', "SELECT * FROM tasks WHERE id = $1::uuid AND kind = 'audio' AND owner = $2 AND deleted_at IS NULL", async () => [await anId('audio'), 'o1']],
    ['sweeper: overdue', "SELECT id FROM tasks WHERE state IN ('queued', 'running') AND started_at IS NOT NULL AND deadline_at < now() LIMIT 500", async () => []],
    ['sweeper: abandoned', "SELECT id FROM tasks WHERE state = 'running' AND lease_until < now() LIMIT 500", async () => []],
    ['sweeper: orphaned', "SELECT o.id FROM tasks o WHERE o.state = 'queued' AND o.lease_until IS NULL AND o.created_at < now() - interval '5 seconds' ORDER BY o.created_at LIMIT 200", async () => []],
    ['claim: running under a cap', "SELECT count(*) FROM tasks WHERE kind = $1 AND state = 'running' AND started_at IS NOT NULL", async () => ['expand']],
    ['retention: media to expire', 'SELECT id FROM tasks WHERE finished_at < $1 AND finished_at IS NOT NULL AND media_expired_at IS NULL', async () => [new Date(Date.now() - 30 * 86400_000)]],
    ['usage: an owner this month', 'SELECT kind, count(*) FROM tasks WHERE owner = $1 AND kind = ANY($2::varchar[]) AND created_at >= $3 AND created_at < $4 GROUP BY kind', async () => ['o1', ['expand', 'video', 'audio'], new Date(Date.now() - 3600_000), new Date()]],
    ['usage: every owner by day', 'SELECT owner, kind, count(*) FROM tasks WHERE created_at >= $1 AND created_at < $2 GROUP BY owner, kind', async () => [new Date(Date.now() - 3600_000), new Date(Date.now() - 1800_000)]],
    ['media of tasks', 'SELECT * FROM media WHERE task_id = ANY($1::uuid[])', async () => [[await anId('expand')]]],
    ['callbacks due', "SELECT id FROM callback_deliveries WHERE state = 'pending' AND next_attempt_at <= now() LIMIT 50", async () => []],
  ])('%s reads through an index', async (_name, sql, params) => {
    expect(await seqScans(sql, await params())).toEqual([]);
  });

  /** Every node of the plan: its type and, for an index scan, the index it reads. */
  async function planNodes(sql: string, params: unknown[] = []): Promise<string[]> {
    const { rows } = await client.query<{ 'QUERY PLAN': [{ Plan: PlanNode }] }>(`EXPLAIN (FORMAT JSON) ${sql}`, params);
    const found: string[] = [];
    const walk = (node: PlanNode) => {
      found.push(node['Index Name'] ? `${node['Node Type']} ${node['Scan Direction'] ?? ''} ${node['Index Name']}`.replace(/\s+/g, ' ') : node['Node Type']);
      for (const child of node.Plans ?? []) walk(child);
    };
    walk(rows[0]['QUERY PLAN'][0].Plan);
    return found;
  }

  // GET /tasks (TaskListRepository.list): the same SQL, as its filters shape it
  const TASK_LIST = "SELECT id, kind, owner, external_id, state, message, credits, created_at, started_at, finished_at, params->>'door' AS door, params->>'model' AS model FROM tasks WHERE deleted_at IS NULL";
  // the door filter: the tasks storing its name, and those of the kinds it is the fallback door of storing none
  const BY_DOOR = (n: number) => ` AND (params->>'door' = $${n}::text OR (params->>'door' IS NULL AND kind = ANY($${n + 1}::varchar[])))`;
  const PAGE = 'ORDER BY created_at DESC, id DESC LIMIT $LIMIT::int';
  const taskList = (where: string, limitParam: number) => `${TASK_LIST}${where} ${PAGE.replace('$LIMIT', `$${limitParam}`)}`;
  const aCursor = async () => (await client.query("SELECT created_at, id FROM tasks WHERE owner = 'o1' ORDER BY created_at DESC, id DESC OFFSET 5000 LIMIT 1")).rows[0] as { created_at: Date; id: string };

  it.each([
    ['an owner, page 1', taskList(' AND owner = $1::varchar', 2), async () => ['o1', 21], 'tasks_owner_created_at_id_idx'],
    ['an owner, a page deep in the list (cursor)', taskList(' AND owner = $1::varchar AND (created_at, id) < ($2::timestamptz, $3::uuid)', 4), async () => { const c = await aCursor(); return ['o1', c.created_at, c.id, 21]; }, 'tasks_owner_created_at_id_idx'],
    ['an owner, one operation and state', taskList(" AND owner = $1::varchar AND kind = $2::varchar AND state = $3::task_state", 4), async () => ['o1', 'video', 'succeeded', 21], undefined],
    ['every owner (admin), page 1', taskList('', 1), async () => [21], 'tasks_created_at_id_idx'],
    ['every owner (admin), a later page', taskList(' AND (created_at, id) < ($1::timestamptz, $2::uuid)', 3), async () => { const c = await aCursor(); return [c.created_at, c.id, 21]; }, 'tasks_created_at_id_idx'],
    ['every owner (admin), created in a range', taskList(' AND created_at >= $1::timestamptz AND created_at < $2::timestamptz', 3), async () => [new Date(Date.now() - 7200_000), new Date(Date.now() - 3600_000), 21], undefined],
    ['an owner, by id or external id', taskList(' AND owner = $1::varchar AND (id = $2::uuid OR external_id = $3::varchar)', 4), async () => ['o1', await anId('video'), 'ext-7', 21], undefined],
    ['an owner, by door (stored or its kinds\' fallback)', taskList(` AND owner = $1::varchar${BY_DOOR(2)}`, 4), async () => ['o1', 'kling', ['expand', 'image'], 21], 'tasks_owner_created_at_id_idx'],
    // the statistics say none match: the owner's tasks are read through an index of theirs and the few that match sorted (any plan reads them all)
    ['an owner, by a door no task came through', taskList(` AND owner = $1::varchar AND params->>'door' = $2::text`, 3), async () => ['o1', 'openai', 21], undefined, 'sorts the few that match'],
    ['an owner, by model', taskList(" AND owner = $1::varchar AND params->>'model' = $2::text", 3), async () => ['o1', 'ray-2', 21], 'tasks_owner_created_at_id_idx'],
    ['an owner, by door and model, a later page', taskList(" AND owner = $1::varchar AND params->>'door' = $2::text AND params->>'model' = $3::text AND (created_at, id) < ($4::timestamptz, $5::uuid)", 6), async () => { const c = await aCursor(); return ['o1', 'luma', 'ray-2', c.created_at, c.id, 21]; }, 'tasks_owner_created_at_id_idx'],
    ['every owner (admin), by model', taskList(" AND params->>'model' = $1::text", 2), async () => ['ray-2', 21], 'tasks_created_at_id_idx'],
    ['every owner (admin), by external id', taskList(' AND external_id = $1::varchar', 2), async () => ['ext-7', 21], 'tasks_external_id_idx'],
  ] as [string, string, () => Promise<unknown[]>, string | undefined, string?][])('task list (GET /tasks): %s reads through an index, without sorting the tasks', async (...row) => {
    // (a rest parameter: a callback taking more parameters than a row has would be taken by Jest for one awaiting done)
    const [, sql, params, index, sortsFew] = row;
    const values = await params();
    expect(await seqScans(sql, values)).toEqual([]);
    const nodes = await planNodes(sql, values);
    if (index) expect(nodes.join(' > ')).toContain(index);
    // a page comes in the index's order: no sort over every matching task (a bitmap read of a few rows by id may sort them)
    if (!/ id = /.test(sql) && !/external_id =/.test(sql) && !sortsFew) expect(nodes.filter((n) => n === 'Sort')).toEqual([]);
  });

  // a retry of a held request (TaskRepository.findUnendedByFingerprint): its SQL
  it("a retried request's task (the owner's unended task of a fingerprint, created in a window) reads through an index", async () => {
    const sql = FIND_UNENDED_BY_FINGERPRINT_SQL;
    const values = ['o1', 'music', 'abc', new Date(Date.now() - 615_000), new Date(Date.now() - 1_000)];
    expect(await seqScans(sql, values)).toEqual([]);
    // the kind's tasks under way (few), or the owner's of those minutes
    expect((await planNodes(sql, values)).join(' > ')).toMatch(/tasks_kind_state_lease_until_idx|tasks_owner_created_at_id_idx/);
  });

  it('the check itself sees a sequential scan when there is no index to use', async () => {
    expect(await seqScans("SELECT * FROM tasks WHERE message = 'x'")).toEqual(['tasks']);
  });
});

interface PlanNode {
  'Node Type': string;
  'Relation Name'?: string;
  'Index Name'?: string;
  'Scan Direction'?: string;
  Plans?: PlanNode[];
}
