import { once } from 'node:events';
import http from 'node:http';
import net from 'node:net';
import { closeSilentConnectionsWhenIdle } from '../../src/common/http/silent-connections.js';
import { pollUntil } from '../support/poll.js';

/**
 * A server's close and the connections on it (a real node:http server on loopback, no app): one that never
 * sent a byte is closed at once (Node alone keeps it until its headers timeout), one that has sent part of a
 * request is left to finish it and gets its answer.
 */
describe('closeSilentConnectionsWhenIdle', () => {
  /** A server, and a connection to it once the server holds it (the client's socket, the server's). */
  const serveOne = async (withHelper: boolean) => {
    const server = http.createServer((_req, res) => res.end('ok'));
    server.headersTimeout = 60_000;
    if (withHelper) closeSilentConnectionsWhenIdle(server);
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    const accepted = once(server, 'connection') as Promise<[net.Socket]>;
    const client = net.connect((server.address() as net.AddressInfo).port, '127.0.0.1');
    const [serverSide] = await accepted;
    return { server, client, serverSide };
  };
  /** Whether `promise` settles within `ms`: a close that waits on the connection runs past it. */
  const within = (promise: Promise<unknown>, ms: number) => Promise.race([promise.then(() => true), new Promise<boolean>((resolve) => setTimeout(resolve, ms, false).unref())]);

  it('closes a connection that has sent nothing when the server closes; Node alone waits on it', async () => {
    for (const withHelper of [true, false]) {
      const { server, client } = await serveOne(withHelper);
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      expect([withHelper, await within(closed, 2000)]).toEqual([withHelper, withHelper]);
      client.destroy();
      await closed;
    }
  });

  it('leaves a connection that has sent part of a request to finish it, and answers it', async () => {
    const { server, client, serverSide } = await serveOne(true);
    client.write('GET / HTTP/1.1\r\nHost: localhost\r\n');
    await pollUntil(async () => serverSide.bytesRead, (n) => n > 0, { timeoutMs: 5000, intervalMs: 5, what: 'the server to read the first bytes' });
    const closed = new Promise<void>((resolve) => server.close(() => resolve()));
    const answer = new Promise<string>((resolve) => {
      let text = '';
      client.on('data', (chunk: Buffer) => (text += chunk.toString('latin1')));
      client.on('end', () => resolve(text));
    });
    client.end('Connection: close\r\n\r\n');
    expect(await answer).toMatch(/^HTTP\/1\.1 200 OK[\s\S]*\r\n\r\nok$/);
    await closed;
  });
});
