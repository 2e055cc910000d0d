import { Module } from '@nestjs/common';
import { ChannelsModule } from '../channels/channels.module.js';
import type { ProviderName } from '../../infra/config/app-config.js';
import { ClipsModule } from '../clips/clips.module.js';
import { MusicController } from './music.controller.js';
import { MusicKind } from './music.kind.js';
import { MusicService } from './music.service.js';
import { MUSIC_PROVIDERS, type MusicProvider } from './providers/music-provider.js';
import { RelayMusicProvider } from './providers/relay-music.provider.js';
import { SandboxMusicProvider } from './providers/sandbox-music.provider.js';

@Module({
  imports: [ClipsModule, ChannelsModule],
  controllers: [MusicController],
  providers: [
    MusicKind,
    MusicService,
    SandboxMusicProvider,
    RelayMusicProvider,
    {
      provide: MUSIC_PROVIDERS,
      useFactory: (sandbox: SandboxMusicProvider, relay: RelayMusicProvider): Record<ProviderName, MusicProvider> => ({ sandbox, relay }),
      inject: [SandboxMusicProvider, RelayMusicProvider],
    },
  ],
  exports: [MusicKind],
})
export class MusicModule {
  static readonly kind = MusicKind;
}
