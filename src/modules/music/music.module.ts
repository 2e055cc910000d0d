import { Module } from '@nestjs/common';
import { adaptersByProtocol } from '../../vendors/contracts/vendor.js';
import { ChannelsModule } from '../channels/channels.module.js';
import type { ProviderName } from '../../infra/config/app-config.js';
import { ClipsModule } from '../clips/clips.module.js';
import { MusicKind } from './music.kind.js';
import { MusicModels } from './music-offer.js';
import { MUSIC_PROVIDERS, type MusicProvider } from './providers/music-provider.js';
import { MUSIC_VENDOR_ADAPTERS, RelayMusicProvider } from './providers/relay-music.provider.js';
import type { MusicVendor } from '../../vendors/contracts/music-vendor.js';
import { GATEWAY_MUSIC_PROTOCOL, MUSIC_VENDORS } from '../../vendors/music-vendors.js';
import { SandboxMusicProvider } from './providers/sandbox-music.provider.js';
import { WholeTracks } from './whole-tracks.js';

@Module({
  imports: [ClipsModule, ChannelsModule],
  providers: [
    MusicKind,
    MusicModels,
    WholeTracks,
    SandboxMusicProvider,
    RelayMusicProvider,
    ...MUSIC_VENDORS,
    {
      provide: MUSIC_VENDOR_ADAPTERS,
      // one adapter per protocol; a gateway speaks the door's interface, a Suno-style aggregator's
      useFactory: (...vendors: MusicVendor[]) => adaptersByProtocol(vendors, GATEWAY_MUSIC_PROTOCOL),
      inject: [...MUSIC_VENDORS],
    },
    {
      provide: MUSIC_PROVIDERS,
      useFactory: (sandbox: SandboxMusicProvider, relay: RelayMusicProvider): Record<ProviderName, MusicProvider> => ({ sandbox, relay }),
      inject: [SandboxMusicProvider, RelayMusicProvider],
    },
  ],
  exports: [MusicKind, MusicModels],
})
export class MusicModule {
  static readonly kind = MusicKind;
}
