import http from 'node:http';
import net from 'node:net';
import { gzipSync, brotliCompressSync, deflateSync, constants as zlibConstants } from 'node:zlib';
import { runFuzz } from '../support/fuzz.js';
import { pollUntil } from '../support/poll.js';
import { api, startTestApp, type TestApp } from '../support/test-app.js';

const EXPAND = '/video-a/v1/images/editing/expand';
const MB = 1024 * 1024;
const ADMIN = 'admin-secret-0123456789';

interface RawAnswer {
  status: number;
  headers: Record<string, string>;
  body: any;
}

/** The first HTTP answer in `data`, once it is whole. */
function parseAnswer(data: Buffer): RawAnswer | undefined {
  const end = data.indexOf('\r\n\r\n');
  if (end === -1) return undefined;
  const [statusLine, ...lines] = data.subarray(0, end).toString('latin1').split('\r\n');
  const headers = Object.fromEntries(lines.map((l) => [l.slice(0, l.indexOf(':')).toLowerCase(), l.slice(l.indexOf(':') + 1).trim()]));
  const length = Number(headers['content-length']);
  if (data.length < end + 4 + length) return undefined;
  return { status: Number(statusLine.split(' ')[1]), headers, body: JSON.parse(data.subarray(end + 4, end + 4 + length).toString('utf8')) };
}

/**
 * A client as strict as they come: sends the request head, then its whole body however early the answer
 * comes, reads the answer, closes its side once both are done, and records any error (EPIPE, ECONNRESET).
 */
function sendWhole(port: number, head: string, body: Buffer): Promise<{ answer?: RawAnswer; sent: number; error?: string }> {
  return new Promise((resolve) => {
    const socket = net.connect({ port, host: '127.0.0.1', allowHalfOpen: true });
    let data = Buffer.alloc(0);
    let answer: RawAnswer | undefined;
    let sent = 0;
    let error: string | undefined;
    let written = false;
    const maybeEnd = () => {
      if (answer && written) socket.end(); // both done: close our side, and see the connection close cleanly
    };
    socket.on('data', (chunk: Buffer) => {
      data = Buffer.concat([data, chunk]);
      answer ??= parseAnswer(data);
      maybeEnd();
    });
    socket.on('error', (err: NodeJS.ErrnoException) => (error = err.code ?? err.message));
    socket.on('close', () => resolve({ answer, sent, error }));
    socket.write(head);
    const piece = 256 * 1024;
    const writeFrom = (at: number): void => {
      if (at >= body.length) {
        written = true;
        maybeEnd();
        return;
      }
      const chunk = body.subarray(at, at + piece);
      const more = socket.write(chunk, (err) => {
        if (!err) sent += chunk.length;
      });
      if (more) setImmediate(() => writeFrom(at + piece));
      else socket.once('drain', () => writeFrom(at + piece));
    };
    writeFrom(0);
  });
}

function expectEnvelope(answer: RawAnswer | undefined, status: number): void {
  expect(answer?.status).toBe(status);
  expect(answer!.body).toEqual({ code: expect.any(Number), message: expect.any(String), request_id: answer!.headers['x-request-id'] });
}

describe('every request gets an answer, whatever is left of its body', () => {
  let t: TestApp;
  let port: number;
  let key: string;
  beforeAll(async () => {
    // AUTH_FAILURE_LIMIT=0: the mixed traffic of the last test (the fuzzer) sends made-up keys from this one
    // address, which would otherwise have every request of it answered 429 (that limit has its own tests)
    t = await startTestApp({ ROLE: 'api', ADMIN_API_KEY: ADMIN, LOG_LEVEL: 'fatal', AUTH_FAILURE_LIMIT: '0' });
    port = Number(new URL(t.url).port);
    key = await t.createKey();
  });
  afterAll(() => t.close());

  it.each(['OPTIONS', 'PUT', 'PATCH', 'DELETE'])('answers %s with a 5 MB body on the expand route with the 404 envelope, and the client sends it all with no reset', async (method) => {
    const body = Buffer.alloc(5 * MB, 0x61);
    const { answer, sent, error } = await sendWhole(port, `${method} ${EXPAND} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${key}\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n`, body);
    expectEnvelope(answer, 404);
    expect(answer!.body.message).toBe(`No route for ${method} ${EXPAND}`);
    expect([sent, error]).toEqual([body.length, undefined]);
  });

  it('answers any method on an unknown route, with a chunked body, the same way', async () => {
    const chunks = Buffer.concat(Array.from({ length: 40 }, () => Buffer.from(`20000\r\n${'b'.repeat(0x20000)}\r\n`)));
    const body = Buffer.concat([chunks, Buffer.from('0\r\n\r\n')]);
    const { answer, sent, error } = await sendWhole(port, 'POST /no/such/route HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n', body);
    expectEnvelope(answer, 404);
    expect(answer!.headers.connection).toBe('close');
    expect([sent, error]).toEqual([body.length, undefined]);
    // fetch, which reads the answer while it sends, sees the same
    const res = await fetch(`${t.url}${EXPAND}`, { method: 'PUT', body: Buffer.alloc(3 * MB), headers: { 'content-type': 'application/json' } });
    expect([res.status, ((await res.json()) as { code: number }).code]).toEqual([404, 1203]);
  });

  it('reads and drops a small rest after an early answer, and the connection serves the next request', async () => {
    const socket = net.connect({ port, host: '127.0.0.1' });
    let data = Buffer.alloc(0);
    socket.on('data', (chunk: Buffer) => (data = Buffer.concat([data, chunk])));
    const answered = (n: number) => pollUntil(async () => data.toString('latin1').split('HTTP/1.1 ').length - 1, (count) => count >= n, { timeoutMs: 10_000, what: `answer ${n}` });
    try {
      // 300 kB declared, 1 kB sent: the 404 goes out while the rest is still to come
      socket.write(`PUT ${EXPAND} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${300 * 1024}\r\n\r\n${'c'.repeat(1024)}`);
      await answered(1);
      const first = parseAnswer(data);
      expectEnvelope(first, 404);
      expect(first!.headers.connection).toBe('keep-alive');
      socket.write('c'.repeat(299 * 1024));
      socket.write('GET /health HTTP/1.1\r\nHost: x\r\n\r\n');
      await answered(2);
      expect(data.toString('latin1')).toMatch(/HTTP\/1\.1 200 OK[\s\S]*"status":"ok"/);
    } finally {
      socket.destroy();
    }
  });

  it('answers a chunked body over the 20 MB limit with 413 and closes its connection: the next request is answered', async () => {
    // Before, the request was left paused with the client's bytes unread: its keep-alive connection was never read again
    const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
    const send = (method: string, body: Buffer, chunked: boolean) =>
      new Promise<{ status: number; connection?: string; body: any; error?: string }>((resolve) => {
        const headers: Record<string, string | number> = { 'content-type': 'application/json', authorization: `Bearer ${key}` };
        if (!chunked) headers['content-length'] = body.length;
        const req = http.request({ host: '127.0.0.1', port, path: EXPAND, method, agent, headers, timeout: 10_000 }, (res) => {
          let text = '';
          res.on('data', (c: Buffer) => (text += c.toString()));
          res.on('end', () => resolve({ status: res.statusCode!, connection: res.headers.connection, body: JSON.parse(text) }));
        });
        req.on('timeout', () => req.destroy(new Error('no answer in 10 s')));
        req.on('error', (err: NodeJS.ErrnoException) => resolve({ status: 0, body: undefined, error: err.code ?? err.message }));
        for (let at = 0; at < body.length; at += 64 * 1024) req.write(body.subarray(at, at + 64 * 1024));
        req.end();
      });
    try {
      const over = await send('POST', Buffer.from(`{"image":"${'A'.repeat(21 * MB)}"}`), true);
      const next = await send('OPTIONS', Buffer.alloc(5 * MB, 0x61), false);
      expect([next.status, next.body?.code, next.error]).toEqual([404, 1203, undefined]);
      expect([over.status, over.connection, over.body.code, over.body.message]).toEqual([413, 'close', 1205, "Request body is larger than this route's limit of 20 MB"]);
    } finally {
      agent.destroy();
    }
  });

  it('answers a declared 1 GB body 413 before reading it, and lets go of a client that stops sending', async () => {
    const server = t.app.getHttpServer() as http.Server;
    const client = net.connect({ port, host: '127.0.0.1', allowHalfOpen: true });
    const serverSide = new Promise<net.Socket>((resolve) => server.on('connection', function own(s: net.Socket) {
      if (s.remotePort === client.localPort) {
        server.off('connection', own);
        resolve(s);
      }
    }));
    let data = Buffer.alloc(0);
    client.on('data', (chunk: Buffer) => (data = Buffer.concat([data, chunk])));
    client.on('error', () => undefined);
    try {
      await new Promise((resolve) => client.once('connect', resolve));
      client.write(`POST ${EXPAND} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${key}\r\nContent-Type: application/json\r\nContent-Length: ${1024 * MB}\r\n\r\n{"image":"`);
      client.write('A'.repeat(MB));
      const answer = await pollUntil(async () => parseAnswer(data), (a) => a !== undefined, { timeoutMs: 10_000, what: 'the 413' });
      expectEnvelope(answer, 413);
      expect(answer!.headers.connection).toBe('close');
      // the client sends nothing more: the server closes the connection after its linger, not after 1 GB
      const socket = await serverSide;
      await pollUntil(async () => socket.destroyed, (destroyed) => destroyed, { timeoutMs: 15_000, what: 'the server to close the connection' });
    } finally {
      client.destroy();
    }
  });

  it('answers compressed bodies that inflate to 50 MB on the expand route while 11 other clients send mixed traffic', async () => {
    const image = Buffer.from(`{"image":"${'A'.repeat(50 * MB)}","up_expansion_ratio":0.1,"bottom_expansion_ratio":0.1,"left_expansion_ratio":0,"right_expansion_ratio":0}`);
    const bombs = [
      { encoding: 'gzip', body: gzipSync(image), status: 413 },
      { encoding: 'deflate', body: deflateSync(image), status: 413 },
      { encoding: 'br', body: brotliCompressSync(image, { params: { [zlibConstants.BROTLI_PARAM_QUALITY]: 5 } }), status: 413 },
      { encoding: 'gzip', body: gzipSync(Buffer.alloc(50 * MB)), status: 400 }, // zeros: not JSON, refused at the first byte
    ];
    const doc = (await api(t.url, 'GET', '/docs-json')).body;
    let mixing = true;
    const traffic = runFuzz({ base: t.url, doc, keys: { api: await t.createKey('fuzz'), admin: ADMIN }, count: 500, seed: 25, concurrency: 11, deadlineMs: 30_000 }).finally(() => (mixing = false));
    const answers: { encoding: string; expected: number; status: number; envelope?: boolean; error?: string }[] = [];
    for (let i = 0; mixing || i < bombs.length; i++) {
      const bomb = bombs[i % bombs.length];
      try {
        // an answer, not a hang: within 30 s whatever the load (it usually takes well under a second; one took
        // over 10 s on a machine running four test files and a build beside this one)
        const res = await fetch(`${t.url}${EXPAND}`, { method: 'POST', body: bomb.body, headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', 'content-encoding': bomb.encoding }, signal: AbortSignal.timeout(30_000) });
        const body = (await res.json()) as { code?: unknown; message?: unknown; request_id?: unknown };
        answers.push({ encoding: bomb.encoding, expected: bomb.status, status: res.status, envelope: typeof body.code === 'number' && typeof body.message === 'string' && body.request_id === res.headers.get('x-request-id') });
      } catch (err) {
        answers.push({ encoding: bomb.encoding, expected: bomb.status, status: 0, error: (err as Error).message });
      }
    }
    const report = await traffic;
    expect(answers.filter((a) => a.status !== a.expected || !a.envelope)).toEqual([]);
    expect(answers.length).toBeGreaterThanOrEqual(bombs.length);
    expect(report.violations.slice(0, 5)).toEqual([]);
  }, 180_000);
});
