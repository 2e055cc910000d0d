/** Polls `read` until `done` holds or the deadline passes (no fixed sleeps: the tests wait for the state). */
export async function pollUntil<T>(read: () => Promise<T>, done: (value: T) => boolean, { timeoutMs = 30_000, intervalMs = 100, what = 'condition' } = {}): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let value = await read();
  while (!done(value)) {
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}; last value: ${JSON.stringify(value)?.slice(0, 500)}`);
    await new Promise((r) => setTimeout(r, intervalMs));
    value = await read();
  }
  return value;
}
