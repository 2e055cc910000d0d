import { createConnection, createServer, type Socket } from 'node:net';

/**
 * A TCP proxy on loopback in front of a server (the test's PostgreSQL), whose every chunk can be held
 * `delayMs` in each direction (order kept): a database that answers slowly, as a test sees it from the
 * service. `close()` stops it listening and drops every connection: a database that stopped.
 * `fromServer`, when given, relays the server's side of each connection instead (what a fault writes:
 * its bytes rearranged, the connection ended); the client's side is relayed as ever.
 */
export interface TcpProxy {
  port: number;
  delayMs: number;
  close(): Promise<void>;
}

export async function startTcpProxy(target: { host: string; port: number }, fromServer?: (server: Socket, client: Socket) => void): Promise<TcpProxy> {
  const sockets = new Set<Socket>();
  const proxy: TcpProxy = { port: 0, delayMs: 0, close: async () => undefined };
  /** Writes `from`'s chunks to `to`, each held delayMs after it arrived, in order. */
  const relay = (from: Socket, to: Socket) => {
    let tail = Promise.resolve();
    from.on('data', (chunk: Buffer) => {
      const due = Date.now() + proxy.delayMs;
      tail = tail.then(async () => {
        const wait = due - Date.now();
        if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
        if (!to.destroyed) to.write(chunk);
      });
    });
    from.on('close', () => void tail.then(() => to.destroy()));
  };
  const server = createServer((client) => {
    const upstream = createConnection(target);
    for (const socket of [client, upstream]) {
      sockets.add(socket);
      socket.on('close', () => sockets.delete(socket));
      socket.on('error', () => undefined);
    }
    relay(client, upstream);
    if (fromServer) {
      fromServer(upstream, client);
      upstream.on('close', () => client.destroy());
    } else {
      relay(upstream, client);
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  proxy.port = (server.address() as { port: number }).port;
  proxy.close = () =>
    new Promise<void>((resolve) => {
      server.close(() => resolve());
      for (const socket of sockets) socket.destroy();
    });
  return proxy;
}
