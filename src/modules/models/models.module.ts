import { Module } from '@nestjs/common';
import { ModelsController } from './models.controller.js';

/** `GET /models`: every operation's models, from the kinds of the registry (TASK_KINDS: each kind's `models`). */
@Module({ controllers: [ModelsController] })
export class ModelsModule {}
