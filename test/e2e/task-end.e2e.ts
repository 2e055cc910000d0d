import { randomUUID } from 'node:crypto';
import { TaskLifecycle } from '../../src/common/tasks/task-lifecycle.js';
import { TaskRepository } from '../../src/common/tasks/task.repository.js';
import { succeededBy, TaskStatesRepository } from '../../src/common/tasks/task-states.repository.js';
import { mediaEndRows, type NewMedia } from '../../src/modules/media/media.repository.js';
import { MediaService } from '../../src/modules/media/media.service.js';
import { ChannelsRepository } from '../../src/modules/channels/channels.repository.js';
import { png } from '../support/images.js';
import { api, queryDb as sql, startTestApp, type TestApp } from '../support/test-app.js';

const EXPAND = '/video-a/v1/images/editing/expand';
const ADMIN = 'admin-secret-0123456789';

/**
 * The worker's hot path in SQL: a claim answers the started row itself (no second read), and a task
 * nobody is notified of ends in one statement with its media rows and its owner's slots. Checked here
 * against what Prisma reads, and at the guard: a worker that lost the lease writes nothing.
 */
describe('claiming and ending a task', () => {
  let t: TestApp;
  let key: string;
  beforeAll(async () => {
    t = await startTestApp({ ROLE: 'api', ADMIN_API_KEY: ADMIN }); // this test is the only worker
    key = await t.createKey('team-end');
  });
  afterAll(() => t.close());

  const submit = async (extra: Record<string, unknown> = {}) => {
    const body = { image: (await png(320, 320)).toString('base64'), up_expansion_ratio: 0.1, bottom_expansion_ratio: 0.2, left_expansion_ratio: 0.3, right_expansion_ratio: 0.1, ...extra };
    const res = await api(t.url, 'POST', EXPAND, { key, body });
    expect([res.status, res.body.message]).toEqual([200, 'SUCCEED']);
    return res.body.data.task_id as string;
  };
  const mediaOf = (taskId: string): NewMedia => ({ id: randomUUID(), owner: 'team-end', taskId, role: 'image', index: 0, contentType: 'image/png', sizeBytes: 123, width: 90, height: 62, driver: 'local', storageKey: `${taskId}/image-0.png` });
  /** The engine's own calls: claim (with the kind's rules) and finish (with the hooks), as the runner makes them. */
  const engine = () => {
    const states = t.app.get(TaskStatesRepository);
    const lifecycle = t.app.get(TaskLifecycle);
    return {
      find: (id: string) => t.app.get(TaskRepository).findById(id),
      claim: (id: string, worker: string, kind = 'expand') => states.claim(id, worker, 30, lifecycle.claimRules(lifecycle.kind(kind)), lifecycle.onChange),
      // whether it ended the task (finish answers what the end did, or null when it changed nothing); the
      // claim named by `worker` and the attempt the row counts now
      markSucceeded: async (id: string, worker: string, media: NewMedia[]) => {
        const attempt = (await t.app.get(TaskRepository).findById(id))!.attempts;
        return (await states.finish(id, { worker, attempt }, undefined, [mediaEndRows(media)], lifecycle.onChange, lifecycle.settle)) !== null;
      },
    };
  };
  const slots = async () => (await sql<{ n: number }>(t.db, "SELECT active_slots AS n FROM owner_counters WHERE owner = 'team-end'"))[0].n;

  it('answers the claimed expand task exactly as Prisma reads it, every field set', async () => {
    const id = await submit({ prompt: 'p', n: 2, external_task_id: 'ext-claim', callback_url: 'https://example.com/hook', watermark_info: { enabled: true } });
    const claimed = await engine().claim(id, 'w-claim');
    expect(claimed).toEqual({ kind: 'claimed', firstStart: true, waitedS: expect.any(Number), task: await engine().find(id) });
  });

  it('answers the claimed audio upload exactly as Prisma reads it, its result document included', async () => {
    const res = await api(t.url, 'POST', '/music-a/uploads/audio-url', { key, body: { url: 'https://example.com/clip.mp3' } });
    const id = res.body.data as string;
    await sql(t.db, `UPDATE tasks SET result = '{"size_bytes": 5000000000, "duration": 1.5, "format": "mp3"}' WHERE id = $1`, [id]);
    const claimed = await engine().claim(id, 'w-claim', 'audio');
    const read = await engine().find(id);
    expect(read?.result).toEqual({ size_bytes: 5_000_000_000, duration: 1.5, format: 'mp3' });
    expect(claimed).toEqual({ kind: 'claimed', firstStart: true, waitedS: expect.any(Number), task: read });
  });

  it('ends a task nobody is notified of with its media and slot given back; a worker that lost the lease writes nothing', async () => {
    const repo = engine();
    const id = await submit();
    expect(await repo.claim(id, 'w-one')).toEqual(expect.objectContaining({ kind: 'claimed' }));
    const held = await slots();

    // another worker took the task over: the first one's result must leave no trace
    await sql(t.db, "UPDATE tasks SET lease_owner = 'w-two' WHERE id = $1", [id]);
    expect(await repo.markSucceeded(id, 'w-one', [mediaOf(id)])).toBe(false);
    expect(await sql(t.db, 'SELECT id FROM media WHERE task_id = $1', [id])).toEqual([]);
    expect(await slots()).toBe(held);

    const media = mediaOf(id);
    expect(await repo.markSucceeded(id, 'w-two', [media])).toBe(true);
    expect(await sql(t.db, 'SELECT id, size_bytes, width, height, storage_key FROM media WHERE task_id = $1', [id])).toEqual([{ id: media.id, size_bytes: 123, width: 90, height: 62, storage_key: media.storageKey }]);
    expect(await slots()).toBe(held - 1);
    expect((await repo.find(id))?.state).toBe('succeeded');

    // a second end (a duplicate job) changes nothing and gives back nothing more
    expect(await repo.markSucceeded(id, 'w-two', [mediaOf(id)])).toBe(false);
    expect(await sql(t.db, 'SELECT id FROM media WHERE task_id = $1', [id])).toEqual([{ id: media.id }]);
    expect(await slots()).toBe(held - 1);
  });

  it("fences a claim from the next one of the same worker: once the sweeper took the task and this worker claimed it again, the first step's writes change nothing", async () => {
    const states = t.app.get(TaskStatesRepository);
    const { onChange, settle } = t.app.get(TaskLifecycle);
    const repo = engine();
    const id = await submit();
    const first = await repo.claim(id, 'w-same');
    expect(first).toEqual(expect.objectContaining({ kind: 'claimed' }));
    const a = { worker: 'w-same', attempt: first!.kind === 'claimed' ? first!.task.attempts : -1 };
    // its lease ran out (the step outlived its heartbeats): the sweeper gives the task a new job, and the same worker claims it
    await sql(t.db, "UPDATE tasks SET lease_until = now() - interval '1 second' WHERE id = $1", [id]);
    expect((await states.requeueAbandoned(30)).map((r) => r.id)).toEqual([id]);
    const again = await repo.claim(id, 'w-same');
    expect(again).toEqual(expect.objectContaining({ kind: 'claimed' }));
    const b = { worker: 'w-same', attempt: again!.kind === 'claimed' ? again!.task.attempts : -1 };
    expect(b.attempt).toBe(a.attempt + 1);

    // the first step, still running, neither ends the task nor keeps it, nor marks a create
    expect(await states.finish(id, a, undefined, [mediaEndRows([mediaOf(id)])], onChange, settle)).toBeNull();
    expect(await states.fail(id, a, 'timed out: the task did not finish within 1800 s', onChange, settle)).toBeNull();
    expect(await states.heartbeat(id, a, 30)).toBe(false);
    await expect(states.submitMarks(id, a).markSubmitting()).rejects.toThrow(/no longer held by this worker/);
    expect(await sql(t.db, 'SELECT state::text, message, submit_started_at FROM tasks WHERE id = $1', [id])).toEqual([{ state: 'running', message: null, submit_started_at: null }]);

    // the second claim's step ends it
    expect(await states.heartbeat(id, b, 30)).toBe(true);
    expect(await states.finish(id, b, undefined, [mediaEndRows([mediaOf(id)])], onChange, settle)).not.toBeNull();
    expect((await repo.find(id))?.state).toBe('succeeded');
  });

  /** A task claimed twice by one worker, as the fence test does: the first claim's lease ran out and the sweeper gave the task a new job. */
  const claimedTwice = async (worker: string) => {
    const repo = engine();
    const id = await submit();
    const first = await repo.claim(id, worker);
    await sql(t.db, "UPDATE tasks SET lease_until = now() - interval '1 second' WHERE id = $1", [id]);
    expect((await t.app.get(TaskStatesRepository).requeueAbandoned(30)).map((r) => r.id)).toEqual([id]);
    const again = await repo.claim(id, worker);
    const attempts = [first, again].map((c) => (c?.kind === 'claimed' ? c.task.attempts : -1));
    expect(attempts).toEqual([1, 2]);
    return { id, attempts };
  };
  const imageOf = (id: string, body: string) => [{ owner: 'team-end', taskId: id, role: 'image' as const, index: 0, body: Buffer.from(body), contentType: 'image/png', width: 1, height: 1 }];

  it("keeps what the claim that ended a task stored when an earlier claim, still running, stores after it and discards its own", async () => {
    const media = t.app.get(MediaService);
    const { id, attempts: [stale, holding] } = await claimedTwice('w-store');
    const held = await media.putResult(holding, imageOf(id, 'the holding claim'));
    const late = await media.putResult(stale, imageOf(id, 'the stale claim, written later'));
    expect([held[0].storageKey, late[0].storageKey]).toEqual([`${id}/image-0-a2.png`, `${id}/image-0-a1.png`]);
    // the holding claim ends the task with its rows; the stale one's end changes nothing, so it discards its objects
    expect(await engine().markSucceeded(id, 'w-store', held)).toBe(true);
    await media.discardObjects(late);
    const [row] = await media.listForTasks([id]);
    expect(row.storageKey).toBe(held[0].storageKey);
    expect((await media.readBytes(row))?.toString()).toBe('the holding claim');
    expect(await media.readBytes({ ...row, storageKey: late[0].storageKey })).toBeNull();
  });

  it('deletes what an earlier claim stored and never ended with (its worker died between the two) when the next claim stores', async () => {
    const media = t.app.get(MediaService);
    const { id, attempts: [died, next] } = await claimedTwice('w-died');
    const orphan = await media.putResult(died, imageOf(id, 'stored, then the worker died'));
    expect((await media.readBytes({ ...orphan[0], createdAt: new Date() }))?.toString()).toBe('stored, then the worker died');
    const kept = await media.putResult(next, imageOf(id, 'the next claim'));
    expect(await media.readBytes({ ...orphan[0], createdAt: new Date() })).toBeNull();
    expect((await media.readBytes({ ...kept[0], createdAt: new Date() }))?.toString()).toBe('the next claim');
  });

  it("tells a completion tried again after its end landed (the answer lost) from one whose task another claim ended: only the latter discards", async () => {
    const { id, attempts: [earlier, holding] } = await claimedTwice('w-again');
    const own = { worker: 'w-again', attempt: holding };
    expect(await engine().markSucceeded(id, 'w-again', [mediaOf(id)])).toBe(true);
    // the same finish again changes nothing: the row says this claim ended it, so its objects are the ones named
    expect(await engine().markSucceeded(id, 'w-again', [mediaOf(id)])).toBe(false);
    const row = await engine().find(id);
    expect(succeededBy(row, own)).toBe(true);
    expect([succeededBy(row, { worker: 'w-again', attempt: earlier }), succeededBy(row, { worker: 'w-other', attempt: holding })]).toEqual([false, false]);
    expect(succeededBy({ ...row!, state: 'failed' }, own)).toBe(false);
    expect(succeededBy(null, own)).toBe(false);
  });

  it("records a partial image only while the claim has the task: a late step's replaces neither the holder's row nor its bytes", async () => {
    const media = t.app.get(MediaService);
    const { id, attempts: [stale, holding] } = await claimedTwice('w-partial');
    const partial = (body: string) => ({ owner: 'team-end', taskId: id, role: 'partial', index: 0, body: Buffer.from(body), contentType: 'image/png' });
    const row = await media.putNow(partial('the holding claim'), { worker: 'w-partial', attempt: holding });
    expect(row.storageKey).toBe(`${id}/partial-0-a2.png`);
    await expect(media.putNow(partial('a late step'), { worker: 'w-partial', attempt: stale })).rejects.toThrow(/no longer held by this worker/);
    expect((await media.listForTasks([id])).map((r) => [r.id, r.storageKey])).toEqual([[row.id, row.storageKey]]);
    expect((await media.readBytes(row))?.toString()).toBe('the holding claim');
    expect(await media.readBytes({ ...row, storageKey: `${id}/partial-0-a1.png` })).toBeNull();
  });

  it("gives a task a channel, with its submit mark, only while the claim has it: a late step's assignment (its probe too) and release change nothing", async () => {
    const channels = t.app.get(ChannelsRepository);
    const made = await api(t.url, 'POST', '/admin/channels', { key: ADMIN, body: { name: 'assign-fenced', operations: ['video'], priority: 0, protocol: 'luma', base_url: 'http://127.0.0.1:9', credentials: { api_key: 'k' } } });
    expect(made.status).toBe(201);
    const channelId = made.body.id as string;
    // its circuit open and due for its one probe: an assignment makes the task that probe (half-open)
    await sql(t.db, "UPDATE channels SET circuit_state = 'open', circuit_open_until = now() - interval '1 second' WHERE id = $1", [channelId]);
    const { id, attempts: [stale, holding] } = await claimedTwice('w-assign');
    const state = async () =>
      (await sql<{ channel_id: string | null; marked: boolean; circuit: string; running: number }>(t.db, 'SELECT t.channel_id, t.submit_started_at IS NOT NULL AS marked, c.circuit_state::text AS circuit, c.running_tasks AS running FROM tasks t, channels c WHERE t.id = $1 AND c.id = $2', [id, channelId]))[0];

    expect(await channels.assignTask(id, channelId, { worker: 'w-assign', attempt: stale })).toBe('not held');
    expect(await state()).toEqual({ channel_id: null, marked: false, circuit: 'open', running: 0 });
    // the create goes to the channel next: the assignment writes its submit mark (a later one cannot assign again)
    expect(await channels.assignTask(id, channelId, { worker: 'w-assign', attempt: holding })).toBe('assigned');
    expect(await state()).toEqual({ channel_id: channelId, marked: true, circuit: 'half_open', running: 1 });
    expect(await channels.assignTask(id, channelId, { worker: 'w-assign', attempt: holding })).toBe('not held');
    // the channel provably did not take the create (busy): the mark is cleared, and the task may leave it unsent
    await t.app.get(TaskStatesRepository).submitMarks(id, { worker: 'w-assign', attempt: holding }).clearSubmitting();
    await channels.releaseUnsent(id, { worker: 'w-assign', attempt: stale });
    expect((await state()).channel_id).toBe(channelId);
    await channels.releaseUnsent(id, { worker: 'w-assign', attempt: holding });
    expect(await state()).toEqual({ channel_id: null, marked: false, circuit: 'half_open', running: 0 });
  });

  it('ends a task with a callback_url in a transaction that writes its notification, with its media', async () => {
    const repo = engine();
    const id = await submit({ callback_url: 'https://example.com/hook' });
    await repo.claim(id, 'w-cb');
    const held = await slots();
    expect(await repo.markSucceeded(id, 'w-cb', [mediaOf(id)])).toBe(true);
    expect(await sql(t.db, "SELECT status FROM callback_deliveries WHERE task_id = $1 AND status = 'succeed'", [id])).toEqual([{ status: 'succeed' }]);
    expect((await sql(t.db, 'SELECT count(*)::int AS n FROM media WHERE task_id = $1', [id]))[0].n).toBe(1);
    expect(await slots()).toBe(held - 1);
  });
});
