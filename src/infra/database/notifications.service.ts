import { Injectable, Logger, type OnApplicationShutdown } from '@nestjs/common';
import pg from 'pg';
import { AppConfig } from '../config/app-config.js';

type Handler = (payload: string) => void;

const RETRY_MIN_MS = 1000;
const RETRY_MAX_MS = 30_000;

/**
 * PostgreSQL LISTEN on one dedicated connection: what one instance changes (an owner's limits), every
 * instance hears at once, and drops what it cached. A lost connection is re-opened with backoff; while
 * it is down, `listening` is false and callers rely on their caches' short lifetimes instead.
 */
@Injectable()
export class NotificationsService implements OnApplicationShutdown {
  private readonly logger = new Logger('Notifications');
  private readonly handlers = new Map<string, Handler[]>();
  private client?: pg.Client;
  private connecting?: Promise<void>;
  private retryMs = RETRY_MIN_MS;
  private timer?: NodeJS.Timeout;
  private stopped = false;
  /** Notifications asked for and not sent yet: the next statement of notifications sends them all (sendUnsent). */
  private readonly unsent: { channel: string; payload: string; resolve: () => void; reject: (err: unknown) => void }[] = [];
  /** The last statement sent on the connection (inTurn): the next waits for it. */
  private turn: Promise<void> = Promise.resolve();
  listening = false;
  /** Whether the connection has listened before: its next opening follows a loss (see whenHeardAgain). */
  private listened = false;
  private readonly heardAgain: (() => void)[] = [];

  constructor(private readonly config: AppConfig) {}

  /**
   * Calls `callback` each time the connection listens again after it was lost: what the other instances
   * sent meanwhile was not heard, so whoever relies on it looks again.
   */
  whenHeardAgain(callback: () => void): void {
    this.heardAgain.push(callback);
  }

  /** Calls `handler` with the payload of every notification on `channel`, from now on. */
  async listen(channel: string, handler: Handler): Promise<void> {
    const first = !this.handlers.has(channel);
    this.handlers.set(channel, [...(this.handlers.get(channel) ?? []), handler]);
    const client = this.client;
    if (client && first) await this.inTurn(() => client.query(`LISTEN "${channel}"`)).catch(() => this.reconnectSoon());
    if (!this.client) await this.connect();
  }

  /**
   * Sends `payload` on `channel` to every instance listening (this one too), on the LISTEN connection: not
   * in the caller's transaction, and off the pool requests use. The session does not wait for the disk at
   * commit (synchronous_commit off): a notification is not durable anyway, and a NOTIFY's commit would
   * otherwise wait for a WAL flush. Fails when the connection is down (the caller's safety net then serves).
   */
  notify(channel: string, payload: string): Promise<void> {
    if (!this.client) return Promise.reject(new Error('the notification connection is down'));
    return new Promise((resolve, reject) => {
      this.unsent.push({ channel, payload, resolve, reject });
      if (this.unsent.length === 1) void this.inTurn(() => this.sendUnsent());
    });
  }

  /**
   * What was asked since the last statement of notifications, as one statement, in the order asked.
   * PostgreSQL folds identical notifications (channel and payload) of one transaction into one; every
   * notification sent here is a wake-up, which means no more for being heard twice.
   */
  private async sendUnsent(): Promise<void> {
    const batch = this.unsent.splice(0);
    try {
      if (!this.client) throw new Error('the notification connection is down');
      await this.client.query('SELECT pg_notify(n.channel, n.payload) FROM unnest($1::text[], $2::text[]) WITH ORDINALITY AS n(channel, payload, i) ORDER BY n.i', [batch.map((n) => n.channel), batch.map((n) => n.payload)]);
      for (const n of batch) n.resolve();
    } catch (err) {
      for (const n of batch) n.reject(err);
    }
  }

  /**
   * Runs `work` once the connection's statement before it has ended: node-postgres queues a query sent while
   * another runs, a use it deprecates and its next major version refuses.
   */
  private inTurn<T>(work: () => Promise<T>): Promise<T> {
    const run = this.turn.then(work);
    this.turn = run.then(
      () => undefined,
      () => undefined,
    );
    return run;
  }

  async onApplicationShutdown(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    await this.connecting?.catch(() => undefined);
    await this.client?.end().catch(() => undefined);
  }

  private connect(): Promise<void> {
    this.connecting ??= (async () => {
      const client = new pg.Client({ connectionString: this.config.databaseUrl, connectionTimeoutMillis: this.config.databasePoolTimeoutMs, application_name: 'media-gateway-listen' });
      client.on('notification', (n) => {
        for (const handler of this.handlers.get(n.channel) ?? []) handler(n.payload ?? '');
      });
      client.on('error', () => this.reconnectSoon());
      client.on('end', () => this.reconnectSoon());
      try {
        await client.connect();
        await client.query('SET synchronous_commit = off');
        for (const channel of this.handlers.keys()) await client.query(`LISTEN "${channel}"`);
        this.client = client;
        this.listening = true;
        this.retryMs = RETRY_MIN_MS;
      } catch (err) {
        await client.end().catch(() => undefined);
        this.logger.warn(`cannot listen for notifications (${(err as Error).message}); retrying in ${this.retryMs / 1000} s`);
        this.scheduleRetry();
        return;
      }
      if (this.listened) {
        for (const callback of this.heardAgain) {
          try {
            callback();
          } catch (err) {
            this.logger.warn(`a callback of the connection listening again failed: ${String(err)}`);
          }
        }
      }
      this.listened = true;
    })().finally(() => (this.connecting = undefined));
    return this.connecting;
  }

  private reconnectSoon(): void {
    if (!this.listening && !this.client) return;
    this.listening = false;
    const client = this.client;
    this.client = undefined;
    client?.removeAllListeners('end');
    client?.end().catch(() => undefined);
    this.scheduleRetry();
  }

  private scheduleRetry(): void {
    if (this.stopped) return;
    clearTimeout(this.timer);
    this.timer = setTimeout(() => void this.connect(), this.retryMs);
    this.timer.unref();
    this.retryMs = Math.min(RETRY_MAX_MS, this.retryMs * 2);
  }
}
