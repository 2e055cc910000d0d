import { Global, Module } from '@nestjs/common';
import { GracefulShutdown } from './graceful-shutdown.js';
import { TaskEnds } from './task-ends.js';
import { TaskEngine } from './task-engine.js';
import { TaskIntake } from './task-intake.js';
import { TaskLifecycle } from './task-lifecycle.js';
import { TaskRunner } from './task-runner.js';
import { TaskSweeper } from './task-sweeper.js';
import { TaskRepository } from './task.repository.js';
import { TaskStatesRepository } from './task-states.repository.js';

const PROVIDERS = [TaskEnds, TaskRepository, TaskStatesRepository, TaskIntake, TaskLifecycle, TaskRunner, TaskSweeper, TaskEngine, GracefulShutdown];

/** The task engine. The kinds it drives (TASK_KINDS) and its hooks (TASK_HOOKS) come from the registry (src/modules/task-kinds.module.ts). */
@Global()
@Module({ providers: PROVIDERS, exports: PROVIDERS })
export class TasksModule {}
