import { type DynamicModule, Module } from '@nestjs/common';
import { HostResolver, SystemHostResolver } from './host-resolver.js';
import { SafeFetchService } from './safe-fetch.service.js';

@Module({})
export class OutboundModule {
  /** `resolver`: where host names are resolved (the system's resolver unless a test gives its own table). */
  static forRoot(resolver: HostResolver = new SystemHostResolver()): DynamicModule {
    return {
      module: OutboundModule,
      global: true,
      providers: [{ provide: HostResolver, useValue: resolver }, SafeFetchService],
      exports: [SafeFetchService],
    };
  }
}
