/**
 * Polls `read` until `done` holds or the deadline passes (no fixed sleeps: the tests wait for the state).
 * Without `intervalMs` the pause grows from 50 ms to 400 ms: a state that comes at once is seen at once, and a
 * long wait costs a few reads a second rather than ten (each read is a request the service and its database answer,
 * on the same two cores as every other test).
 */
export async function pollUntil<T>(read: () => Promise<T>, done: (value: T) => boolean, { timeoutMs = 30_000, intervalMs = undefined as number | undefined, what = 'condition' } = {}): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let pause = intervalMs ?? 50;
  let value = await read();
  while (!done(value)) {
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}; last value: ${JSON.stringify(value)?.slice(0, 500)}`);
    await new Promise((r) => setTimeout(r, pause));
    if (intervalMs === undefined) pause = Math.min(400, pause * 1.5);
    value = await read();
  }
  return value;
}
