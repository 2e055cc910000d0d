import { randomUUID } from 'node:crypto';
import { type IncomingMessage, type Server, STATUS_CODES } from 'node:http';
import type { Duplex } from 'node:stream';
import { describeError } from '../errors/error-catalog.js';

/** The start of a request line: a method token and a space. */
const REQUEST_LINE_START = /^[A-Z]{3,10} /;
/** Half of Node's limit on a request's head (16 kB): a request line this long is what overflowed it. */
const LONG_REQUEST_LINE = 8 * 1024;

/** Why Node's HTTP parser refused a request, in words for the caller, and the status to answer. */
function describe(err: NodeJS.ErrnoException & { rawPacket?: Buffer }): { status: number; message: string } {
  if (err.rawPacket?.[0] === 0x16) return { status: 400, message: 'This port speaks plain HTTP, not HTTPS (a TLS handshake was received)' };
  switch (err.code) {
    case 'HPE_PAUSED_H2_UPGRADE':
      return { status: 400, message: 'HTTP/2 without TLS is not supported; send HTTP/1.1' };
    case 'HPE_HEADER_OVERFLOW':
      // a request line of half the limit or more (or with no end in what was read) is a URI too long (RFC 9110 §15.5.15)
      if (err.rawPacket && REQUEST_LINE_START.test(err.rawPacket.toString('latin1', 0, 16)) && !(err.rawPacket.indexOf('\r\n') >= 0 && err.rawPacket.indexOf('\r\n') < LONG_REQUEST_LINE)) {
        return { status: 414, message: 'The request URI is too long (the request line and headers are at most 16 kB in all)' };
      }
      return { status: 431, message: 'The request headers are too large (at most 16 kB in all)' };
    case 'ERR_HTTP_REQUEST_TIMEOUT':
    case 'ERR_HTTP_HEADERS_TIMEOUT':
      return { status: 408, message: 'The request was not received in time' };
    case 'HPE_INVALID_METHOD':
      return { status: 400, message: 'The request method is not a valid HTTP method' };
    case 'HPE_INVALID_CHUNK_SIZE':
      return { status: 400, message: 'The chunked body is malformed: a chunk size is not hexadecimal' };
    case 'HPE_INVALID_CONTENT_LENGTH':
      return { status: 400, message: 'The Content-Length header is not a valid length (or is given twice with different values)' };
    case 'HPE_UNEXPECTED_CONTENT_LENGTH':
      return { status: 400, message: 'The request has both Content-Length and Transfer-Encoding: chunked; send one of them' };
    case 'HPE_INVALID_TRANSFER_ENCODING':
      return { status: 400, message: 'The Transfer-Encoding header is not valid' };
    default:
      return { status: 400, message: `The request is not valid HTTP/1.1 (${err.code ?? 'parse error'})` };
  }
}

/**
 * Requests that Node's HTTP parser refuses (bad framing, an unknown method, oversized headers) and
 * CONNECT requests never reach the application; Node would answer them with an empty 400 or 431. Here they get the same JSON
 * envelope as every other error, code 1200, with an X-Request-Id and Connection: close, wherever the
 * socket can still be written to.
 */
export function answerClientErrors(server: Server): void {
  // CONNECT (a proxy tunnel) never reaches the application, and without a listener Node drops the socket silently.
  server.on('connect', (_req: IncomingMessage, socket: Duplex) => {
    socket.resume(); // no parser reads this socket any more: discard what follows
    writeEnvelope(socket, 400, 'CONNECT is not supported: this service is not a proxy');
  });
  server.on('clientError', (err: NodeJS.ErrnoException, socket: Duplex) => {
    if (answered.has(socket)) return; // more bytes of a request already refused, still arriving: let them drain
    // As Node itself does: answer unless the client is gone or a response on this socket has begun.
    const inFlight = (socket as Duplex & { _httpMessage?: { headersSent?: boolean } })._httpMessage;
    if (err.code === 'ECONNRESET' || !socket.writable || inFlight?.headersSent) {
      socket.destroy();
      return;
    }
    const { status, message } = describe(err);
    writeEnvelope(socket, status, message);
  });
}

/** Sockets already answered. */
const answered = new WeakSet<Duplex>();
/** A client still sending is given this long to read its answer before the socket is destroyed (unread-body.ts: without a byte). */
export const LINGER_MS = 2000;

/**
 * Writes a whole HTTP/1.1 error answer with the JSON envelope on a raw socket and closes its sending
 * side, but goes on reading (and discarding) what the client still sends for a moment: closing a socket
 * with unread bytes makes the kernel reset the connection, and the client may then lose the answer.
 */
function writeEnvelope(socket: Duplex, status: number, message: string): void {
  answered.add(socket);
  setTimeout(() => socket.destroy(), LINGER_MS).unref();
  const requestId = randomUUID();
  const body = JSON.stringify({ code: describeError('INVALID_REQUEST').code, message, request_id: requestId });
  socket.on('error', () => undefined); // the in-flight response, if any, may still try to write: ignore
  socket.end(
    `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\n` +
      'Content-Type: application/json; charset=utf-8\r\n' +
      `Content-Length: ${Buffer.byteLength(body)}\r\n` +
      `X-Request-Id: ${requestId}\r\n` +
      'X-Content-Type-Options: nosniff\r\n' +
      'Connection: close\r\n\r\n' +
      body,
  );
}
