import { type DynamicModule, Module } from '@nestjs/common';
import { APP_FILTER, APP_GUARD, APP_PIPE } from '@nestjs/core';
import { AllExceptionsFilter } from './common/filters/all-exceptions.filter.js';
import { JsonBodyGuard } from './common/http/json-body.guard.js';
import { AppValidationPipe } from './common/validation/app-validation.pipe.js';
import type { AppConfig } from './infra/config/app-config.js';
import { ConfigModule } from './infra/config/config.module.js';
import { CryptoModule } from './infra/crypto/crypto.module.js';
import { ProcessModule } from './infra/process/shutdown-state.js';
import { DatabaseModule } from './infra/database/database.module.js';
import type { HostResolver } from './infra/outbound/host-resolver.js';
import { OutboundModule } from './infra/outbound/outbound.module.js';
import { PrismaModule } from './infra/prisma/prisma.module.js';
import { TracingModule } from './infra/tracing/tracing.module.js';
import { QueueModule } from './infra/queue/queue.module.js';
import { RelayModule } from './infra/relay/relay.module.js';
import { StorageModule } from './infra/storage/storage.module.js';
import { WorkDirModule } from './infra/workdir/work-dir.module.js';
import { FfmpegModule } from './infra/ffmpeg/ffmpeg.module.js';
import { TasksModule } from './common/tasks/tasks.module.js';
import { MediaModule } from './modules/media/media.module.js';
import { SamplesModule } from './modules/samples/samples.module.js';
import { CallbacksModule } from './modules/callbacks/callbacks.module.js';
import { MetricsModule } from './infra/metrics/metrics.module.js';
import { HealthModule } from './modules/health/health.module.js';
import { ApiKeyGuard } from './modules/keys/api-key.guard.js';
import { ChannelsModule } from './modules/channels/channels.module.js';
import { KeysModule } from './modules/keys/keys.module.js';
import { LimitsModule } from './modules/limits/limits.module.js';
import { ModelsModule } from './modules/models/models.module.js';
import { TaskListModule } from './modules/task-list/task-list.module.js';
import { ConsoleModule } from './modules/console/console.module.js';
import { UpstreamWatchModule } from './modules/upstream-watch/upstream-watch.module.js';
import { TASK_KIND_MODULES } from './modules/task-kinds.js';
import { TaskKindsModule } from './modules/task-kinds.module.js';
import type { KindModule } from './common/tasks/task-kind.js';
import { DoorsModule } from './doors/doors.module.js';
import { DOOR_MODULES } from './doors/registry.js';

@Module({})
export class AppModule {
  /** `kinds`: the task kinds to run (the registry's; a test adds its own); `hostResolver`: where host names are resolved (the system's resolver unless a test gives its own). */
  static forRoot(config: AppConfig, kinds: readonly KindModule[] = TASK_KIND_MODULES, options: { hostResolver?: HostResolver } = {}): DynamicModule {
    return {
      module: AppModule,
      imports: [
        ConfigModule.forRoot(config),
        CryptoModule,
        TracingModule,
        ProcessModule,
        DatabaseModule,
        PrismaModule,
        QueueModule,
        OutboundModule.forRoot(options.hostResolver),
        RelayModule,
        StorageModule,
        WorkDirModule,
        FfmpegModule,
        TasksModule,
        LimitsModule,
        KeysModule,
        ChannelsModule,
        HealthModule,
        MetricsModule,
        MediaModule,
        SamplesModule,
        CallbacksModule,
        TaskListModule,
        ModelsModule,
        ConsoleModule,
        UpstreamWatchModule,
        TaskKindsModule.forRoot(kinds),
        DoorsModule.forRoot(DOOR_MODULES),
      ],
      providers: [
        { provide: APP_FILTER, useClass: AllExceptionsFilter },
        // Guards run in this order: the key and the route's access rule first, then the body is read.
        { provide: APP_GUARD, useClass: ApiKeyGuard },
        { provide: APP_GUARD, useClass: JsonBodyGuard },
        { provide: APP_PIPE, useClass: AppValidationPipe },
      ],
    };
  }
}
