import { Global, Logger, Module } from '@nestjs/common';
import { AppConfig } from '../config/app-config.js';
import { loadSealingKeys, SealingKeys } from './sealing-keys.js';

/** Provides the sealing keys, read (or, without CHANNEL_SECRET_KEY, made) before anything opens a stored secret. */
@Global()
@Module({
  providers: [
    {
      provide: SealingKeys,
      inject: [AppConfig],
      useFactory: (config: AppConfig) => loadSealingKeys(config.sealing, !config.soleInstance, new Logger(SealingKeys.name)),
    },
  ],
  exports: [SealingKeys],
})
export class CryptoModule {}
