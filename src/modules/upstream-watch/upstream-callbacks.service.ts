import { Injectable } from '@nestjs/common';
import { AppError } from '../../common/errors/app-error.js';
import { MetricsService } from '../../infra/metrics/metrics.service.js';
import { UpstreamCallbackUrls } from '../channels/upstream-callback-urls.js';
import type { UpstreamCallbackAnswerDto } from './dto/upstream-callback.dto.js';
import { UpstreamPoller } from './upstream-poller.js';
import { WatchesRepository } from './watches.repository.js';

/**
 * An upstream's callback is a hint, never a fact: it makes the task's next poll come now (the poller asks
 * the upstream with the channel's credentials), and its body is not read; one that comes before the task
 * waits (a vendor quicker than its create's answer) makes its first poll come as soon as it waits. A forged
 * token (404), a task that waits on no upstream (a replay, a late call) or one already due change nothing;
 * each is counted.
 */
@Injectable()
export class UpstreamCallbacksService {
  constructor(
    private readonly urls: UpstreamCallbackUrls,
    private readonly watches: WatchesRepository,
    private readonly poller: UpstreamPoller,
    private readonly metrics: MetricsService,
  ) {}

  async receive(taskId: string, token: string): Promise<UpstreamCallbackAnswerDto> {
    if (!this.urls.verify(taskId, token)) {
      this.metrics.upstreamCallbacks.inc({ outcome: 'forged' });
      throw new AppError('NOT_FOUND', 'No such callback');
    }
    const outcome = await this.watches.pollNow(taskId);
    this.metrics.upstreamCallbacks.inc({ outcome: outcome === 'due' ? 'polled' : outcome === 'already' ? 'coalesced' : outcome === 'early' ? 'early' : 'unknown' });
    if (outcome === 'due') this.poller.poke();
    return { received: true };
  }
}
