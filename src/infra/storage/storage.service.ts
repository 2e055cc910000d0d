import path from 'node:path';
import { Injectable, Logger, type OnApplicationShutdown, type OnModuleInit } from '@nestjs/common';
import { AppConfig, type StorageDriverName } from '../config/app-config.js';
import { LocalStorageDriver } from './local-storage.driver.js';
import { PostgresStorageDriver } from './postgres-storage.driver.js';
import type { StorageDriver } from './storage.js';

/**
 * The storage drivers: new objects go to STORAGE_DRIVER, checked at start; each object is read back
 * from the driver that wrote it (so switching drivers keeps older media readable where it is).
 */
@Injectable()
export class StorageService implements OnModuleInit, OnApplicationShutdown {
  private readonly logger = new Logger(StorageService.name);
  private readonly drivers: Partial<Record<StorageDriverName, StorageDriver>>;

  constructor(
    private readonly config: AppConfig,
    postgres: PostgresStorageDriver,
  ) {
    this.drivers = { local: new LocalStorageDriver(path.join(config.dataDir, 'media')), postgres };
  }

  async onModuleInit(): Promise<void> {
    if (this.config.s3) {
      // the AWS SDK is loaded only where a bucket is configured (it adds start-up time and heap)
      const { S3StorageDriver } = await import('./s3-storage.driver.js');
      this.drivers.s3 = new S3StorageDriver(this.config.s3);
    }
    await this.current.check?.();
    if (this.config.s3) this.logger.log(`media in bucket ${this.config.s3.bucket}${this.config.s3.prefix ? ` under ${this.config.s3.prefix}` : ''}`);
  }

  onApplicationShutdown(): void {
    for (const driver of Object.values(this.drivers)) driver.close?.();
  }

  get current(): StorageDriver {
    return this.drivers[this.config.storageDriver]!;
  }

  driver(name: string): StorageDriver {
    const driver = this.drivers[name as StorageDriverName];
    if (!driver) throw new Error(`media stored with the ${name} driver, which is not configured here (STORAGE_DRIVER=${name} and its settings)`);
    return driver;
  }
}
