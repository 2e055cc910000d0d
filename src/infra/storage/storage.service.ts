import path from 'node:path';
import { Injectable } from '@nestjs/common';
import { AppConfig, type StorageDriverName } from '../config/app-config.js';
import { LocalStorageDriver } from './local-storage.driver.js';
import { PostgresStorageDriver } from './postgres-storage.driver.js';
import type { StorageDriver } from './storage.js';

/** The storage drivers: new files go to STORAGE_DRIVER; each file is read back from the driver that wrote it. */
@Injectable()
export class StorageService {
  private readonly drivers: Record<StorageDriverName, StorageDriver>;

  constructor(
    private readonly config: AppConfig,
    postgres: PostgresStorageDriver,
  ) {
    this.drivers = { local: new LocalStorageDriver(path.join(config.dataDir, 'media')), postgres };
  }

  get current(): StorageDriver {
    return this.drivers[this.config.storageDriver];
  }

  driver(name: string): StorageDriver {
    const driver = this.drivers[name as StorageDriverName];
    if (!driver) throw new Error(`unknown storage driver ${name}`);
    return driver;
  }
}
