import { Module } from '@nestjs/common';
import { ChannelsModule } from '../channels/channels.module.js';
import { UpstreamCallbacksController } from './upstream-callbacks.controller.js';
import { UpstreamCallbacksService } from './upstream-callbacks.service.js';
import { UpstreamPoller } from './upstream-poller.js';
import { WaitingMetrics } from './waiting-metrics.js';
import { WatchesRepository } from './watches.repository.js';

/**
 * The relay layer's waiting half: tasks created upstream and not final are watched (polled in batches by
 * UpstreamPoller on every worker instance) and upstreams' callbacks make their polls come now.
 */
@Module({
  imports: [ChannelsModule],
  controllers: [UpstreamCallbacksController],
  providers: [WatchesRepository, UpstreamPoller, UpstreamCallbacksService, WaitingMetrics],
})
export class UpstreamWatchModule {}
