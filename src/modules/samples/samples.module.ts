import { Global, Module } from '@nestjs/common';
import { CallerUrls } from './caller-urls.service.js';
import { SamplesController } from './samples.controller.js';
import { SamplesService } from './samples.service.js';

@Global()
@Module({ controllers: [SamplesController], providers: [SamplesService, CallerUrls], exports: [SamplesService, CallerUrls] })
export class SamplesModule {}
