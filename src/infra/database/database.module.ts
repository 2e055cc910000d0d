import { Global, Module } from '@nestjs/common';
import { DatabaseStatus } from './database-status.service.js';
import { NotificationsService } from './notifications.service.js';

@Global()
@Module({ providers: [DatabaseStatus, NotificationsService], exports: [DatabaseStatus, NotificationsService] })
export class DatabaseModule {}
