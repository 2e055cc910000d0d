import { Global, Module } from '@nestjs/common';
import { SafeFetchService } from './safe-fetch.service.js';

@Global()
@Module({ providers: [SafeFetchService], exports: [SafeFetchService] })
export class OutboundModule {}
