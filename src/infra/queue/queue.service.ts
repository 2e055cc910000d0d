import { Injectable, Logger, type OnModuleDestroy, type OnModuleInit } from '@nestjs/common';
import PgBoss from 'pg-boss';
import { AppConfig } from '../config/app-config.js';
import { DatabaseStatus } from '../database/database-status.service.js';
import { NotificationsService } from '../database/notifications.service.js';
import type { SqlExecutor } from '../prisma/sql-executor.js';
import { BossDb } from './boss-db.js';
import { FIXED_QUEUES, type JobName, type JobPayload, type QueueSettings } from './jobs.js';

export interface SendOptions {
  /** Run inside this transaction (see sqlExecutorOf), so the job exists exactly when the row does. */
  db?: SqlExecutor;
  /** The job's id, chosen by the caller so the row it works on can record it (see deadJobCondition). */
  id?: string;
  /** Not before this many seconds from now. */
  startAfterSeconds?: number;
  /** At most one queued job with this key (a scheduling tick, a redelivery). */
  singletonKey?: string;
  /** Higher runs first (see jobs.ts); 0 by default. */
  priority?: number;
}

export interface JobInfo {
  id: string;
  retryCount: number;
  priority: number;
}

/** A slot of this instance's consumer of a queue, kept for a job this instance writes as taken (QueueService.reserve). */
export interface ReservedSlot {
  readonly name: JobName;
}

/** A handler may ask its consumer to fetch nothing more for a while (the work it got cannot start yet). */
/**
 * What a handler tells of its job: `backOffMs`, the consumer waits that long before its next fetch;
 * `completed`, the handler completed the job itself, in the statement that wrote its work's end
 * (completeJobSql), so no completion is written for it again.
 */
export type JobResult = void | { backOffMs?: number; completed?: boolean };

type Handler<N extends JobName> = (payload: JobPayload<N>, job: JobInfo) => Promise<JobResult>;

/** One queue consumed on this instance: at most `concurrency` jobs run at once. */
interface Consumer {
  name: JobName;
  concurrency: number;
  handler: Handler<JobName>;
  running: number;
  /** Fetch nothing before this time (a handler asked to back off). */
  idleUntil: number;
  /** Its last fetch found nothing: it waits for the scout (or a job this instance sent) to say there is work. */
  hungry: boolean;
  /** Ends the consumer's current wait early (a slot freed, the database came back, shutdown). */
  wake?: () => void;
  /** Woken while it was not waiting (its fetch in flight): its next wait ends at once. */
  nudged: boolean;
  loop?: Promise<void>;
}

/** The columns of a job row as pg-boss's own send() writes them, and its queue's settings for them (start now). */
const JOB_COLUMNS = '(id, name, data, priority, expire_in, keep_until, retry_limit, retry_delay, retry_backoff, policy, dead_letter)';
const JOB_SETTINGS = `COALESCE(q.expire_seconds * interval '1s', interval '15 minutes'), now() + COALESCE(q.retention_minutes * interval '1 minute', interval '14 days'),
        COALESCE(q.retry_limit, 2), CASE WHEN COALESCE(q.retry_backoff, false) THEN GREATEST(COALESCE(q.retry_delay, 0), 1) ELSE COALESCE(q.retry_delay, 0) END,
        COALESCE(q.retry_backoff, false), q.policy, q.dead_letter`;

/**
 * Serialises queue creation across every instance that shares the database: pg-boss creates a queue's
 * partition and attaches it to its job table, and two instances doing so at once deadlock (each inserts
 * its queue row, then waits for the other's to add the partition's foreign key). pg-boss's own start
 * creates one (its scheduler's `__pgboss__send-it`), so the start runs under the same lock.
 */
const QUEUE_SETUP_LOCK_ID = 72_804_116;

/** The channel on which an instance tells the others' consumers that it sent jobs of a queue (its name). */
export const JOBS_CHANNEL = 'mgw_jobs';

/** The scout's look: which of the queues ($1, text[]) hold a job ready to start, by pg-boss's index on waiting jobs. */
export const QUEUES_WITH_JOBS_READY_SQL = 'SELECT name FROM mgw_queues_with_jobs_ready($1::text[]) AS name';

/** The queues with no job in hand are looked at (one statement for all) this often. */
const POLL_MS = 500;
/** A job due at a time is fetched this long after it (start_after < now() must hold by then). */
const DUE_MARGIN_MS = 20;
/** A consumer that found its queue empty fetches again after this long even if the scout saw nothing (a safety net). */
const HUNGRY_MAX_MS = 30_000;
/** How long shutdown waits for running jobs before it lets go of them (another instance takes them over). */
const DRAIN_MS = 10_000;
/** A queue error is logged once per this many ms per message; the rest are counted into the next line. */
const ERROR_LOG_INTERVAL_MS = 30_000;

/**
 * How long a job may be active without its work being claimed before it counts as dead: a live worker
 * claims within moments of taking a job, and a claim (or an attempt lock) still stops a second run,
 * so a job judged dead too early only costs a spare job. The lease bounds it when it is shorter.
 */
export function orphanGraceS(leaseS: number): number {
  return Math.min(leaseS, 5);
}

/**
 * The job queue: pg-boss 10 in the same PostgreSQL (schema `pgboss`), which stores the jobs, retries
 * them, expires and archives them and runs the cron schedules. Every instance can send; instances
 * whose ROLE runs workers consume: one loop per queue fetches as many jobs as it has free slots, runs
 * them, and completes or fails each, awaited (pg-boss's own `work()` leaves those calls unawaited, and
 * their rejection during a database outage ends the process). While the database is unavailable the
 * loops pause, and the bookkeeping of a job that finished waits for it; they resume when it answers.
 */
@Injectable()
export class QueueService implements OnModuleInit, OnModuleDestroy {
  private readonly logger = new Logger('Queue');
  private readonly boss: PgBoss;
  private readonly db: BossDb;
  private readonly consumers: Consumer[] = [];
  private scouting?: Promise<void>;
  /** Ends the scout's wait between looks (at the drain, which would otherwise wait out the rest of it). */
  private wakeScout?: () => void;
  private paused = false;
  private stopping = false;
  private drainDeadline?: number;
  private readonly errorLog = new Map<string, { at: number; suppressed: number }>();
  /** Queues whose new jobs the other instances are yet to be told of, and the telling in progress. */
  private readonly untold = new Set<string>();
  private telling?: Promise<void>;
  /** The consumer each reserved slot belongs to. */
  private readonly reserved = new WeakMap<ReservedSlot, Consumer>();

  constructor(
    private readonly config: AppConfig,
    private readonly database: DatabaseStatus,
    private readonly notifications: NotificationsService,
  ) {
    this.db = new BossDb(
      { connectionString: config.databaseUrl, max: 4, connectionTimeoutMillis: config.databasePoolTimeoutMs, application_name: 'media-gateway-queue' },
      (err) => this.onError(err),
    );
    this.boss = new PgBoss({
      db: this.db,
      schema: 'pgboss',
      supervise: config.runsWorkers,
      schedule: config.runsWorkers,
      maintenanceIntervalSeconds: 30,
      // pg-boss's scheduler: cron ticks are looked for and sent at most 45 s late (its slowest; our one
      // schedule is hourly), instead of a look every 30 s and a fetch every 5 s on each instance
      cronMonitorIntervalSeconds: 45,
      cronWorkerIntervalSeconds: 45,
    } as PgBoss.ConstructorOptions);
    this.boss.on('error', (err: unknown) => this.onError(err));
  }

  async onModuleInit(): Promise<void> {
    await this.underSetupLock(async () => {
      await this.boss.start();
      await this.createMissingQueues(Object.entries(FIXED_QUEUES) as [JobName, QueueSettings][]);
    });
    if (this.config.runsWorkers) await this.notifications.listen(JOBS_CHANNEL, (name) => this.wakeConsumers(name as JobName));
    this.database.onChange((available) => {
      if (this.paused === !available) return;
      this.paused = !available;
      if (this.consumers.length) this.logger.log(available ? 'workers resumed' : 'workers paused until the database answers again');
      if (available) for (const c of this.consumers) this.nudge(c);
    });
  }

  /** First at shutdown: stop fetching, let running jobs finish (up to 10 s, or the drain's deadline) while the database is still open. */
  async onModuleDestroy(): Promise<void> {
    await this.drain(this.drainDeadline ?? Date.now() + DRAIN_MS);
    await this.boss.stop({ graceful: true, wait: true, timeout: 2000 });
    await this.db.close().catch(() => undefined);
  }

  /** Fetches no more jobs; resolves when the running ones have ended or at `deadline` (epoch ms); answers how many still run. */
  async drain(deadline: number): Promise<number> {
    this.drainDeadline = Math.min(this.drainDeadline ?? deadline, deadline);
    this.stopping = true;
    for (const c of this.consumers) c.wake?.();
    this.wakeScout?.();
    await Promise.all([...this.consumers.map((c) => c.loop), this.scouting]);
    while (this.running > 0 && Date.now() < this.drainDeadline) {
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    return this.running;
  }

  /** Jobs running on this instance now. */
  get running(): number {
    return this.consumers.reduce((sum, c) => sum + c.running, 0);
  }

  /**
   * Creates the queues that do not exist yet (the task engine creates each kind's at start, before any job
   * is sent to it), one instance at a time: instances that start together on a new database all come up.
   */
  async createQueues(queues: [JobName, QueueSettings][]): Promise<void> {
    await this.underSetupLock(() => this.createMissingQueues(queues));
  }

  private async createMissingQueues(queues: [JobName, QueueSettings][]): Promise<void> {
    const existing = new Set((await this.boss.getQueues()).map((q) => q.name));
    for (const [name, settings] of queues) if (!existing.has(name)) await this.boss.createQueue(name, { name, ...settings });
  }

  /**
   * Runs `work` while holding the queue set-up lock: a session advisory lock, on one of pg-boss's pooled
   * connections (kept after, where a connection of its own cost PostgreSQL a process start at each of the
   * two set-ups of every start); `work` runs on the pool's other connections.
   */
  private async underSetupLock(work: () => Promise<void>): Promise<void> {
    await this.db.onOneConnection(async (client) => {
      await client.query('SELECT pg_advisory_lock($1)', [QUEUE_SETUP_LOCK_ID]);
      // a failure (of `work` or of the unlock) ends the connection, and the lock with it: never given back held
      await work();
      await client.query('SELECT pg_advisory_unlock($1)', [QUEUE_SETUP_LOCK_ID]);
    });
  }

  async send<N extends JobName>(name: N, payload: JobPayload<N>, options: SendOptions = {}): Promise<string | null> {
    if (options.startAfterSeconds) this.jobsDueIn(name, options.startAfterSeconds);
    return this.boss.send(name, payload, {
      db: options.db,
      id: options.id,
      startAfter: options.startAfterSeconds ? new Date(Date.now() + options.startAfterSeconds * 1000) : undefined,
      singletonKey: options.singletonKey,
      // pg-boss checks a priority key that is present, even when undefined
      ...(options.priority !== undefined ? { priority: options.priority } : {}),
    } as PgBoss.SendOptions);
  }

  /**
   * Jobs of `name` were just written (and committed) by this instance: its consumer, if it waits for
   * the next poll, fetches at once. When it has none free (an API instance, or its slots are full), the
   * other instances are told through NOTIFY (JOBS_CHANNEL) and theirs fetch at once; a notification lost
   * leaves them their next look (POLL_MS). Tellings of one moment go together, one at a time.
   */
  jobsAdded(name: JobName): void {
    if (this.wakeConsumers(name)) return;
    this.untold.add(name);
    this.telling ??= this.tellOthers().finally(() => (this.telling = undefined));
  }

  /** Wakes this instance's consumers of `name` that could take a job now; false when none could. */
  private wakeConsumers(name: JobName): boolean {
    let woken = false;
    for (const c of this.consumers) {
      if (c.name !== name || c.running >= c.concurrency || c.idleUntil > Date.now()) continue;
      this.nudge(c);
      woken = true;
    }
    return woken;
  }

  private async tellOthers(): Promise<void> {
    await Promise.resolve();
    while (this.untold.size > 0) {
      const names = [...this.untold];
      this.untold.clear();
      for (const name of names) await this.notifications.notify(JOBS_CHANNEL, name).catch(() => undefined);
    }
  }

  /**
   * Jobs of `name` this instance sends (or just sent) start in `seconds`: its consumer fetches then, rather
   * than at the next look after it (a retry 0.3 s away is not a second late). A wake that finds nothing
   * (the job's transaction rolled back, another instance took it) costs one fetch.
   */
  jobsDueIn(name: JobName, seconds: number): void {
    if (!this.consumers.some((c) => c.name === name)) return;
    setTimeout(() => this.jobsAdded(name), Math.ceil(seconds * 1000) + DUE_MARGIN_MS).unref();
  }

  /**
   * A free slot of this instance's consumer of `name`, kept for a job this instance is about to write as
   * taken (jobRowsSql's `taken`: active, as pg-boss's fetch leaves a job it hands out): `runTaken` then
   * runs it in that slot at once, with no fetch and no wake between the write and the step; `release`
   * gives the slot back when the job was not written. Only while the consumer's last fetch found its queue
   * empty (it waits for word of new jobs), so a job taken here never passes one that waits for a worker;
   * null otherwise, or when no consumer of `name` runs here. Every slot reserved is run or released.
   */
  reserve(name: JobName): ReservedSlot | null {
    if (this.paused || this.stopping) return null;
    const c = this.consumers.find((x) => x.name === name && x.hungry && x.running < x.concurrency && x.idleUntil <= Date.now());
    if (!c) return null;
    c.running++;
    const slot: ReservedSlot = { name };
    this.reserved.set(slot, c);
    return slot;
  }

  /** Runs the job written as taken in the slot `reserve` kept for it; pg-boss completes or retries it as a fetched one. */
  runTaken<N extends JobName>(slot: ReservedSlot, job: { id: string; data: JobPayload<N>; priority: number }): void {
    const c = this.consumerOf(slot);
    void this.run(c, { ...job, retryCount: 0 }, true);
  }

  /** Gives back a slot `reserve` kept for a job that was not written. */
  release(slot: ReservedSlot): void {
    const c = this.consumerOf(slot);
    c.running--;
    if (!c.hungry) this.nudge(c);
  }

  private consumerOf(slot: ReservedSlot): Consumer {
    const c = this.reserved.get(slot);
    if (!c) throw new Error(`the slot of ${slot.name} was run or released already`);
    this.reserved.delete(slot);
    return c;
  }

  /** Runs `handler` for each job of `name`, `concurrency` at a time on this instance. */
  async work<N extends JobName>(name: N, concurrency: number, handler: Handler<N>): Promise<void> {
    const consumer: Consumer = { name, concurrency, handler: handler as Handler<JobName>, running: 0, idleUntil: 0, hungry: false, nudged: false };
    this.consumers.push(consumer);
    consumer.loop = this.consume(consumer);
    this.scouting ??= this.scout();
  }

  /** A cron schedule (minute resolution); one instance sends each tick. */
  async schedule(name: JobName, cron: string): Promise<void> {
    await this.boss.schedule(name, cron, {}, { tz: 'UTC' });
  }

  /**
   * Jobs as pg-boss's own send() writes them (their queue's expiry, retention, retries and policy; start
   * now), for a set of rows, as one INSERT … SELECT inside a larger statement (a task and its job in one
   * round trip): `rows` is a query (in parentheses) or CTE name with columns id (the job's uuid), name (its
   * queue), data (jsonb) and priority (integer). `startAfter`: an SQL expression for when they may run
   * (a planned wait), instead of now. `taken`: a boolean column of `rows` saying which jobs this instance
   * runs itself at once (see reserve): written active, as pg-boss's fetch leaves a job it hands out.
   */
  static jobRowsSql(rows: string, startAfter?: string, taken?: string): string {
    const extra: [column: string, value: string][] = [];
    if (startAfter !== undefined) extra.push(['start_after', startAfter]);
    if (taken !== undefined) extra.push(['state', `CASE WHEN r.${taken} THEN 'active' ELSE 'created' END::pgboss.job_state`], ['started_on', `CASE WHEN r.${taken} THEN now() END`]);
    return `INSERT INTO pgboss.job ${JOB_COLUMNS.replace(')', `${extra.map(([column]) => `, ${column}`).join('')})`)}
      SELECT r.id, q.name, r.data, r.priority, ${JOB_SETTINGS}${extra.map(([, value]) => `, ${value}`).join('')}
      FROM ${rows} r JOIN pgboss.queue q ON q.name = r.name`;
  }

  /**
   * The completion of an active job as pg-boss's complete() writes it (its completeJobs: completed now, no
   * output), as an UPDATE to run inside a larger statement (the task's end and its job's in one round trip):
   * `name` and `id` are SQL expressions (the queue's name, the job's uuid), `from` the FROM list the UPDATE
   * joins (it completes the job only when that list has a row: the task the statement changed). RETURNING the
   * job's id; a job no longer active (expired, failed by pg-boss, completed already) is left as it is, as
   * complete() leaves it.
   */
  static completeJobSql(name: string, id: string, from: string): string {
    return `UPDATE pgboss.job j SET completed_on = now(), state = 'completed' FROM ${from}
      WHERE j.name = ${name} AND j.id = ${id} AND j.state = 'active' RETURNING j.id`;
  }

  /**
   * SQL condition, over a row whose column `jobIdColumn` holds the id of the last job sent for it to the
   * queue named by the SQL expression `queue` (a quoted literal, or an expression over the row), that
   * holds when that job can no longer run it: the job is gone, finished, or active for longer than
   * `graceS` (a live worker claims its row within moments of taking the job, so one that has held a job
   * that long without claiming died between the two). Queued and retrying jobs are alive.
   */
  static deadJobCondition(jobIdColumn: string, queue: string, graceS: number): string {
    const job = `SELECT 1 FROM pgboss.job j WHERE j.name = ${queue} AND j.id = ${jobIdColumn}
      AND (j.state IN ('created', 'retry') OR (j.state = 'active' AND j.started_on > now() - interval '${Math.round(graceS)} seconds'))`;
    return `(${jobIdColumn} IS NULL OR NOT EXISTS (${job}))`;
  }

  private async consume(c: Consumer): Promise<void> {
    while (!this.stopping) {
      if (this.paused || c.running >= c.concurrency) {
        await this.wait(c, POLL_MS);
        continue;
      }
      const idleMs = c.idleUntil - Date.now();
      if (idleMs > 0) {
        await this.wait(c, idleMs);
        continue;
      }
      let jobs: PgBoss.JobWithMetadata<JobPayload<JobName>>[] = [];
      const asked = c.concurrency - c.running;
      try {
        jobs = (await this.boss.fetch<JobPayload<JobName>>(c.name, { batchSize: asked, includeMetadata: true })) ?? [];
      } catch (err) {
        this.onError(err);
      }
      for (const job of jobs) void this.run(c, job);
      // fewer than asked: the queue had no more ready then, so this consumer waits for word of new jobs (word
      // that came during the fetch included: see nudge) rather than fetching again at once to find nothing
      // (a second UPDATE beside each step's claim)
      if (jobs.length < asked) {
        c.hungry = true;
        await this.wait(c, HUNGRY_MAX_MS);
        c.hungry = false;
      }
    }
  }

  /**
   * One look, every POLL_MS, at every queue whose consumer found it empty: which have a job ready to
   * start (one statement, an index probe per queue); their consumers fetch. Idle queues cost one
   * read-only statement per look instead of a fetch (an UPDATE) each.
   */
  private async scout(): Promise<void> {
    while (!this.stopping) {
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, POLL_MS);
        this.wakeScout = () => {
          clearTimeout(timer);
          resolve();
        };
      });
      if (this.stopping) return;
      if (this.paused) continue;
      const now = Date.now();
      const hungry = this.consumers.filter((c) => c.hungry && c.running < c.concurrency && c.idleUntil <= now);
      if (hungry.length === 0) continue;
      try {
        const ready = await this.queuesWithJobsReady([...new Set(hungry.map((c) => c.name))]);
        for (const c of hungry) if (ready.has(c.name)) c.wake?.();
      } catch (err) {
        this.onError(err);
      }
    }
  }

  /** Of `names`, the queues holding a job that can start now (as pg-boss's fetch picks them). */
  private async queuesWithJobsReady(names: string[]): Promise<Set<string>> {
    // by pg-boss's index on waiting jobs whatever the planner's statistics say (see the function's migration)
    const { rows } = await this.db.executeSql(QUEUES_WITH_JOBS_READY_SQL, [names]);
    return new Set((rows as { name: string }[]).map((r) => r.name));
  }

  /** Runs a job in a slot of `c` (`reserved`: one already counted, see reserve). */
  private async run(c: Consumer, job: JobInfo & { data: JobPayload<JobName> }, reserved = false): Promise<void> {
    if (!reserved) c.running++;
    try {
      try {
        const result = await c.handler(job.data, { id: job.id, retryCount: job.retryCount, priority: job.priority });
        if (result?.backOffMs) c.idleUntil = Math.max(c.idleUntil, Date.now() + result.backOffMs);
        if (result?.completed) return;
      } catch (err) {
        // pg-boss retries the job with its queue's settings (or fails it for good)
        await this.settle(() => this.boss.fail(c.name, job.id, { message: (err as Error)?.message ?? String(err) }));
        return;
      }
      await this.settle(() => this.boss.complete(c.name, job.id));
    } finally {
      c.running--;
      // a slot is free: a consumer that left jobs queued (all its slots were taken) fetches again now; one whose
      // last fetch found the queue empty waits for word of new jobs (jobsAdded, NOTIFY, the scout), without a
      // fetch per job that ends (an UPDATE that finds nothing)
      if (!c.hungry) this.nudge(c);
    }
  }

  /** Ends the consumer's wait now, or its next one if it is not waiting (a fetch in flight may have missed what woke it). */
  private nudge(c: Consumer): void {
    if (c.wake) c.wake();
    else c.nudged = true;
  }

  /**
   * A job's bookkeeping waits out a database outage. If it still cannot be written (shutdown), the job
   * stays active until pg-boss's expiry; the work itself is guarded by leases and locks, and the sweeper
   * hands waiting work whose job died to a new job.
   */
  private async settle(write: () => Promise<unknown>): Promise<void> {
    try {
      await this.database.retryWhileUnavailable(write);
    } catch (err) {
      this.onError(err);
    }
  }

  /** Resolves after `ms`, or earlier when the consumer is woken. */
  private wait(c: Consumer, ms: number): Promise<void> {
    // the drain wakes the consumers that wait; one whose fetch was in flight then comes here after it: no wait
    if (this.stopping) return Promise.resolve();
    if (c.nudged) {
      c.nudged = false;
      return Promise.resolve();
    }
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        if (c.wake === done) c.wake = undefined;
        resolve();
      };
      const timer = setTimeout(done, ms);
      c.wake = done;
    });
  }

  /** pg-boss reports maintenance and schedule failures here; an outage is reported once, not per poll. */
  private onError(err: unknown): void {
    if (this.database.report(err) && !this.database.isAvailable) return;
    const message = (err as { message?: string }).message?.replace(/ \(Queue: .*\)$/, '') ?? String(err);
    const now = Date.now();
    const seen = this.errorLog.get(message);
    if (seen && now - seen.at < ERROR_LOG_INTERVAL_MS) {
      seen.suppressed++;
      return;
    }
    if (this.errorLog.size > 100) this.errorLog.clear();
    this.errorLog.set(message, { at: now, suppressed: 0 });
    this.logger.error({ msg: 'queue error', err, ...(seen?.suppressed ? { repeated: seen.suppressed } : {}) });
  }
}
