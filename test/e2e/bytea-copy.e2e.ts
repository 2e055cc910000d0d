import { randomBytes, randomUUID } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';
import { copyByteaToFile } from '../../src/infra/prisma/bytea-copy.js';
import { PrismaService } from '../../src/infra/prisma/prisma.service.js';
import { startTcpProxy, type TcpProxy } from '../support/tcp-proxy.js';
import { startTestApp, type TestApp } from '../support/test-app.js';

// copyByteaToFile parses PostgreSQL's binary COPY by hand as it streams: every size across chunk boundaries, no row, NULL.
describe('copyByteaToFile', () => {
  let t: TestApp;
  let pool: pg.Pool;
  const dir = mkdtempSync(path.join(tmpdir(), 'mgw-bytea-'));
  const file = () => path.join(dir, randomUUID());
  const source = { table: 'bytea_probe', column: 'bytes', key: 'id' };

  beforeAll(async () => {
    t = await startTestApp({ ROLE: 'api' });
    pool = t.app.get(PrismaService).pool;
    await pool.query('CREATE TABLE bytea_probe (id uuid PRIMARY KEY, bytes bytea)');
  });
  afterAll(async () => {
    await t.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it.each([0, 1, 5, 63, 64, 65, 65_536, 65_537, 3 * 1024 * 1024 + 7])('gives back %i bytes exactly as stored', async (size) => {
    const id = randomUUID();
    const bytes = randomBytes(size);
    await pool.query('INSERT INTO bytea_probe (id, bytes) VALUES ($1, $2)', [id, bytes]);
    const into = file();
    expect(await copyByteaToFile(pool, source, id, into)).toBe(size);
    expect(readFileSync(into).equals(bytes)).toBe(true);
  });

  it('answers null, and leaves no file, when there is no row or the value is NULL', async () => {
    const none = file();
    expect(await copyByteaToFile(pool, source, randomUUID(), none)).toBeNull();
    expect(existsSync(none)).toBe(false);
    const id = randomUUID();
    await pool.query('INSERT INTO bytea_probe (id, bytes) VALUES ($1, NULL)', [id]);
    expect(await copyByteaToFile(pool, source, id, none)).toBeNull();
    expect(existsSync(none)).toBe(false);
  });

  it('ends when the database ends the connection just after the copy, in the same packet (a server shutting down)', async () => {
    const id = randomUUID();
    const bytes = randomBytes(1000);
    await pool.query('INSERT INTO bytea_probe (id, bytes) VALUES ($1, $2)', [id, bytes]);
    const url = new URL(pool.options.connectionString as string);
    const proxy = await startShutdownAfterCopyProxy({ host: url.hostname, port: Number(url.port) });
    url.host = `127.0.0.1:${proxy.port}`;
    const proxied = new pg.Pool({ connectionString: url.toString(), max: 1 });
    proxied.on('error', () => undefined);
    let copied: unknown;
    try {
      const into = file();
      // Before: the FATAL after ReadyForQuery reached a checked-out client with no 'error' listener, whose
      // throw broke off pg-copy-streams' hand-back, and the copy waited forever (a task's step with it).
      copied = await Promise.race([copyByteaToFile(proxied, source, id, into), sleep(10_000, 'still waiting after 10 s', { ref: false })]);
      expect(copied).toBe(bytes.length);
      expect(readFileSync(into).equals(bytes)).toBe(true);
      expect(proxy.ended()).toBe(1);
      // the broken connection was not handed back to the pool: the next query gets a new one
      expect((await proxied.query<{ one: number }>('SELECT 1 AS one')).rows).toEqual([{ one: 1 }]);
    } finally {
      await proxy.close();
      if (copied === bytes.length) await proxied.end();
      else void proxied.end(); // a client still checked out would hold end() forever
    }
  });

  it('refuses a key that is not a UUID before it reaches SQL', async () => {
    await expect(copyByteaToFile(pool, source, "x' OR '1'='1", file())).rejects.toThrow(/not a UUID/);
  });
});

/** PostgreSQL's ErrorResponse for a backend ended by a fast shutdown. */
function adminShutdownError(): Buffer {
  const fields = Buffer.from('SFATAL\0VFATAL\0C57P01\0Mterminating connection due to administrator command\0\0', 'latin1');
  const head = Buffer.alloc(5);
  head.write('E', 0, 'latin1');
  head.writeUInt32BE(fields.length + 4, 1);
  return Buffer.concat([head, fields]);
}

/**
 * A TCP proxy in front of the test's PostgreSQL that, for the first COPY … TO STDOUT, holds the server's
 * messages from CopyOutResponse to ReadyForQuery and writes them in one packet followed by the FATAL a fast
 * shutdown sends, then closes the connection: what a client sees when the server stops just as a copy ends.
 */
async function startShutdownAfterCopyProxy(target: { host: string; port: number }): Promise<TcpProxy & { ended(): number }> {
  let ended = 0;
  const proxy = await startTcpProxy(target, (upstream, client) => {
    let pending = Buffer.alloc(0);
    let held: Buffer[] | null = null;
    upstream.on('data', (chunk: Buffer) => {
      pending = Buffer.concat([pending, chunk]);
      while (pending.length >= 5 && pending.length >= 1 + pending.readUInt32BE(1)) {
        const size = 1 + pending.readUInt32BE(1);
        const message = pending.subarray(0, size);
        pending = pending.subarray(size);
        const type = String.fromCharCode(message[0]);
        if (type === 'H' && ended === 0) held = [];
        if (!held) {
          client.write(message);
          continue;
        }
        held.push(message);
        if (type === 'Z') {
          ended++;
          client.end(Buffer.concat([...held, adminShutdownError()]));
          upstream.destroy();
          return;
        }
      }
    });
  });
  return Object.assign(proxy, { ended: () => ended });
}
