import { Global, Module } from '@nestjs/common';
import { PostgresStorageDriver } from './postgres-storage.driver.js';
import { StorageService } from './storage.service.js';

@Global()
@Module({ providers: [PostgresStorageDriver, StorageService], exports: [StorageService] })
export class StorageModule {}
