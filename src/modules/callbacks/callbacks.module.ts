import { Global, Module } from '@nestjs/common';
import { AdminCallbacksController } from './admin-callbacks.controller.js';
import { CallbackSender } from './callback-sender.processor.js';
import { CallbacksRepository } from './callbacks.repository.js';
import { CallbacksService } from './callbacks.service.js';

@Global()
@Module({ controllers: [AdminCallbacksController], providers: [CallbacksRepository, CallbacksService, CallbackSender], exports: [CallbacksService] })
export class CallbacksModule {}
