import { Module } from '@nestjs/common';
import { ClipsModule } from '../clips/clips.module.js';
import { TaskListController } from './task-list.controller.js';
import { TaskListRepository } from './task-list.repository.js';
import { TaskListService } from './task-list.service.js';

/** The cross-operation task list: `GET /tasks`, `GET /tasks/{id}`, `GET /tasks/{id}/callbacks` (API key or admin key). */
@Module({ imports: [ClipsModule], controllers: [TaskListController], providers: [TaskListRepository, TaskListService] })
export class TaskListModule {}
