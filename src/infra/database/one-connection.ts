import pg from 'pg';

/**
 * Runs `work` on one connection: a new one to the URL, closed after, or one of the pool's, given back after
 * (closed instead when `work` threw: its state is then unknown, and a session lock it took ends with it). The service's start-up steps (migrations, the
 * sealing of stored secrets) take the pool's: a connection costs PostgreSQL a process start (about 30 ms of
 * its CPU here), and the pool keeps it for the queries that follow; the CLI and tests pass a URL.
 */
export async function onOneConnection<T>(database: string | pg.Pool, work: (client: pg.ClientBase) => Promise<T>): Promise<T> {
  if (typeof database !== 'string') {
    const client = await database.connect();
    let failed = false;
    try {
      return await work(client);
    } catch (err) {
      failed = true;
      throw err;
    } finally {
      client.release(failed);
    }
  }
  const client = new pg.Client({ connectionString: database });
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.end();
  }
}
