import { Injectable, Logger, type OnApplicationBootstrap, type OnModuleDestroy } from '@nestjs/common';
import { Webhook } from 'standardwebhooks';
import { SweepLoop } from '../../common/tasks/sweep-loop.js';
import { AppConfig } from '../../infra/config/app-config.js';
import { DatabaseStatus } from '../../infra/database/database-status.service.js';
import { MetricsService } from '../../infra/metrics/metrics.service.js';
import { OutboundError, retryAfterOf, SafeFetchService } from '../../infra/outbound/safe-fetch.service.js';
import { orphanGraceS, QueueService } from '../../infra/queue/queue.service.js';
import { Tracing } from '../../infra/tracing/tracing.service.js';
import { type DeliveryRow, CallbacksRepository } from './callbacks.repository.js';
import { CallbacksService, newWebhookSecret } from './callbacks.service.js';

const RESPONSE_CAP = 64 * 1024;

/**
 * Delivers notifications (`callback.deliver` jobs): signed per Standard Webhooks with the owner's
 * secret (and, during a rotation, the previous one too), through the outbound rules, never following
 * redirects. Any 2xx counts; 410 stops; anything else is retried on CALLBACK_RETRY_SCHEDULE_S with
 * jitter (Retry-After honoured) until CALLBACK_GIVE_UP_AFTER_S. A task's later status waits for the
 * earlier ones. Its reads and writes wait out a database outage; a delivery whose job died with its
 * worker is sent again by the sweeper.
 */
@Injectable()
export class CallbackSender implements OnApplicationBootstrap, OnModuleDestroy {
  private readonly logger = new Logger('Callbacks');
  /** Sends again what a dead sender left (see sweep). */
  private readonly loop: SweepLoop;

  /** When this process started: locks taken before are a previous run's. */
  private readonly startedAt = new Date();

  constructor(
    private readonly deliveries: CallbacksRepository,
    private readonly callbacks: CallbacksService,
    private readonly queue: QueueService,
    private readonly fetcher: SafeFetchService,
    private readonly metrics: MetricsService,
    private readonly config: AppConfig,
    private readonly database: DatabaseStatus,
    private readonly tracing: Tracing,
  ) {
    this.loop = new SweepLoop('callback deliveries', config, database, this.logger, (first) => this.sweep(first));
  }

  /** How long an attempt holds its delivery: its time limit and 5 s more. */
  private get lockS(): number {
    return this.config.callbacks.timeoutMs / 1000 + 5;
  }

  async onApplicationBootstrap(): Promise<void> {
    this.loop.start();
    if (this.config.runsWorkers) {
      await this.queue.work('callback.deliver', 4, ({ deliveryId }) => this.deliver(deliveryId));
    }
  }

  onModuleDestroy(): Promise<void> {
    return this.loop.stop();
  }

  /**
   * Deliveries whose job died with its sender (or failed while the database was down) get a new job; a
   * sender killed mid-attempt leaves a lock that expires, and then its delivery counts among them. At the
   * first sweep of a sole instance, the locks its previous run left are released at once (never one this
   * process took: that attempt is under way).
   */
  async sweep(first = false): Promise<void> {
    if (first && this.config.soleInstance) await this.deliveries.releaseLocksTakenBefore(this.startedAt, this.lockS);
    const orphaned = await this.deliveries.requeueOrphaned(orphanGraceS(this.config.workerLeaseS), this.callbacks.enqueueDelivery);
    if (orphaned.length) this.logger.warn(`${orphaned.length} callback item(s) re-queued: their job was taken by a worker that stopped before starting them`);
  }

  /**
   * One attempt of a delivery. With tracing, it is a span in the trace of the work that made the
   * notification (the task's step, its request), and the POST carries that trace's `traceparent`.
   */
  async deliver(id: string): Promise<void> {
    const claimedFrom = Date.now();
    const delivery = await this.database.retryWhileUnavailable(() => this.claim(id));
    if (!delivery) return;
    const attributes = { 'mgw.delivery.id': id, 'mgw.task.id': delivery.taskId, 'mgw.callback.status': delivery.status, 'mgw.delivery.attempt': delivery.attempts };
    await this.tracing.inSpan('callback.deliver', { parent: delivery.traceParent, startTime: claimedFrom, work: true, attributes }, () => this.attempt(delivery));
  }

  private async attempt(delivery: DeliveryRow): Promise<void> {
    const { id } = delivery;
    const headers = await this.database.retryWhileUnavailable(() => this.headers(delivery));
    const started = Date.now();
    let status: number | null = null;
    let retryAfterS: number | undefined;
    let error: string | null = null;
    let refused = false;
    try {
      const res = await this.fetcher.request('caller', delivery.url, {
        method: 'POST',
        headers,
        body: delivery.payload,
        maxBytes: RESPONSE_CAP,
        followRedirects: false,
        acceptAnyStatus: true,
        timeoutMs: this.config.callbacks.timeoutMs,
      });
      status = res.status;
      const retryAfter = retryAfterOf(res.headers);
      if ((status === 429 || status === 503) && retryAfter !== undefined) retryAfterS = retryAfter;
      if (status < 200 || status >= 300) error = status >= 300 && status < 400 ? `HTTP ${status} (redirects are not followed)` : `HTTP ${status}`;
    } catch (err) {
      if (!(err instanceof OutboundError)) throw err;
      refused = err.kind === 'refused';
      error = err.message;
    }
    const attempt = { statusCode: status, durationMs: Date.now() - started, error };
    await this.database.retryWhileUnavailable(() => this.deliveries.recordAttempt(id, attempt));
    await this.database.retryWhileUnavailable(() => this.decide(delivery, status, error, refused, retryAfterS));
  }

  /**
   * Takes the next attempt of a delivery: null when it is done, waits for an earlier notification of
   * its task (whose end queues this one), is not due, or another sender holds it. The lock lasts the
   * attempt's time limit and 5 s more; then, if the attempt never ended (its sender died), the sweeper
   * sends it again.
   */
  private async claim(id: string): Promise<DeliveryRow | null> {
    const pending = await this.deliveries.findDelivery(id);
    if (!pending || pending.state !== 'pending') return null;
    if (await this.deliveries.hasPendingPredecessor(pending)) return null;
    return this.deliveries.claimAttempt(id, this.lockS);
  }

  private async decide(delivery: DeliveryRow, status: number | null, error: string | null, refused: boolean, retryAfterS?: number): Promise<void> {
    const enqueueNext = this.callbacks.enqueueDelivery;
    const where = { delivery_id: delivery.id, task_id: delivery.taskId, status: delivery.status, url: delivery.url };
    if (error === null) {
      this.metrics.callbackAttempts.inc({ outcome: 'delivered' });
      this.logger.log({ msg: 'callback delivered', ...where, http_status: status, attempt: delivery.attempts });
      return this.deliveries.finish(delivery.id, 'delivered', null, enqueueNext);
    }
    if (status === 410 || refused) {
      const reason = refused ? 'refused' : 'gone';
      this.metrics.callbackAttempts.inc({ outcome: reason });
      this.metrics.callbacksFailed.inc({ reason });
      this.logger.error({ msg: `callback failed: ${refused ? 'the target is refused' : 'the receiver answered 410 Gone'}; not retried`, ...where, error });
      return this.deliveries.finish(delivery.id, 'failed', error, enqueueNext);
    }
    const schedule = this.config.callbacks.retryScheduleS;
    const base = retryAfterS ?? schedule[Math.min(delivery.attempts - 1, schedule.length - 1)];
    const delayS = retryAfterS !== undefined ? base : base * (0.8 + Math.random() * 0.4); // ±20% jitter
    const next = new Date(Date.now() + delayS * 1000);
    if (next.getTime() - delivery.cycleStartedAt.getTime() > this.config.callbacks.giveUpAfterS * 1000) {
      this.metrics.callbackAttempts.inc({ outcome: 'failed' });
      this.metrics.callbacksFailed.inc({ reason: 'gave_up' });
      this.logger.error({ msg: `callback failed after ${delivery.attempts} attempts; giving up`, ...where, error });
      return this.deliveries.finish(delivery.id, 'failed', `gave up after ${delivery.attempts} attempts: ${error}`, enqueueNext);
    }
    this.metrics.callbackAttempts.inc({ outcome: 'retry' });
    this.logger.warn({ msg: 'callback attempt failed; will retry', ...where, error, attempt: delivery.attempts, retry_in_s: Math.round(delayS * 10) / 10 });
    await this.deliveries.reschedule(delivery.id, next, error, this.callbacks.enqueueDelivery);
  }

  /** Standard Webhooks headers; during a rotation both secrets sign, space-separated. */
  private async headers(delivery: DeliveryRow): Promise<Record<string, string>> {
    const secret = await this.deliveries.findOrCreateSecret(delivery.owner, newWebhookSecret);
    const timestamp = new Date();
    const secrets = [secret.secret, ...(secret.previousSecret && secret.previousExpiresAt && secret.previousExpiresAt > timestamp ? [secret.previousSecret] : [])];
    return {
      'content-type': 'application/json',
      'webhook-id': delivery.id,
      'webhook-timestamp': String(Math.floor(timestamp.getTime() / 1000)),
      'webhook-signature': secrets.map((s) => new Webhook(s).sign(delivery.id, timestamp, delivery.payload)).join(' '),
    };
  }
}
