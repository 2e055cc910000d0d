import net from 'node:net';

/** An HTTP answer as read off the socket (status 0: none, with `error` saying why). */
export interface Observed {
  status: number;
  headers: Record<string, string>;
  text: string;
  error?: string;
}

/** Sends raw bytes and reads the first HTTP answer (headers, then Content-Length bytes) or until the socket closes. */
export function sendRaw(port: number, bytes: Buffer, deadlineMs = 10_000): Promise<Observed> {
  return new Promise((resolve) => {
    const socket = net.connect(port, '127.0.0.1');
    let data = Buffer.alloc(0);
    let done = false;
    const finish = (error?: string) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      socket.destroy();
      const text = data.toString('latin1');
      const head = text.split('\r\n\r\n')[0];
      const status = Number(/^HTTP\/1\.[01] (\d{3})/.exec(head)?.[1] ?? 0);
      const headers = Object.fromEntries(
        head
          .split('\r\n')
          .slice(1)
          .map((l) => [l.slice(0, l.indexOf(':')).toLowerCase(), l.slice(l.indexOf(':') + 1).trim()]),
      );
      // only the first answer: a second one (to bytes after the request) may follow on the same socket
      const length = Number(headers['content-length']);
      const body = data.subarray(Buffer.byteLength(head, 'latin1') + 4);
      const first = Number.isFinite(length) ? body.subarray(0, length) : body;
      resolve({ status, headers, text: first.toString('utf8'), error: status ? undefined : (error ?? 'no answer') });
    };
    const timer = setTimeout(() => finish('timed out'), deadlineMs);
    socket.on('data', (chunk: Buffer) => {
      data = Buffer.concat([data, chunk]);
      const text = data.toString('latin1');
      const end = text.indexOf('\r\n\r\n');
      const length = Number(/\r\ncontent-length: *(\d+)/i.exec(text.slice(0, end))?.[1] ?? NaN);
      if (end !== -1 && Number.isFinite(length) && data.length >= end + 4 + length) finish();
    });
    socket.on('error', (err) => finish(err.message));
    socket.on('close', () => finish('closed'));
    socket.write(bytes);
  });
}
