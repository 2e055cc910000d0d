import { Module } from '@nestjs/common';
import { ChannelsModule } from '../channels/channels.module.js';
import type { ProviderName } from '../../infra/config/app-config.js';
import { RelayVideoProvider, VIDEO_VENDOR_ADAPTERS } from './providers/relay-video.provider.js';
import { SandboxVideoProvider } from './providers/sandbox-video.provider.js';
import { VIDEO_PROVIDERS, type VideoProvider } from './providers/video-provider.js';
import { VideoKind } from './video.kind.js';
import { VideoModels } from './video-models.js';
import { VideoUploads } from './video-uploads.js';
import type { VideoVendor } from '../../vendors/contracts/video-vendor.js';
import { adaptersByProtocol } from '../../vendors/contracts/vendor.js';
import { GATEWAY_VIDEO_PROTOCOL, VIDEO_VENDORS } from '../../vendors/video-vendors.js';

@Module({
  imports: [ChannelsModule],
  providers: [
    VideoKind,
    VideoUploads,
    SandboxVideoProvider,
    RelayVideoProvider,
    VideoModels,
    ...VIDEO_VENDORS,
    {
      provide: VIDEO_VENDOR_ADAPTERS,
      // one adapter per protocol; a gateway speaks the Luma door
      useFactory: (...vendors: VideoVendor[]) => adaptersByProtocol(vendors, GATEWAY_VIDEO_PROTOCOL),
      inject: [...VIDEO_VENDORS],
    },
    {
      provide: VIDEO_PROVIDERS,
      useFactory: (sandbox: SandboxVideoProvider, relay: RelayVideoProvider): Record<ProviderName, VideoProvider> => ({ sandbox, relay }),
      inject: [SandboxVideoProvider, RelayVideoProvider],
    },
  ],
  exports: [VideoKind, VideoModels, VideoUploads],
})
export class VideoModule {
  static readonly kind = VideoKind;
}
