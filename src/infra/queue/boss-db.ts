import pg from 'pg';
import { KEPT_CONNECTIONS } from '../database/kept-connections.js';
import { onOneConnection } from '../database/one-connection.js';
import { prepared } from '../prisma/statement.js';

/** What makes a session's named statements use their generic plan from their first call. */
const GENERIC_PLANS = 'SET plan_cache_mode = force_generic_plan';

/**
 * pg-boss's connection to the database (its `db` option): a pool of its own, whose connections are kept,
 * on which every statement with parameters (fetch, complete, fail, send) runs as a named statement,
 * parsed and planned once per connection. pg-boss sends its texts unnamed, so PostgreSQL planned each of
 * them at every call over the job table's partitions: about 0.3 ms of its CPU per fetch and per
 * completion, most of their cost. A text with parameters is one statement (the extended protocol takes
 * no more); pg-boss's migrations, which may hold several, come without and run as they are.
 *
 * Named is not enough on its own: by default PostgreSQL plans a named statement anew for its values at each
 * call while that custom plan looks cheaper than the generic one, and for the fetch and the completion it
 * always did (pg_stat_statements: as many plans as calls, 0.5-0.6 ms of planning each against 0.2-0.4 ms of
 * execution). Their plans do not depend on the values (a queue's name picks its partition at execution,
 * ids and states their indexes), so this pool's sessions take the generic plan, made once per connection:
 * each new connection is first told `plan_cache_mode` (a SET, not a startup option, which a pooler in front
 * may refuse; should it fail, the connection plans as before).
 */
export class BossDb {
  private readonly pool: pg.Pool;
  private closed = false;

  constructor(options: pg.PoolConfig, onError: (err: Error) => void) {
    // the SET ends before the connection is handed out (a `connect` listener's query would still be running
    // when the first one came: node-postgres queues it, a use it deprecates and its next major version refuses)
    const onConnect = async (client: pg.ClientBase): Promise<void> => {
      await client.query(GENERIC_PLANS).catch(() => undefined);
    };
    this.pool = new pg.Pool({ ...options, ...KEPT_CONNECTIONS, onConnect });
    this.pool.on('error', onError);
  }

  executeSql(text: string, values?: unknown[]): Promise<pg.QueryResult> {
    return values ? this.pool.query(prepared(text, values)) : this.pool.query(text);
  }

  /** One of the pool's connections, for `work` alone (the queue set-up lock is held on it). */
  onOneConnection<T>(work: (client: pg.ClientBase) => Promise<T>): Promise<T> {
    return onOneConnection(this.pool, work);
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.pool.end();
  }
}
