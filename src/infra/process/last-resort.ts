import type { Logger } from 'pino';
import { isDatabaseUnavailable } from '../database/database-errors.js';

/** The same message is logged at most once per this many ms; repeats are counted into the next line. */
const REPEAT_INTERVAL_MS = 30_000;

/**
 * The process-wide last resort, for errors no caller handled:
 * - an unhandled promise rejection (for example pg-boss's own bookkeeping failing while the database is
 *   down) is logged with its error and the process keeps serving: a failed promise nobody waited for
 *   leaves no half-done state behind;
 * - an uncaught exception that is a database connection error (a driver's socket dropped) is logged
 *   and the process keeps serving, since the database status and the queue recover from it;
 * - any other uncaught exception leaves the process in an unknown state: it is logged as fatal and the
 *   process shuts down gracefully with exit code 1, for its supervisor to restart it. Accepted tasks
 *   are in the database, so none is lost.
 */
export function installLastResortHandlers(logger: Logger, shutdown: (reason: string, exitCode: number) => void): void {
  const seen = new Map<string, { at: number; suppressed: number }>();
  const throttled = (err: unknown): { log: boolean; repeated?: number } => {
    const key = err instanceof Error ? `${err.name}:${err.message}` : String(err);
    const now = Date.now();
    const entry = seen.get(key);
    if (entry && now - entry.at < REPEAT_INTERVAL_MS) {
      entry.suppressed++;
      return { log: false };
    }
    if (seen.size > 100) seen.clear();
    seen.set(key, { at: now, suppressed: 0 });
    return { log: true, repeated: entry?.suppressed || undefined };
  };

  process.on('unhandledRejection', (reason) => {
    const { log, repeated } = throttled(reason);
    if (!log) return;
    logger.error(
      { err: reason instanceof Error ? reason : new Error(String(reason)), database_unavailable: isDatabaseUnavailable(reason), repeated },
      'unhandled promise rejection; the process keeps serving',
    );
  });

  process.on('uncaughtException', (err, origin) => {
    if (isDatabaseUnavailable(err)) {
      const { log, repeated } = throttled(err);
      if (log) logger.error({ err, origin, repeated }, 'uncaught database connection error; the process keeps serving');
      return;
    }
    logger.fatal({ err, origin }, 'uncaught exception: the process state is unknown, so it shuts down (exit code 1) for its supervisor to restart it');
    shutdown('uncaughtException', 1);
  });
}
