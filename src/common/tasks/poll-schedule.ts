/** How often waiting tasks are polled (RELAY_POLL_MS, UPSTREAM_CALLBACK_POLL_S), in seconds. */
export interface PollSchedule {
  /** The first delay; later ones grow with the task's age, to 15 times this. */
  pollS: number;
  /** A task whose upstream was asked to call back is polled this often only: the safety net. */
  callbackPollS: number;
}

/**
 * Seconds until a watched task's next poll, as SQL over its row (`cols`: column expressions) and the
 * schedule's parameters (`params`: placeholders): a tenth of the time since the task (last) started, from
 * pollS to 15 times it (a task that waited for a busy upstream starts again when it is created there)
 * (the longer an upstream has worked, the longer it is likely to work on), or callbackPollS when the
 * upstream will call back; ±10 % jitter, so tasks created together do not stay in step; never below the
 * protocol's own floor.
 */
export function nextPollSql(cols: { startedAt: string; callbackPending: string; minPollS: string }, params: { pollS: string; callbackPollS: string }): string {
  const byAge = `LEAST(GREATEST(${params.pollS}::float8, extract(epoch FROM now() - ${cols.startedAt}) / 10), ${params.pollS}::float8 * 15)`;
  return `GREATEST(${cols.minPollS}, (CASE WHEN ${cols.callbackPending} THEN ${params.callbackPollS}::float8 ELSE ${byAge} END) * (0.9 + random() * 0.2))`;
}
