import pg from 'pg';
import { TaskStatesRepository } from '../../src/common/tasks/task-states.repository.js';
import { pollUntil } from '../support/poll.js';
import { api, queryDb as sql, startTestApp, type TestApp } from '../support/test-app.js';

const ADMIN = 'admin-secret-counters-0123456789';

/**
 * The counters the caps read (each kind's running tasks, each channel's unfinished ones) are kept by the
 * statements that start and end tasks; once a minute an instance that runs workers checks them against the
 * task table (TaskStatesRepository.rebuildCounters). The check must not hold up the claims, assignments and
 * ends of every instance while nothing has drifted; a drift is set right under the counters' locks.
 */
describe("the caps' counters checked against the task table", () => {
  let t: TestApp;
  let states: TaskStatesRepository;
  let channel: { id: string; name: string };
  beforeAll(async () => {
    t = await startTestApp({ ROLE: 'api', ADMIN_API_KEY: ADMIN }); // no worker: no task starts or ends, no sweeper checks meanwhile
    states = t.app.get(TaskStatesRepository);
    const made = await api(t.url, 'POST', '/admin/channels', { key: ADMIN, body: { name: 'counted', operations: ['video'], priority: 0, protocol: 'luma', base_url: 'http://127.0.0.1:9', credentials: { api_key: 'k' } } });
    expect(made.status).toBe(201);
    channel = { id: made.body.id as string, name: 'counted' };
    await sql(t.db, "INSERT INTO kind_counters (kind, running) VALUES ('video', 0) ON CONFLICT (kind) DO UPDATE SET running = 0");
  });
  afterAll(() => t.close());

  /** Another session holding every counter row, as a long transaction that starts or ends tasks would. */
  async function holdingTheCounters<T>(work: (lockWaits: () => Promise<number>) => Promise<T>): Promise<T> {
    const holder = new pg.Client({ connectionString: t.db.url });
    await holder.connect();
    try {
      await holder.query('BEGIN');
      await holder.query('SELECT kind FROM kind_counters ORDER BY kind FOR UPDATE');
      await holder.query('SELECT id FROM channels ORDER BY id FOR UPDATE');
      const lockWaits = async () =>
        (await sql<{ n: number }>(t.db, "SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock' AND pid <> $1", [(holder as unknown as { processID: number }).processID]))[0].n;
      return await work(lockWaits);
    } finally {
      await holder.query('COMMIT').catch(() => undefined);
      await holder.end();
    }
  }

  it('reads them without a lock while none has drifted: it answers while another session holds every counter row', async () => {
    let answered = false;
    let checking: Promise<string[]> | undefined;
    const outcome = await holdingTheCounters(async (lockWaits) => {
      checking = states.rebuildCounters().finally(() => (answered = true));
      // until the check has answered, or is seen waiting on a lock (no poll outlives the test)
      const waits = await pollUntil(async () => (answered ? 0 : await lockWaits()), (n) => answered || n > 0, { what: 'the check to answer or to wait on a lock' });
      return answered && waits === 0 ? 'answered' : 'waited on the counters';
    });
    expect(outcome).toBe('answered');
    expect(await checking).toEqual([]);
  });

  it('sets a drifted kind and channel right under the locks, and says which', async () => {
    await sql(t.db, "UPDATE kind_counters SET running = 7 WHERE kind = 'video'");
    await sql(t.db, 'UPDATE channels SET running_tasks = 3 WHERE id = $1', [channel.id]);
    // the correction waits for the rows another session holds: nothing starts or ends between its count and its write
    let rebuilding: Promise<string[]> | undefined;
    await holdingTheCounters(async (lockWaits) => {
      rebuilding = states.rebuildCounters();
      await pollUntil(lockWaits, (n) => n > 0, { what: "the correction waiting on the counters' locks" });
    });
    expect((await rebuilding!).sort()).toEqual([`channel ${channel.name}`, 'kind video']);
    expect(await sql(t.db, "SELECT running FROM kind_counters WHERE kind = 'video'")).toEqual([{ running: 0 }]);
    expect(await sql(t.db, 'SELECT running_tasks FROM channels WHERE id = $1', [channel.id])).toEqual([{ running_tasks: 0 }]);
    // and nothing left to correct
    expect(await states.rebuildCounters()).toEqual([]);
  });
});
