import { once } from 'node:events';
import net from 'node:net';
import { GracefulShutdown } from '../../src/common/tasks/graceful-shutdown.js';
import { startTestApp } from '../support/test-app.js';

/**
 * A connection that was opened and has sent nothing (a load balancer's or an HTTP client's spare one) carries
 * no request: it neither holds a SIGTERM'd instance's drain to its deadline nor an app's close for its
 * headers timeout; a request already on its way over another is still answered.
 */
describe('connections that have sent nothing', () => {
  it("are closed with the idle ones in the drain, which then ends without cutting a connection at its deadline; a request on its way is answered", async () => {
    const t = await startTestApp();
    try {
      const port = Number(new URL(t.url).port);
      const silent = net.connect(port, '127.0.0.1');
      await once(silent, 'connect');
      const silentClosed = once(silent, 'close');
      // and a request on its way: its first line sent before the drain, the rest after it began
      const onItsWay = net.connect(port, '127.0.0.1');
      await once(onItsWay, 'connect');
      onItsWay.write('GET /health HTTP/1.1\r\nHost: localhost\r\n');
      let answer = '';
      onItsWay.on('data', (chunk: Buffer) => (answer += chunk.toString('latin1')));
      const answered = once(onItsWay, 'end');
      // a deadline far beyond the grace for idle connections (1.5 s): only the connection could hold the drain to it
      const drained = t.app.get(GracefulShutdown).drain(30);
      onItsWay.end('\r\n');
      await Promise.all([answered, silentClosed, drained]);
      expect(answer).toMatch(/^HTTP\/1\.1 200 OK\r\n[\s\S]*connection: close/i);
      // had the silent connection held the listener open, the drain would have waited out its 27 s and cut it
      expect(t.logs.lines.filter((l) => /still open at the shutdown deadline/.test(String(l.msg)))).toEqual([]);
    } finally {
      await t.close();
    }
  }, 60_000);
});
