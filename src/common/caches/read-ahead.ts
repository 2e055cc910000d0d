/**
 * How long a cache's read ahead of its end waits before it goes out. The request that finds the cache past
 * half its time is the one that starts the read: sent at once, it ran beside that request's own statements
 * (its admission, its step's claim) on the same two cores and the same pool, every time. Sent a little later,
 * it lands where nothing else may be running (the wait on a vendor), or beside another request by chance.
 */
export const READ_AHEAD_DELAY_MS = 50;

/**
 * Runs `work` (a read that keeps a cache fresh, which handles its own failure) READ_AHEAD_DELAY_MS from now,
 * off the request that asked for it; the pending timer holds no process open. Answers what runs it now
 * instead, if it has not run yet (a request that would otherwise wait for it).
 */
export function readAheadSoon(work: () => void): () => void {
  let ran = false;
  const run = () => {
    if (ran) return;
    ran = true;
    clearTimeout(timer);
    work();
  };
  const timer = setTimeout(run, READ_AHEAD_DELAY_MS);
  timer.unref();
  return run;
}
