import { Global, Module } from '@nestjs/common';
import { DatabaseStatus } from './database-status.service.js';

@Global()
@Module({ providers: [DatabaseStatus], exports: [DatabaseStatus] })
export class DatabaseModule {}
