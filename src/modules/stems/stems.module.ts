import { Module } from '@nestjs/common';
import type { ProviderName } from '../../infra/config/app-config.js';
import type { StemsVendor } from '../../vendors/contracts/stems-vendor.js';
import { STEMS_VENDORS } from '../../vendors/stems-vendors.js';
import { ChannelsModule } from '../channels/channels.module.js';
import { ClipsModule } from '../clips/clips.module.js';
import { RelayStemsProvider, STEMS_VENDOR_ADAPTERS } from './providers/relay-stems.provider.js';
import { SandboxStemsProvider } from './providers/sandbox-stems.provider.js';
import { STEMS_PROVIDERS, type StemsProvider } from './providers/stems-provider.js';
import { StemsKind } from './stems.kind.js';
import { StemsModels } from './stems-offer.js';

/** The stems operation: its kind, models and providers (the Suno-style door, in src/doors/suno/, submits to the kind). */
@Module({
  imports: [ClipsModule, ChannelsModule],
  providers: [
    StemsKind,
    StemsModels,
    SandboxStemsProvider,
    RelayStemsProvider,
    ...STEMS_VENDORS,
    {
      provide: STEMS_VENDOR_ADAPTERS,
      // one adapter per protocol; a gateway channel takes no stems
      useFactory: (...vendors: StemsVendor[]): Record<string, StemsVendor> => Object.fromEntries(vendors.map((v) => [v.protocol, v])),
      inject: [...STEMS_VENDORS],
    },
    {
      provide: STEMS_PROVIDERS,
      useFactory: (sandbox: SandboxStemsProvider, relay: RelayStemsProvider): Record<ProviderName, StemsProvider> => ({ sandbox, relay }),
      inject: [SandboxStemsProvider, RelayStemsProvider],
    },
  ],
  exports: [StemsKind, StemsModels],
})
export class StemsModule {
  static readonly kind = StemsKind;
}
