import { afterEach, jest } from '@jest/globals';
import { TaskEnds } from '../../src/common/tasks/task-ends.js';
import type { Task } from '../../src/common/tasks/task-kind.js';
import type { AppConfig } from '../../src/infra/config/app-config.js';
import type { NotificationsService } from '../../src/infra/database/notifications.service.js';

/** TaskEnds over a LISTEN connection stand-in: what it sends, and a way to deliver what another instance sent. */
function ends() {
  const sent: string[] = [];
  let hear: (payload: string) => void = () => undefined;
  let again: () => void = () => undefined;
  const notifications = {
    listening: true,
    listen: async (_channel: string, handler: (p: string) => void) => void (hear = handler),
    whenHeardAgain: (callback: () => void) => void (again = callback),
    notify: async (_c: string, payload: string) => void sent.push(payload),
  };
  const taskEnds = new TaskEnds(notifications as unknown as NotificationsService, { holdRecheckS: 2 } as AppConfig);
  return { taskEnds, sent, heard: (payload: string) => hear(payload), heardAgain: () => again(), init: () => taskEnds.onModuleInit() };
}

const task = (id: string) => ({ id, state: 'succeeded' }) as unknown as Task<unknown, unknown>;

describe('TaskEnds: a wait hears its task end whenever the end comes after the wait began', () => {
  it('keeps an end announced between the read of the row and the turn (the race a lazy wait lost)', async () => {
    const { taskEnds } = ends();
    const wait = taskEnds.wait('t1');
    taskEnds.announce(['t1'], { task: task('t1'), output: 'bytes' }); // before next(): kept
    expect(await wait.next(60_000)).toEqual({ task: task('t1'), output: 'bytes' });
    // used once: the next turn waits again (and times out here)
    expect(await wait.next(5)).toBe('timeout');
    wait.cancel();
    expect(taskEnds.waiting).toBe(0);
  });

  it("wakes a turn in progress with another instance's word, and tells the others of its own ends, together", async () => {
    const { taskEnds, sent, heard, init } = ends();
    await init();
    const wait = taskEnds.wait('t2');
    const turn = wait.next(60_000);
    heard('t9,t2');
    expect(await turn).toBe('heard');
    wait.cancel();
    taskEnds.announce(['a']);
    taskEnds.announce(['b', 'c']);
    await new Promise((resolve) => setImmediate(resolve));
    expect(sent).toEqual(['a,b,c']);
  });

  it('wakes every wait, to read its row, when the connection listens again after a loss (what was told meanwhile went unheard)', async () => {
    const { taskEnds, heardAgain, init } = ends();
    await init();
    const waiting = taskEnds.wait('t5');
    const turn = waiting.next(60_000);
    const later = taskEnds.wait('t6'); // between turns: its next one comes back at once
    const gone = taskEnds.wait('t7');
    gone.cancel();
    heardAgain();
    expect(await turn).toBe('heard');
    expect(await later.next(60_000)).toBe('heard');
    expect(await gone.next(5)).toBe('timeout');
    waiting.cancel();
    later.cancel();
  });

  it('does not wake a wait for another task, nor one cancelled', async () => {
    const { taskEnds } = ends();
    const other = taskEnds.wait('t3');
    const cancelled = taskEnds.wait('t4');
    cancelled.cancel();
    taskEnds.announce(['t4']);
    expect(await other.next(5)).toBe('timeout');
    expect(await cancelled.next(5)).toBe('timeout');
    other.cancel();
  });

  it('tells the others only of ends with no waiter here (a task is held by its one submitting request)', async () => {
    const { taskEnds, sent, init } = ends();
    await init();
    const held = taskEnds.wait('held-here');
    const turn = held.next(60_000);
    taskEnds.announce(['held-here', 'held-elsewhere'], { task: task('held-here') });
    expect(await turn).toEqual({ task: task('held-here') });
    held.cancel();
    // a wait cancelled before the end is no waiter: its end goes out
    const left = taskEnds.wait('caller-left');
    left.cancel();
    taskEnds.announce(['caller-left']);
    await new Promise((resolve) => setImmediate(resolve));
    expect(sent).toEqual(['held-elsewhere', 'caller-left']);
    // woken here alone: nothing to send
    const only = taskEnds.wait('only-here');
    taskEnds.announce(['only-here']);
    await new Promise((resolve) => setImmediate(resolve));
    expect(sent).toEqual(['held-elsewhere', 'caller-left']);
    only.cancel();
  });
});

describe('TaskEnds: a wait begun after its task ended (a door holding the task it has just submitted, its row unread)', () => {
  afterEach(() => {
    jest.restoreAllMocks();
  });

  it('is woken at once by an end announced here or heard from another instance before it began', async () => {
    const { taskEnds, heard, init } = ends();
    await init();
    taskEnds.announce(['here']);
    heard('there');
    for (const id of ['here', 'there']) {
      const wait = taskEnds.wait(id);
      expect(await wait.next(60_000)).toBe('heard'); // word of it: the waiter reads the row once
      expect(await wait.next(5)).toBe('timeout');
      wait.cancel();
    }
  });

  it('is not woken by an end heard a minute ago or more (RECENT_MS), nor by another task’s', async () => {
    const { taskEnds } = ends();
    const start = Date.now();
    const now = jest.spyOn(Date, 'now').mockReturnValue(start);
    taskEnds.announce(['old']);
    now.mockReturnValue(start + 59_999);
    const recent = taskEnds.wait('old');
    expect(await recent.next(5)).toBe('heard');
    recent.cancel();
    now.mockReturnValue(start + 60_000);
    const late = taskEnds.wait('old');
    expect(await late.next(5)).toBe('timeout');
    late.cancel();
    const other = taskEnds.wait('never-ended');
    expect(await other.next(5)).toBe('timeout');
    other.cancel();
  });
});
