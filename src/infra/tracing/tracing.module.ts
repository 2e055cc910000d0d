import { Global, Module } from '@nestjs/common';
import { Tracing } from './tracing.service.js';

/** OpenTelemetry traces (see Tracing): started with the application when an OTLP endpoint is configured. */
@Global()
@Module({ providers: [Tracing], exports: [Tracing] })
export class TracingModule {}
