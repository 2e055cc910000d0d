import { Global, Module } from '@nestjs/common';
import { TaskRunner } from './task-runner.js';
import { TaskSweeper } from './task-sweeper.js';

@Global()
@Module({ providers: [TaskRunner, TaskSweeper], exports: [TaskRunner, TaskSweeper] })
export class TasksModule {}
