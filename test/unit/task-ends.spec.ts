import { TaskEnds } from '../../src/common/tasks/task-ends.js';
import type { Task } from '../../src/common/tasks/task-kind.js';
import type { AppConfig } from '../../src/infra/config/app-config.js';
import type { NotificationsService } from '../../src/infra/database/notifications.service.js';

/** TaskEnds over a LISTEN connection stand-in: what it sends, and a way to deliver what another instance sent. */
function ends() {
  const sent: string[] = [];
  let hear: (payload: string) => void = () => undefined;
  const notifications = { listening: true, listen: async (_channel: string, handler: (p: string) => void) => void (hear = handler), notify: async (_c: string, payload: string) => void sent.push(payload) };
  const taskEnds = new TaskEnds(notifications as unknown as NotificationsService, { holdRecheckS: 2 } as AppConfig);
  return { taskEnds, sent, heard: (payload: string) => hear(payload), init: () => taskEnds.onModuleInit() };
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
});
