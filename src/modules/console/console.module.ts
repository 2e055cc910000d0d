import { Module } from '@nestjs/common';
import { ConsoleService } from './console.service.js';

/** The web console's static files and headers; the entry point mounts ConsoleService.router() at /console. */
@Module({ providers: [ConsoleService], exports: [ConsoleService] })
export class ConsoleModule {}
