import type { Server } from 'node:http';
import { Injectable, Logger } from '@nestjs/common';
import { HttpAdapterHost } from '@nestjs/core';
import { QueueService } from '../../infra/queue/queue.service.js';
import { ShutdownState } from '../../infra/process/shutdown-state.js';
import { TaskRunner } from './task-runner.js';
import { TaskSweeper } from './task-sweeper.js';

/** What is kept of the shutdown budget for closing the application and the database after the drain. */
const CLOSE_RESERVE_MS = 3000;
/**
 * How long idle keep-alive connections, and those that have sent nothing yet (silent-connections.ts), stay
 * open after SIGTERM: a request (or a load balancer's health check) already on its way over one is answered
 * (readiness 503, `Connection: close`), not reset.
 */
const IDLE_GRACE_MS = 1500;
/** How long the drain waits at least for claims already sent to be answered (they take milliseconds). */
const CLAIM_ANSWER_MS = 1000;

/**
 * A rolling restart that loses nothing. From the first moment readiness answers 503 (a load balancer
 * stops routing here) and the listener closes (no new connections); requests in flight finish, each
 * answer closing its connection. Workers fetch no more jobs; running ones may finish until the drain's
 * deadline, and the tasks still running then are handed back to the queue for another instance to take
 * at once. All of it within SHUTDOWN_TIMEOUT_S, less a moment to close the rest.
 *
 * The hand-back comes after every claim this worker sent has been answered (a job taken but not yet
 * claimed is given to the others instead), so no task is claimed here after it: the window where a
 * task is held by a stopped instance until its lease runs out is closed.
 */
@Injectable()
export class GracefulShutdown {
  private readonly logger = new Logger(GracefulShutdown.name);

  constructor(
    private readonly state: ShutdownState,
    private readonly http: HttpAdapterHost,
    private readonly queue: QueueService,
    private readonly sweeper: TaskSweeper,
    private readonly runner: TaskRunner,
  ) {}

  async drain(timeoutS: number): Promise<void> {
    // readiness fails at once; the pollers give back the watched tasks they hold (another instance polls them)
    const released = this.state.begin();
    const deadline = Date.now() + Math.max(500, timeoutS * 1000 - CLOSE_RESERVE_MS);
    const requests = this.closeListener(deadline);
    const handBackAt = deadline - Math.min(2000, (timeoutS * 1000) / 4);
    await Promise.all([this.queue.drain(handBackAt), released]);
    // Every claim sent has been answered before the hand-back, so it reaches every task this worker holds;
    // one still unanswered then (a stuck database) lands on a stopped worker, which the others' sweep takes back.
    if (this.runner.claimsInFlight > 0) this.logger.log(`waiting for ${this.runner.claimsInFlight} claim(s) in flight before the hand-back`);
    const unanswered = await this.runner.stopClaiming(Math.max(deadline, Date.now() + CLAIM_ANSWER_MS));
    if (unanswered > 0) this.logger.warn(`${unanswered} claim(s) still unanswered at the hand-back; another instance's sweep will take their tasks back`);
    await this.sweeper.handBack(this.runner.worker);
    // what the handed-back tasks' steps still run here stops: no ffmpeg of theirs outlives this process
    const ended = this.runner.endSteps();
    if (ended > 0) this.logger.log(`stopped the ${ended} step(s) still running; their tasks were handed back`);
    await requests;
  }

  /** Stops accepting connections; resolves when the open ones have ended, or at the deadline (then closes them). */
  private closeListener(deadline: number): Promise<void> {
    const server = this.http.httpAdapter?.getHttpServer() as Server | undefined;
    if (!server?.listening) return Promise.resolve();
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        this.logger.warn('requests still open at the shutdown deadline; closing their connections');
        server.closeAllConnections();
        resolve();
      }, deadline - Date.now());
      // http.Server#close also closes idle connections at once; they get IDLE_GRACE_MS first
      const closeIdle = server.closeIdleConnections;
      server.closeIdleConnections = () => undefined;
      server.close(() => {
        clearTimeout(timer);
        clearTimeout(idle);
        resolve();
      });
      server.closeIdleConnections = closeIdle;
      const idle = setTimeout(() => server.closeIdleConnections(), Math.min(IDLE_GRACE_MS, Math.max(0, deadline - Date.now() - 100)));
    });
  }
}
