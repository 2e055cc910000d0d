import { readFileSync } from 'node:fs';
import { createServer } from 'node:net';

/** Where ports are drawn from: above the well-known and registered services most machines run, below the ephemeral range. */
const FIRST = 10_000;
/** Jest workers' blocks: a worker draws from block (JEST_WORKER_ID mod BLOCKS), so two files running at once never draw the same port. */
const BLOCKS = 8;

/** The first port of the kernel's ephemeral range (Linux's default 32768 where it cannot be read). */
function ephemeralLow(): number {
  try {
    const low = Number(readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/)[0]);
    return Number.isInteger(low) && low > FIRST + BLOCKS * 100 ? low : 32_768;
  } catch {
    return 32_768;
  }
}

const size = Math.floor((ephemeralLow() - FIRST) / BLOCKS);
const block = FIRST + ((Number(process.env.JEST_WORKER_ID ?? 1) - 1) % BLOCKS) * size;
let next = Math.floor(Math.random() * size);

/**
 * A port nothing listens on, for a process the test starts (and may restart on the same port) or for one that
 * must refuse connections. Not from the kernel's ephemeral range: there any outgoing connection or listen(0)
 * of any process may take it between this answer and its use (a worker restarted after a kill -9 once found
 * its port so taken: EADDRINUSE). Each Jest worker draws from its own block, in turn, so a port is not handed
 * out twice in a run; one something else holds is skipped.
 */
export async function freePort(): Promise<number> {
  for (let tries = 0; tries < size; tries++) {
    const port = block + (next++ % size);
    if (await bindable(port)) return port;
  }
  throw new Error(`freePort: no free port in ${block}-${block + size - 1}`);
}

/** Whether a listener could take `port` on every address, as the service's listen does (IPv4 alone where IPv6 is off). */
function bindable(port: number, host = '::'): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once('error', (error: NodeJS.ErrnoException) => resolve(error.code === 'EAFNOSUPPORT' && host === '::' ? bindable(port, '0.0.0.0') : false));
    server.listen({ port, host, exclusive: true }, () => server.close(() => resolve(true)));
  });
}
