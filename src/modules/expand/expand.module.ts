import { Module } from '@nestjs/common';
import type { BodyLimitRule } from '../../common/middleware/json-body.middleware.js';
import type { ProviderName } from '../../infra/config/app-config.js';
import { EXPAND_PATH, ExpandController } from './expand.controller.js';
import { ExpandProcessor } from './expand.processor.js';
import { ExpandRepository } from './expand.repository.js';
import { ExpandService } from './expand.service.js';
import { EXPAND_PROVIDERS, type ExpandProvider } from './providers/expand-provider.js';
import { RelayExpandProvider } from './providers/relay-expand.provider.js';
import { SandboxExpandProvider } from './providers/sandbox-expand.provider.js';

/** A 10 MB image is about 13.4 MB as Base64; 20 MB leaves room, so an image just over 10 MB gets the 10 MB message, not 413. */
export const EXPAND_BODY_LIMIT: BodyLimitRule = { method: 'POST', path: `/${EXPAND_PATH}`, bytes: 20 * 1024 * 1024 };

@Module({
  controllers: [ExpandController],
  providers: [
    ExpandRepository,
    ExpandService,
    ExpandProcessor,
    SandboxExpandProvider,
    RelayExpandProvider,
    {
      provide: EXPAND_PROVIDERS,
      useFactory: (sandbox: SandboxExpandProvider, relay: RelayExpandProvider): Record<ProviderName, ExpandProvider> => ({ sandbox, relay }),
      inject: [SandboxExpandProvider, RelayExpandProvider],
    },
  ],
})
export class ExpandModule {}
