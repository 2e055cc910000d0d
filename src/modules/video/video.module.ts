import { Module } from '@nestjs/common';
import { ChannelsModule } from '../channels/channels.module.js';
import type { ProviderName } from '../../infra/config/app-config.js';
import { RelayVideoProvider } from './providers/relay-video.provider.js';
import { SandboxVideoProvider } from './providers/sandbox-video.provider.js';
import { VIDEO_PROVIDERS, type VideoProvider } from './providers/video-provider.js';
import { LumaUnsupportedController } from './luma-unsupported.controller.js';
import { VideoController } from './video.controller.js';
import { VideoKind } from './video.kind.js';
import { VideoRecords } from './video.records.js';
import { VideoService } from './video.service.js';

@Module({
  imports: [ChannelsModule],
  controllers: [VideoController, LumaUnsupportedController],
  providers: [
    VideoKind,
    VideoRecords,
    VideoService,
    SandboxVideoProvider,
    RelayVideoProvider,
    {
      provide: VIDEO_PROVIDERS,
      useFactory: (sandbox: SandboxVideoProvider, relay: RelayVideoProvider): Record<ProviderName, VideoProvider> => ({ sandbox, relay }),
      inject: [SandboxVideoProvider, RelayVideoProvider],
    },
  ],
  exports: [VideoKind],
})
export class VideoModule {
  static readonly kind = VideoKind;
}
