import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { LINGER_MS } from './client-errors.js';

/** What is left of a body, at most, that is read and dropped after an early answer so the connection stays open. */
export const DRAIN_MAX_BYTES = 1024 * 1024;

/** However long a client goes on sending after an answer with Connection: close, its socket is closed at most this long after. */
export const LINGER_MAX_MS = 10_000;

/**
 * The request body that is still arriving when the answer goes out: a refusal sent before the body was
 * read (401, 404 for a method or route that takes none, 415, 503 overload) or while it was read (413).
 *
 * Left to Node, such a body is a hazard either way. Node reads and drops the rest after the answer only
 * when nothing ever read from the request; a request a reader started and let go (a parser stopped at the
 * limit, an async iterator that destroyed it) stays paused with the client's bytes unread, and its
 * keep-alive connection is never read again: the client's next request on it gets no answer until the
 * keep-alive timeout (65 s) resets the connection. And a body that nobody read is read to its end,
 * however long it is.
 *
 * So, decided when the answer's headers are written: a body with at most DRAIN_MAX_BYTES left is read and
 * dropped after the answer, and the connection is kept; any other (larger, or chunked, or whose request was
 * destroyed) gets `Connection: close`, and after the answer the socket is closed with a linger: its sending
 * side at once, and the rest when the client has sent its body or closed, after LINGER_MS without a byte,
 * or LINGER_MAX_MS at most, reading and dropping what arrives meanwhile (as client-errors.ts does for raw
 * sockets). Closing a socket with unread bytes makes the kernel reset the connection, and the client, still
 * sending, would then get EPIPE or ECONNRESET, and may lose the answer.
 *
 * Registered on Express before any route, so it sees every answer, the unknown route's too.
 */
export function settleUnreadBody(req: IncomingMessage, res: ServerResponse, next: () => void): void {
  if (hasBody(req)) {
    const writeHead = res.writeHead as (...args: unknown[]) => ServerResponse;
    // every answer's headers go through writeHead (Node's implicit headers too): this runs just before they are written
    res.writeHead = ((...args: unknown[]) => {
      if (!req.complete && !fitsDrain(req)) {
        res.setHeader('Connection', 'close');
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

/**
 * Node ends a `Connection: close` answer's socket with `destroySoon()`: its sending side, then the whole
 * socket as soon as that is flushed, with the client's bytes still unread. For this socket it is replaced
 * by a lingering close.
 */
function lingerOnClose(req: IncomingMessage, socket: Socket | null): void {
  if (!socket || socket.destroyed) return;
  socket.destroySoon = function (this: Socket) {
    const destroy = () => (this.writableFinished ? this.destroy() : this.once('finish', () => this.destroy()));
    this.end();
    if (req.complete) return destroy(); // every byte of the request is off the socket: nothing left to reset it
    const cap = setTimeout(() => this.destroy(), LINGER_MAX_MS).unref();
    this.once('close', () => clearTimeout(cap));
    req.once('end', destroy);
    this.once('end', destroy);
    this.setTimeout(LINGER_MS);
    this.once('timeout', () => this.destroy());
  };
}
