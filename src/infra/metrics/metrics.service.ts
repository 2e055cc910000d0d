import { Injectable } from '@nestjs/common';
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';

/** Prometheus metrics of this process, served at /metrics. Owner and operation labels: one series per team and operation. */
/** How often the event-loop delay histogram (mgw_nodejs_eventloop_lag_*) takes a sample. */
const EVENT_LOOP_SAMPLE_MS = 100;

@Injectable()
export class MetricsService {
  readonly registry = new Registry();

  /** Every delivery attempt's outcome: delivered, retry, gone (410), refused (target), failed (gave up). */
  readonly callbackAttempts = new Counter({
    name: 'mgw_callback_attempts_total',
    help: 'Callback delivery attempts by outcome',
    labelNames: ['outcome'] as const,
    registers: [this.registry],
  });

  /** Notifications that were never delivered (after the last attempt, a 410, or a refused target). */
  readonly callbacksFailed = new Counter({
    name: 'mgw_callback_deliveries_failed_total',
    help: 'Callback notifications given up on',
    labelNames: ['reason'] as const,
    registers: [this.registry],
  });

  readonly tasksAccepted = new Counter({
    name: 'mgw_tasks_accepted_total',
    help: 'Tasks accepted, by owner and operation',
    labelNames: ['owner', 'operation'] as const,
    registers: [this.registry],
  });

  readonly tasksFinished = new Counter({
    name: 'mgw_tasks_finished_total',
    help: 'Tasks that reached a final state, by owner, operation and state (succeeded or failed)',
    labelNames: ['owner', 'operation', 'state'] as const,
    registers: [this.registry],
  });

  readonly limitRefusals = new Counter({
    name: 'mgw_limit_refusals_total',
    help: 'Requests refused by a per-owner limit, by owner and code (1302 rate, 1303 concurrency, 1102 credits)',
    labelNames: ['owner', 'code'] as const,
    registers: [this.registry],
  });

  readonly queueWait = new Histogram({
    name: 'mgw_task_queue_wait_seconds',
    help: 'Time from acceptance until a worker first starts the task, by owner and operation',
    labelNames: ['owner', 'operation'] as const,
    buckets: [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300, 900, 3600],
    registers: [this.registry],
  });

  /**
   * Submissions waiting in this instance's memory for a statement of acceptance (TaskIntake: at most two
   * statements in flight, what comes meanwhile goes in the next): a backlog that grows says the database
   * does not keep up with what callers send; each waits at most DATABASE_POOL_TIMEOUT_MS, then answers 503.
   */
  readonly intakeWaiting = new Gauge({
    name: 'mgw_intake_waiting',
    help: 'Submissions waiting on this instance for a statement of acceptance (the next goes as soon as one of two in flight ends)',
    registers: [this.registry],
  });

  /**
   * Reads of an API key's row: `request` when a request waited for it (a key not cached, or its cache time
   * over), `ahead` when a key in use was read again in the background in the second half of its cache time
   * (KeysService), so that its requests do not wait for that read.
   */
  readonly apiKeyReads = new Counter({
    name: 'mgw_api_key_reads_total',
    help: 'Reads of API keys from the database, by when: request (a request waited for it) or ahead (a key in use, read again in the background before its cache time ended)',
    labelNames: ['when'] as const,
    registers: [this.registry],
  });

  readonly tasksRunning = new Gauge({
    name: 'mgw_tasks_running',
    help: "Tasks this instance's workers are running now, by owner and operation (sum over instances)",
    labelNames: ['owner', 'operation'] as const,
    registers: [this.registry],
  });

  readonly creditsCharged = new Counter({
    name: 'mgw_credits_charged_total',
    help: 'Credits charged at acceptance, by owner and operation (refunds: mgw_credits_refunded_total)',
    labelNames: ['owner', 'operation'] as const,
    registers: [this.registry],
  });

  readonly creditsRefunded = new Counter({
    name: 'mgw_credits_refunded_total',
    help: 'Credits given back for failed tasks, by owner and operation',
    labelNames: ['owner', 'operation'] as const,
    registers: [this.registry],
  });

  /** Requests to upstream channels (creates and tests), by channel name, operation and outcome. */
  readonly channelRequests = new Counter({
    name: 'mgw_channel_requests_total',
    help: 'Requests sent to upstream channels, by channel, operation and outcome (accepted, failed, busy, unreachable, refused_account, ambiguous, abandoned, test_ok, test_failed)',
    labelNames: ['channel', 'operation', 'outcome'] as const,
    registers: [this.registry],
  });

  /** What upstream tasks cost the company, by the channel's price of the model: every task an upstream took, those later abandoned included. */
  readonly upstreamCost = new Counter({
    name: 'mgw_upstream_cost_total',
    help: "What the upstream tasks the channels accepted cost, by the channel's price of the model (tasks later abandoned included), by channel and model",
    labelNames: ['channel', 'model'] as const,
    registers: [this.registry],
  });

  /**
   * Upstream tasks whose vendor-reported billed figure, at the channel's prices, differs from what the gateway
   * priced them by more than BILLED_COST_TOLERANCE: counted once, when the figure is recorded.
   */
  readonly billingMismatches = new Counter({
    name: 'mgw_upstream_billing_mismatches_total',
    help: "Upstream tasks whose vendor-reported billed cost differs from the channel's price of them by more than BILLED_COST_TOLERANCE, by operation, channel and model",
    labelNames: ['operation', 'channel', 'model'] as const,
    registers: [this.registry],
  });

  readonly channelLatency = new Histogram({
    name: 'mgw_channel_request_duration_seconds',
    help: 'Time an upstream channel took to answer a create or a test, by channel and operation',
    labelNames: ['channel', 'operation'] as const,
    buckets: [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
    registers: [this.registry],
  });

  /** Tasks asked about upstream by the pollers, by channel, operation and what came of it. */
  readonly upstreamPolls = new Counter({
    name: 'mgw_upstream_polls_total',
    help: 'Tasks polled upstream, by channel, operation and outcome (working, changed, busy, refused, unavailable)',
    labelNames: ['channel', 'operation', 'outcome'] as const,
    registers: [this.registry],
  });

  /** How late a due poll ran: from its time to the moment a poller took it. */
  readonly pollLag = new Histogram({
    name: 'mgw_upstream_poll_lag_seconds',
    help: 'Time from when a waiting task was due to be polled to when a poller took it, by operation',
    labelNames: ['operation'] as const,
    buckets: [0.05, 0.1, 0.25, 0.5, 1, 2, 5, 10, 30, 60],
    registers: [this.registry],
  });

  /** Calls from upstreams on the per-task callback route, by what came of them. */
  readonly upstreamCallbacks = new Counter({
    name: 'mgw_upstream_callbacks_total',
    help: 'Upstream callbacks received, by outcome (polled: the task was polled at once; coalesced: a poll was due or under way; early: the task did not wait yet (the answer to its create not in), and is polled as soon as it does; unknown: the task waits on no upstream, as a replay or a late call; forged: the token did not match)',
    labelNames: ['outcome'] as const,
    registers: [this.registry],
  });

  constructor() {
    // The event-loop delay histogram samples every EVENT_LOOP_SAMPLE_MS: prom-client's 10 ms default wakes an
    // idle process 100 times a second, about 0.8 % of a core on this machine, more than all its other idle work.
    collectDefaultMetrics({ register: this.registry, prefix: 'mgw_', eventLoopMonitoringPrecision: EVENT_LOOP_SAMPLE_MS });
  }
}
