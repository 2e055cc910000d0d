import { Injectable } from '@nestjs/common';
import { AppConfig } from '../config/app-config.js';
import { Limiter } from './limiter.js';

/**
 * The cores' share of a relayed step's work: relayed steps run RELAY_CONCURRENCY at a time (they mostly
 * wait on upstreams), so the CPU-heavy part of one (decoding a downloaded song) takes one of
 * WORKER_CONCURRENCY slots here, as the sandbox's renders have theirs in their own queue consumers.
 */
@Injectable()
export class CpuSlots {
  private readonly limiter: Limiter;

  constructor(config: AppConfig) {
    this.limiter = new Limiter(config.workerConcurrency);
  }

  run<T>(work: () => Promise<T>): Promise<T> {
    return this.limiter.run(work);
  }
}
