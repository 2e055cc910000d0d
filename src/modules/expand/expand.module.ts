import { Module } from '@nestjs/common';
import { ChannelsModule } from '../channels/channels.module.js';
import type { ProviderName } from '../../infra/config/app-config.js';
import { ExpandCapability } from './expand-capability.js';
import { ExpandController } from './expand.controller.js';
import { ExpandKind } from './expand.kind.js';
import { ExpandRecords } from './expand.records.js';
import { ExpandRepository } from './expand.repository.js';
import { ExpandService } from './expand.service.js';
import { EXPAND_PROVIDERS, type ExpandProvider } from './providers/expand-provider.js';
import { RelayExpandProvider } from './providers/relay-expand.provider.js';
import { StabilityOutpaintVendor } from './vendors/stability-outpaint.vendor.js';
import { SandboxExpandProvider } from './providers/sandbox-expand.provider.js';

@Module({
  imports: [ChannelsModule],
  controllers: [ExpandController],
  providers: [
    ExpandKind,
    ExpandRecords,
    ExpandRepository,
    ExpandService,
    SandboxExpandProvider,
    RelayExpandProvider,
    StabilityOutpaintVendor,
    ExpandCapability,
    {
      provide: EXPAND_PROVIDERS,
      useFactory: (sandbox: SandboxExpandProvider, relay: RelayExpandProvider): Record<ProviderName, ExpandProvider> => ({ sandbox, relay }),
      inject: [SandboxExpandProvider, RelayExpandProvider],
    },
  ],
  exports: [ExpandKind],
})
export class ExpandModule {
  static readonly kind = ExpandKind;
}
