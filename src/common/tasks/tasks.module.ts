import { Global, Module } from '@nestjs/common';
import { GracefulShutdown } from './graceful-shutdown.js';
import { TaskRunner } from './task-runner.js';
import { TaskSweeper } from './task-sweeper.js';

@Global()
@Module({ providers: [TaskRunner, TaskSweeper, GracefulShutdown], exports: [TaskRunner, TaskSweeper, GracefulShutdown] })
export class TasksModule {}
