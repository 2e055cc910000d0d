import { Global, Module } from '@nestjs/common';
import { SamplesController } from './samples.controller.js';
import { SamplesService } from './samples.service.js';

@Global()
@Module({ controllers: [SamplesController], providers: [SamplesService], exports: [SamplesService] })
export class SamplesModule {}
