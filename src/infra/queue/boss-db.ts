import pg from 'pg';
import { KEPT_CONNECTIONS } from '../database/kept-connections.js';
import { onOneConnection } from '../database/one-connection.js';
import { prepared } from '../prisma/statement.js';

/**
 * pg-boss's connection to the database (its `db` option): a pool of its own, whose connections are kept,
 * on which every statement with parameters (fetch, complete, fail, send) runs as a named statement,
 * parsed and planned once per connection. pg-boss sends its texts unnamed, so PostgreSQL planned each of
 * them at every call over the job table's partitions: about 0.3 ms of its CPU per fetch and per
 * completion, most of their cost. A text with parameters is one statement (the extended protocol takes
 * no more); pg-boss's migrations, which may hold several, come without and run as they are.
 */
export class BossDb {
  private readonly pool: pg.Pool;
  private closed = false;

  constructor(options: pg.PoolConfig, onError: (err: Error) => void) {
    this.pool = new pg.Pool({ ...options, ...KEPT_CONNECTIONS });
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
