import { Global, Module } from '@nestjs/common';
import { WorkDirService } from './work-dir.service.js';

@Global()
@Module({ providers: [WorkDirService], exports: [WorkDirService] })
export class WorkDirModule {}
