import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { LINGER_MS } from './client-errors.js';

/** What is left of a body, at most, that is read and dropped after an early answer so the connection stays open. */
export const DRAIN_MAX_BYTES = 1024 * 1024;

/** However long a client goes on sending after an answer with Connection: close, its socket is closed at most this long after. */
export const LINGER_MAX_MS = 10_000;

/**
 * The request body that is still arriving when the answer goes out: a refusal sent before the body was
 * read (401, 403, 404 for a route that does not exist, 405 for a method it does not take, 415, 429, 503
 * overload) or while it was read (413).
 *
 * Left to Node, such a body is a hazard either way. Node reads and drops the rest after the answer only
 * when nothing ever read from the request; a request a reader started and let go (a parser stopped at the
 * limit, an async iterator that destroyed it) stays paused with the client's bytes unread, and its
 * keep-alive connection is never read again: the client's next request on it gets no answer until the
 * keep-alive timeout (65 s) resets the connection. A body that nobody read is read to its end, however
 * long it is. And an answer that closes its connection (the client asked for `Connection: close`, or spoke
 * HTTP/1.0, or the instance is draining) is followed by Node's `destroySoon()`: the socket is destroyed as
 * soon as the answer is flushed, with the client's bytes still unread, so the kernel resets the connection;
 * the client, still sending, gets EPIPE or ECONNRESET, and one that reads only once it has sent its body
 * (many do) never reads its answer.
 *
 * So, decided when the answer's headers are written: a body with at most DRAIN_MAX_BYTES left is read and
 * dropped after the answer, and the connection is kept (unless the answer closes it anyway); any other
 * (larger, or chunked, or whose request was destroyed) gets `Connection: close`. Whenever such an answer
 * closes its connection, the socket is closed with a linger: its sending side at once, and the rest when
 * the client has sent its body or closed, after LINGER_MS without a byte, or LINGER_MAX_MS at most, reading
 * and dropping what arrives meanwhile (as client-errors.ts does for raw sockets).
 *
 * Registered on Express before any route, so it sees every answer, the unknown route's too.
 */
export function settleUnreadBody(req: IncomingMessage, res: ServerResponse, next: () => void): void {
  if (hasBody(req)) {
    const writeHead = res.writeHead as (...args: unknown[]) => ServerResponse;
    // every answer's headers go through writeHead (Node's implicit headers too): this runs just before they are written
    res.writeHead = ((...args: unknown[]) => {
      if (!req.complete) {
        if (!fitsDrain(req)) res.setHeader('Connection', 'close');
        // whatever makes this answer close its connection (the line above, the client, the drain), it closes with a linger
        lingerOnClose(req, req.socket as Socket | null);
      }
      return writeHead.apply(res, args);
    }) as ServerResponse['writeHead'];
    res.once('finish', () => discardRest(req));
  }
  next();
}

function hasBody(req: IncomingMessage): boolean {
  return req.headers['transfer-encoding'] !== undefined || Number(req.headers['content-length'] ?? 0) > 0;
}

/** Whether what is left of the body is known and small enough to read before the connection serves the next request. */
function fitsDrain(req: IncomingMessage): boolean {
  const declared = Number(req.headers['content-length']);
  return !req.destroyed && req.headers['transfer-encoding'] === undefined && Number.isFinite(declared) && declared <= DRAIN_MAX_BYTES;
}

/** After the answer: whoever was reading the body has stopped; the rest is read and dropped as it arrives. */
function discardRest(req: IncomingMessage): void {
  if (req.readableEnded || req.destroyed) return;
  req.unpipe();
  req.removeAllListeners('data');
  req.resume();
}

/** The request of each socket whose answer went out before its body was read (the last such one: a keep-alive socket serves several). */
const answeredEarly = new WeakMap<Socket, IncomingMessage>();

/**
 * Node ends an answer's socket that is not kept alive with `destroySoon()`: its sending side, then the whole
 * socket as soon as that is flushed, with the client's bytes still unread. For this socket it is replaced,
 * once, by a lingering close while its request answered early is not whole yet (Node's own otherwise).
 */
function lingerOnClose(req: IncomingMessage, socket: Socket | null): void {
  if (!socket || socket.destroyed) return;
  const replaced = answeredEarly.has(socket);
  answeredEarly.set(socket, req);
  if (replaced) return;
  const destroySoon = socket.destroySoon;
  socket.destroySoon = function (this: Socket) {
    const early = answeredEarly.get(this);
    if (!early || early.complete) return destroySoon.call(this); // every byte of the request is off the socket: nothing left to reset it
    linger(this, early);
  };
}

/**
 * Closes the sending side of `socket` at once, and the socket when `req` (its body dropped as it arrives) has
 * ended, or the client has closed, or after LINGER_MS without a byte, or LINGER_MAX_MS in all.
 */
function linger(socket: Socket, req: IncomingMessage): void {
  const destroy = () => (socket.writableFinished ? socket.destroy() : socket.once('finish', () => socket.destroy()));
  socket.end();
  const cap = setTimeout(() => socket.destroy(), LINGER_MAX_MS).unref();
  socket.once('close', () => clearTimeout(cap));
  req.once('end', destroy);
  socket.once('end', destroy);
  // Node's HTTP server destroys a socket whose timeout passes unless its request handles it: this one is handled here
  req.on('timeout', () => undefined);
  socket.setTimeout(LINGER_MS);
  socket.on('timeout', () => {
    // After the event loop was held up (a long synchronous task), timers run before the poll that reads what
    // arrived meanwhile: the socket is idle only if nothing has come once that poll has run.
    const read = socket.bytesRead;
    setImmediate(() => {
      if (socket.bytesRead === read) socket.destroy();
    });
  });
}
