import { Module } from '@nestjs/common';
import { AdminKeysController } from './admin-keys.controller.js';
import { AuthFailures } from './auth-failures.js';
import { KeysRepository } from './keys.repository.js';
import { KeysService } from './keys.service.js';

@Module({
  controllers: [AdminKeysController],
  providers: [KeysRepository, KeysService, AuthFailures],
  exports: [KeysService, AuthFailures],
})
export class KeysModule {}
