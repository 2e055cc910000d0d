import { type DynamicModule, type MiddlewareConsumer, Module, type NestModule } from '@nestjs/common';
import { APP_FILTER, APP_GUARD, APP_PIPE } from '@nestjs/core';
import { AllExceptionsFilter } from './common/filters/all-exceptions.filter.js';
import { ApiKeyGuard } from './common/guards/api-key.guard.js';
import { CredentialsMiddleware } from './common/middleware/credentials.middleware.js';
import { BODY_LIMIT_RULES, type BodyLimitRule, JsonBodyMiddleware } from './common/middleware/json-body.middleware.js';
import { AppValidationPipe } from './common/validation/app-validation.pipe.js';
import type { AppConfig } from './infra/config/app-config.js';
import { ConfigModule } from './infra/config/config.module.js';
import { DatabaseModule } from './infra/database/database.module.js';
import { OutboundModule } from './infra/outbound/outbound.module.js';
import { PrismaModule } from './infra/prisma/prisma.module.js';
import { QueueModule } from './infra/queue/queue.module.js';
import { RelayModule } from './infra/relay/relay.module.js';
import { StorageModule } from './infra/storage/storage.module.js';
import { WorkDirModule } from './infra/workdir/work-dir.module.js';
import { TasksModule } from './common/tasks/tasks.module.js';
import { MediaModule } from './modules/media/media.module.js';
import { SamplesModule } from './modules/samples/samples.module.js';
import { CallbacksModule } from './modules/callbacks/callbacks.module.js';
import { MetricsModule } from './infra/metrics/metrics.module.js';
import { HealthModule } from './modules/health/health.module.js';
import { AudioModule } from './modules/audio/audio.module.js';
import { EXPAND_BODY_LIMIT, ExpandModule } from './modules/expand/expand.module.js';
import { KeysModule } from './modules/keys/keys.module.js';
import { VideoModule } from './modules/video/video.module.js';

/** Routes that accept a body bigger than the default 100 kB. */
const BODY_LIMITS: BodyLimitRule[] = [EXPAND_BODY_LIMIT];

@Module({})
export class AppModule implements NestModule {
  static forRoot(config: AppConfig): DynamicModule {
    return {
      module: AppModule,
      imports: [
        ConfigModule.forRoot(config),
        DatabaseModule,
        PrismaModule,
        QueueModule,
        OutboundModule,
        RelayModule,
        StorageModule,
        WorkDirModule,
        TasksModule,
        KeysModule,
        HealthModule,
        MetricsModule,
        MediaModule,
        SamplesModule,
        CallbacksModule,
        ExpandModule,
        VideoModule,
        AudioModule,
      ],
      providers: [
        { provide: APP_FILTER, useClass: AllExceptionsFilter },
        { provide: APP_GUARD, useClass: ApiKeyGuard },
        { provide: APP_PIPE, useClass: AppValidationPipe },
        { provide: BODY_LIMIT_RULES, useValue: BODY_LIMITS },
      ],
    };
  }

  configure(consumer: MiddlewareConsumer): void {
    // Credentials first: the body parser reads a body only for a caller with a valid key.
    consumer.apply(CredentialsMiddleware, JsonBodyMiddleware).forRoutes('*');
  }
}
