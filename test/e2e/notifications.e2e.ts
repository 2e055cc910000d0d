import { NotificationsService } from '../../src/infra/database/notifications.service.js';
import { pollUntil } from '../support/poll.js';
import { startTestApp, type TestApp } from '../support/test-app.js';

// NotificationsService sends what is asked while a statement of notifications runs in the next one
// (node-postgres queued them on the connection before, a use it deprecates): each is still heard, in order.
describe('notifications between instances (LISTEN/NOTIFY on one connection each)', () => {
  let a: TestApp;
  let b: TestApp;
  beforeAll(async () => {
    a = await startTestApp({ ROLE: 'api' });
    b = await startTestApp({ ROLE: 'api' }, { db: a.db });
  });
  afterAll(async () => {
    await b?.close();
    await a?.close();
  });

  it('200 asked at once are each heard once, in the order asked, by the instance that sent them and another', async () => {
    const CHANNEL = 'mgw_test_wakes';
    const heard: Record<'a' | 'b', string[]> = { a: [], b: [] };
    await a.app.get(NotificationsService).listen(CHANNEL, (payload) => heard.a.push(payload));
    await b.app.get(NotificationsService).listen(CHANNEL, (payload) => heard.b.push(payload));
    const sent = Array.from({ length: 200 }, (_, i) => `wake-${i}`);
    const notifications = a.app.get(NotificationsService);
    await Promise.all(sent.map((payload) => notifications.notify(CHANNEL, payload)));
    await pollUntil(
      async () => [heard.a.length, heard.b.length],
      ([x, y]) => x >= sent.length && y >= sent.length,
      { timeoutMs: 30_000, what: 'every notification to be heard by both instances' },
    );
    expect(heard.a).toEqual(sent);
    expect(heard.b).toEqual(sent);
  });
});
