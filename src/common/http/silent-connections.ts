import type { Server } from 'node:http';
import type { Socket } from 'node:net';

/**
 * Makes the server's `closeIdleConnections` close the connections that have not sent a byte too.
 *
 * Node's `http.Server#close` (and `closeIdleConnections`, which it calls) closes the keep-alive connections
 * waiting between requests, but not one that connected and has sent nothing yet: a load balancer's or a
 * client's pre-opened connection counts as a request on its way, and keeps the server open until its
 * `headersTimeout` (66 s here). A SIGTERM'd instance then waited out its whole drain for it, and an app's
 * `close()` a minute (a test's `app.close()` after an HTTP client's spare connection: 63 s). Such a
 * connection carries no request, so it is closed when the idle ones are: at `close()`, and in the drain
 * after its grace for requests already on their way (graceful-shutdown.ts). One that has sent part of a
 * request is left to finish it, as Node leaves it.
 */
export function closeSilentConnectionsWhenIdle(server: Server): void {
  const open = new Set<Socket>();
  server.on('connection', (socket: Socket) => {
    open.add(socket);
    socket.once('close', () => open.delete(socket));
  });
  const closeIdle = server.closeIdleConnections.bind(server);
  server.closeIdleConnections = () => {
    closeIdle();
    for (const socket of open) if (socket.bytesRead === 0) socket.destroy();
  };
}
