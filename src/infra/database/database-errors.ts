/** Socket and driver codes that mean "the database cannot be reached or is going away", not "the query is wrong". */
const UNAVAILABLE_CODES = new Set([
  // sockets
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'ENOTFOUND',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'EPIPE',
  'EAI_AGAIN',
  // PostgreSQL: shutting down, starting up, too many connections, connection failures
  '57P01',
  '57P02',
  '57P03',
  '53300',
  '08000',
  '08001',
  '08003',
  '08004',
  '08006',
  // Prisma: unreachable, timed out, closed, a transaction that could not start in time (pool exhausted)
  'P1001',
  'P1002',
  'P1017',
  'P2028',
]);

/** Kinds of Prisma's driver-adapter errors that mean the same. */
const UNAVAILABLE_KINDS = new Set(['DatabaseNotReachable', 'ConnectionClosed', 'SocketTimeout', 'TooManyConnections']);

/** Errors that node-postgres and pg-pool raise without a code. */
const UNAVAILABLE_MESSAGES =
  /timeout exceeded when trying to connect|Connection terminated|connection error|Connection ended unexpectedly|the database system is (starting up|shutting down|in recovery mode)|Can't reach database server|Unable to start a transaction in the given time|Client was closed and is not queryable/i;

/** What an error (or one it wraps) may say about itself. */
interface ErrorFields {
  code?: unknown;
  originalCode?: unknown;
  kind?: unknown;
  message?: unknown;
  cause?: unknown;
  errors?: unknown;
  meta?: { code?: unknown; driverAdapterError?: unknown };
}

/** Whether `test` holds for the error or one it wraps: its causes, Prisma's driver-adapter details, aggregated errors (at most 16 looked at). */
function anyWrapped(error: unknown, test: (e: ErrorFields) => boolean): boolean {
  const seen = new Set<unknown>();
  const queue: unknown[] = [error];
  while (queue.length > 0 && seen.size < 16) {
    const current = queue.shift();
    if (!current || typeof current !== 'object' || seen.has(current)) continue;
    seen.add(current);
    const e = current as ErrorFields;
    if (test(e)) return true;
    queue.push(e.cause, e.meta?.driverAdapterError);
    if (Array.isArray(e.errors)) queue.push(...e.errors);
  }
  return false;
}

/**
 * True when an error means the database is unavailable for now (down, restarting, unreachable, out of
 * connections), so the right answer is "retry later" (503) rather than a failure. Looks through causes,
 * Prisma's driver-adapter details and aggregated connect errors.
 */
export function isDatabaseUnavailable(error: unknown): boolean {
  return anyWrapped(
    error,
    (e) =>
      (typeof e.code === 'string' && UNAVAILABLE_CODES.has(e.code)) ||
      (typeof e.originalCode === 'string' && UNAVAILABLE_CODES.has(e.originalCode)) ||
      (typeof e.kind === 'string' && UNAVAILABLE_KINDS.has(e.kind)) ||
      (typeof e.message === 'string' && UNAVAILABLE_MESSAGES.test(e.message)),
  );
}

/** PostgreSQL's deadlock_detected: it rolled back one of the transactions that waited for each other. */
const DEADLOCK = '40P01';

/** True when the error is PostgreSQL's deadlock_detected (from node-postgres, or wrapped by Prisma's driver adapter). */
export function isDeadlock(error: unknown): boolean {
  return anyWrapped(error, (e) => e.code === DEADLOCK || e.originalCode === DEADLOCK || e.meta?.code === DEADLOCK);
}

/** How many times work that PostgreSQL rolled back as a deadlock's victim runs in all. */
const DEADLOCK_TRIES = 3;

/**
 * Runs `work` (one statement or one transaction, all rolled back when it fails) again when PostgreSQL chose
 * it as a deadlock's victim, as PostgreSQL's manual advises: the other transaction has gone on, and the
 * work's next run finds it committed. Up to DEADLOCK_TRIES runs; any other error is thrown at once.
 */
export async function retryOnDeadlock<T>(work: () => Promise<T>): Promise<T> {
  for (let run = 1; ; run++) {
    try {
      return await work();
    } catch (err) {
      if (run >= DEADLOCK_TRIES || !isDeadlock(err)) throw err;
    }
  }
}
