import { Injectable, Logger, type OnApplicationBootstrap } from '@nestjs/common';
import { Webhook } from 'standardwebhooks';
import { AppConfig } from '../../infra/config/app-config.js';
import { MetricsService } from '../../infra/metrics/metrics.service.js';
import { OutboundError, SafeFetchService } from '../../infra/outbound/safe-fetch.service.js';
import type { SqlExecutor } from '../../infra/prisma/sql-executor.js';
import { QueueService } from '../../infra/queue/queue.service.js';
import { type DeliveryRow, CallbacksRepository } from './callbacks.repository.js';
import { newWebhookSecret } from './callbacks.service.js';

const RESPONSE_CAP = 64 * 1024;

/**
 * Delivers notifications (`callback.deliver` jobs): signed per Standard Webhooks with the owner's
 * secret (and, during a rotation, the previous one too), through the outbound rules, never following
 * redirects. Any 2xx counts; 410 stops; anything else is retried on CALLBACK_RETRY_SCHEDULE_S with
 * jitter (Retry-After honoured) until CALLBACK_GIVE_UP_AFTER_S. A task's later status waits for the
 * earlier ones.
 */
@Injectable()
export class CallbackSender implements OnApplicationBootstrap {
  private readonly logger = new Logger('Callbacks');

  constructor(
    private readonly deliveries: CallbacksRepository,
    private readonly queue: QueueService,
    private readonly fetcher: SafeFetchService,
    private readonly metrics: MetricsService,
    private readonly config: AppConfig,
  ) {}

  async onApplicationBootstrap(): Promise<void> {
    if (this.config.runsWorkers) {
      await this.queue.work('callback.deliver', 4, ({ deliveryId }) => this.deliver(deliveryId));
    }
  }

  async deliver(id: string): Promise<void> {
    const pending = await this.deliveries.findDelivery(id);
    if (!pending || pending.state !== 'pending') return;
    if (await this.deliveries.hasPendingPredecessor(pending)) return; // the earlier one's end queues this one
    const delivery = await this.deliveries.claimAttempt(id, this.config.callbacks.timeoutMs / 1000 + 30);
    if (!delivery) return; // not due yet, or another sender has it

    const started = Date.now();
    let status: number | null = null;
    let retryAfterS: number | undefined;
    let error: string | null = null;
    let refused = false;
    try {
      const res = await this.fetcher.request(delivery.url, {
        method: 'POST',
        headers: await this.headers(delivery),
        body: delivery.payload,
        maxBytes: RESPONSE_CAP,
        followRedirects: false,
        acceptAnyStatus: true,
        timeoutMs: this.config.callbacks.timeoutMs,
      });
      status = res.status;
      const retryAfter = Number(res.headers['retry-after']);
      if ((status === 429 || status === 503) && Number.isFinite(retryAfter)) retryAfterS = retryAfter;
      if (status < 200 || status >= 300) error = status >= 300 && status < 400 ? `HTTP ${status} (redirects are not followed)` : `HTTP ${status}`;
    } catch (err) {
      if (!(err instanceof OutboundError)) throw err;
      refused = err.kind === 'refused';
      error = err.message;
    }
    await this.deliveries.recordAttempt(id, { statusCode: status, durationMs: Date.now() - started, error });
    await this.decide(delivery, status, error, refused, retryAfterS);
  }

  private async decide(delivery: DeliveryRow, status: number | null, error: string | null, refused: boolean, retryAfterS?: number): Promise<void> {
    const enqueueNext = async (db: SqlExecutor, deliveryId: string) => void (await this.queue.send('callback.deliver', { deliveryId }, { db }));
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
    await this.deliveries.reschedule(delivery.id, next, error, async (db) => void (await this.queue.send('callback.deliver', { deliveryId: delivery.id }, { db, startAfterSeconds: delayS })));
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
