import { Module } from '@nestjs/common';
import { AdminChannelsController } from './admin-channels.controller.js';
import { AdminProtocolsController } from './admin-protocols.controller.js';
import { AdminTaskAttemptsController } from './admin-task-attempts.controller.js';
import { ChannelMetrics } from './channel-metrics.js';
import { ChannelRouter } from './channel-router.js';
import { ChannelHandles } from './channel-handles.js';
import { ChannelTester } from './channel-tester.js';
import { ChannelSecrets } from './channel-secrets.js';
import { ChannelsRepository } from './channels.repository.js';
import { ChannelsService } from './channels.service.js';
import { PolledChannels } from './polled-channels.js';
import { RelayFlow } from './relay-flow.js';
import { UpstreamBilling } from './upstream-billing.js';
import { UpstreamCallbackUrls } from './upstream-callback-urls.js';

/** Upstream channels: the provider accounts relayed tasks go to, managed by the admin API. */
@Module({
  controllers: [AdminChannelsController, AdminTaskAttemptsController, AdminProtocolsController],
  providers: [ChannelsRepository, ChannelsService, ChannelRouter, ChannelHandles, ChannelSecrets, ChannelTester, ChannelMetrics, UpstreamCallbackUrls, UpstreamBilling, PolledChannels, RelayFlow],
  exports: [ChannelRouter, UpstreamCallbackUrls, RelayFlow],
})
export class ChannelsModule {}
