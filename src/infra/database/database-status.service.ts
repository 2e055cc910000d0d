import { setTimeout as sleep } from 'node:timers/promises';
import { Injectable, Logger, type OnModuleDestroy } from '@nestjs/common';
import pg from 'pg';
import { AppConfig } from '../config/app-config.js';
import { isDatabaseUnavailable } from './database-errors.js';
import { KEPT_CONNECTIONS } from './kept-connections.js';

export type DatabaseListener = (available: boolean) => void;

/** Raised to a caller waiting for the database when the process shuts down first. */
export class ShuttingDown extends Error {}

const PROBE_INTERVAL_MS = 1000;
/**
 * A check that has had no answer for this long counts as a database that does not answer. Long enough that a
 * database (or a machine) that is only slow, under load, is not taken for one that is gone: a stopped
 * database refuses or drops the connection at once, which the check sees as it happens.
 */
const CHECK_TIMEOUT_MS = 10_000;
/** How long /health/ready waits for its check before answering from what is known (a probe must answer quickly). */
const READY_WAIT_MS = 1000;

/**
 * Whether the database answers, as this process sees it. Any part of the service that meets a
 * connection-class error reports it here; a check confirms it, the status goes "down" and a probe on a
 * connection pool of its own (two connections, so it never queues behind request traffic) checks every
 * second until the database answers again. Listeners hear both transitions (the queue pauses and resumes
 * its workers); callers can wait for the database to come back. /health/ready uses the same check, and
 * tells a database that is down (refused, dropped, or silent for 10 s) from one that is slow.
 */
@Injectable()
export class DatabaseStatus implements OnModuleDestroy {
  private readonly logger = new Logger('Database');
  private readonly pool: pg.Pool;
  private available = true;
  private downSince = 0;
  private probing?: Promise<void>;
  private inFlight?: Promise<boolean>;
  private closed = false;
  private readonly listeners: DatabaseListener[] = [];
  private waiters: { resolve: () => void; reject: (err: Error) => void }[] = [];

  constructor(config: AppConfig) {
    this.pool = new pg.Pool({
      connectionString: config.databaseUrl,
      max: 2,
      ...KEPT_CONNECTIONS,
      connectionTimeoutMillis: CHECK_TIMEOUT_MS,
      query_timeout: CHECK_TIMEOUT_MS,
      application_name: 'media-gateway-health',
    });
    this.pool.on('error', () => undefined); // an idle probe connection dropped: the next check says so
  }

  /** True unless an outage is in progress. */
  get isAvailable(): boolean {
    return this.available;
  }

  onChange(listener: DatabaseListener): void {
    this.listeners.push(listener);
  }

  /**
   * Whether `error` looks like the database being unavailable. If so, a short check confirms it (an
   * error that only looks like one, such as a refused HTTP connection, does not start an outage) and
   * the outage is recorded and probed.
   */
  report(error: unknown): boolean {
    if (!isDatabaseUnavailable(error)) return false;
    void this.confirm(error);
    return true;
  }

  /** Like report(), but resolves only once the short check has decided: true while the database is down. */
  async confirm(error: unknown): Promise<boolean> {
    if (!isDatabaseUnavailable(error)) return false;
    if (await this.check()) return false;
    this.markDown(error);
    return true;
  }

  /** One short check (SELECT 1 on the probe pool); concurrent callers share it. */
  check(): Promise<boolean> {
    this.inFlight ??= this.pool
      .query('SELECT 1')
      .then(
        () => true,
        () => false,
      )
      .finally(() => (this.inFlight = undefined));
    return this.inFlight;
  }

  /**
   * The readiness check. A database that answers, however slowly, is ready; one that refuses or drops the
   * connection, or has not answered within CHECK_TIMEOUT_MS, is not (and the outage state follows). It waits
   * READY_WAIT_MS at most: a check still out then goes on, and the answer is what is known — ready, unless an
   * outage is — so a machine whose CPUs are saturated, or a database answering slowly, does not take a busy
   * instance out of its load balancer's rotation.
   */
  async ready(): Promise<boolean> {
    const checking = this.check().then((ok) => {
      if (!ok) this.markDown(new Error('readiness check failed'));
      return ok;
    });
    const answer = await Promise.race([checking, sleep(READY_WAIT_MS, undefined, { ref: false })]);
    return answer ?? this.available;
  }

  /** Resolves once the database answers (at once when no outage is known). */
  whenAvailable(): Promise<void> {
    if (this.available) return Promise.resolve();
    if (this.closed) return Promise.reject(new ShuttingDown('shutting down'));
    return new Promise((resolve, reject) => this.waiters.push({ resolve, reject }));
  }

  /**
   * Runs `work`; while it fails because the database is unavailable, waits for the database and runs it
   * again. For writes that must not be lost to an outage (a finished task's result, a lease release);
   * `work` must be safe to repeat. Other errors are thrown as they are.
   */
  async retryWhileUnavailable<T>(work: () => Promise<T>): Promise<T> {
    for (;;) {
      try {
        return await work();
      } catch (err) {
        if (this.closed || !(await this.confirm(err))) throw err;
        await this.whenAvailable();
      }
    }
  }

  async onModuleDestroy(): Promise<void> {
    this.closed = true;
    for (const waiter of this.waiters) waiter.reject(new ShuttingDown('shutting down while waiting for the database'));
    this.waiters = [];
    await this.probing;
    await this.pool.end().catch(() => undefined);
  }

  private markDown(error: unknown): void {
    if (this.closed) return;
    if (this.available) {
      this.available = false;
      this.downSince = Date.now();
      this.logger.error({ msg: 'the database is unavailable; requests that need it answer 503 and workers wait until it answers again', err: error instanceof Error ? error : new Error(String(error)) });
      this.notify(false);
    }
    this.probeUntilAvailable();
  }

  /**
   * One probe at a time. An outage that begins between a probe's last check and the end of its promise
   * finds `probing` still set: the probe ending then starts the next, so no outage goes unprobed.
   */
  private probeUntilAvailable(): void {
    this.probing ??= this.probe().finally(() => {
      this.probing = undefined;
      if (!this.available && !this.closed) this.probeUntilAvailable();
    });
  }

  private async probe(): Promise<void> {
    while (!this.closed && !this.available) {
      await sleep(PROBE_INTERVAL_MS);
      if (this.closed) return;
      if (await this.check()) {
        this.available = true;
        this.logger.log({ msg: 'the database answers again; resuming', outage_s: Math.round((Date.now() - this.downSince) / 100) / 10 });
        const waiters = this.waiters;
        this.waiters = [];
        for (const waiter of waiters) waiter.resolve();
        this.notify(true);
      }
    }
  }

  private notify(available: boolean): void {
    for (const listener of this.listeners) {
      try {
        listener(available);
      } catch (err) {
        this.logger.error({ msg: 'a database status listener failed', err });
      }
    }
  }
}
