import { Module } from '@nestjs/common';
import { adaptersByProtocol } from '../../vendors/contracts/vendor.js';
import { ChannelsModule } from '../channels/channels.module.js';
import type { ProviderName } from '../../infra/config/app-config.js';
import { ExpandCapability } from './expand-capability.js';
import { ExpandKind } from './expand.kind.js';
import { ExpandRepository } from './expand.repository.js';
import { EXPAND_PROVIDERS, type ExpandProvider } from './providers/expand-provider.js';
import { EXPAND_VENDOR_ADAPTERS, RelayExpandProvider } from './providers/relay-expand.provider.js';
import type { ExpandVendor } from '../../vendors/contracts/expand-vendor.js';
import { EXPAND_VENDORS, GATEWAY_EXPAND_PROTOCOL } from '../../vendors/expand-vendors.js';
import { SandboxExpandProvider } from './providers/sandbox-expand.provider.js';

@Module({
  imports: [ChannelsModule],
  providers: [
    ExpandKind,
    ExpandRepository,
    SandboxExpandProvider,
    RelayExpandProvider,
    ExpandCapability,
    ...EXPAND_VENDORS,
    {
      provide: EXPAND_VENDOR_ADAPTERS,
      // one adapter per protocol; a gateway speaks the door's interface, which is Kling's
      useFactory: (...vendors: ExpandVendor[]) => adaptersByProtocol(vendors, GATEWAY_EXPAND_PROTOCOL),
      inject: [...EXPAND_VENDORS],
    },
    {
      provide: EXPAND_PROVIDERS,
      useFactory: (sandbox: SandboxExpandProvider, relay: RelayExpandProvider): Record<ProviderName, ExpandProvider> => ({ sandbox, relay }),
      inject: [SandboxExpandProvider, RelayExpandProvider],
    },
  ],
  exports: [ExpandKind, ExpandCapability, ExpandRepository],
})
export class ExpandModule {
  static readonly kind = ExpandKind;
}
