import { Module } from '@nestjs/common';
import type { ProviderName } from '../../infra/config/app-config.js';
import type { LyricsVendor } from '../../vendors/contracts/lyrics-vendor.js';
import { adaptersByProtocol } from '../../vendors/contracts/vendor.js';
import { GATEWAY_LYRICS_PROTOCOL, LYRICS_VENDORS } from '../../vendors/lyrics-vendors.js';
import { ChannelsModule } from '../channels/channels.module.js';
import { LyricsKind } from './lyrics.kind.js';
import { LyricsModels } from './lyrics-models.js';
import { LYRICS_PROVIDERS, type LyricsProvider } from './providers/lyrics-provider.js';
import { LYRICS_VENDOR_ADAPTERS, RelayLyricsProvider } from './providers/relay-lyrics.provider.js';
import { SandboxLyricsProvider } from './providers/sandbox-lyrics.provider.js';

/** The lyrics operation: its kind, models and providers (its door, the Suno-style one, submits to the kind). */
@Module({
  imports: [ChannelsModule],
  providers: [
    LyricsKind,
    LyricsModels,
    SandboxLyricsProvider,
    RelayLyricsProvider,
    ...LYRICS_VENDORS,
    {
      provide: LYRICS_VENDOR_ADAPTERS,
      // one adapter per protocol; a gateway speaks the Suno-style door, an aggregator's protocol
      useFactory: (...vendors: LyricsVendor[]) => adaptersByProtocol(vendors, GATEWAY_LYRICS_PROTOCOL),
      inject: [...LYRICS_VENDORS],
    },
    {
      provide: LYRICS_PROVIDERS,
      useFactory: (sandbox: SandboxLyricsProvider, relay: RelayLyricsProvider): Record<ProviderName, LyricsProvider> => ({ sandbox, relay }),
      inject: [SandboxLyricsProvider, RelayLyricsProvider],
    },
  ],
  exports: [LyricsKind, LyricsModels],
})
export class LyricsModule {
  static readonly kind = LyricsKind;
}
