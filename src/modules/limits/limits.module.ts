import { Global, Module } from '@nestjs/common';
import { AdminLimitsController } from './admin-limits.controller.js';
import { LimitsRepository } from './limits.repository.js';
import { LimitsService } from './limits.service.js';
import { UsageController } from './usage.controller.js';
import { UsageService } from './usage.service.js';

@Global()
@Module({ controllers: [UsageController, AdminLimitsController], providers: [LimitsRepository, LimitsService, UsageService], exports: [LimitsService, UsageService] })
export class LimitsModule {}
