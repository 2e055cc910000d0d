import { type DynamicModule, Global, Module } from '@nestjs/common';
import { type TaskHooks, type TaskKind, type KindModule, TASK_HOOKS, TASK_KINDS } from '../common/tasks/task-kind.js';
import { CallbacksService } from './callbacks/callbacks.service.js';
import { LimitsService } from './limits/limits.service.js';

/**
 * Declares to the task engine, at construction, the kinds it drives (the registry's modules' TaskKinds)
 * and its hooks: admission, slots and refunds (LimitsService) and the callback outbox (CallbacksService).
 */
@Global()
@Module({})
export class TaskKindsModule {
  static forRoot(kinds: readonly KindModule[]): DynamicModule {
    return {
      module: TaskKindsModule,
      imports: [...kinds],
      providers: [
        { provide: TASK_KINDS, useFactory: (...instances: TaskKind[]) => instances, inject: kinds.map((m) => m.kind) },
        {
          provide: TASK_HOOKS,
          useFactory: (limits: LimitsService, callbacks: CallbacksService): TaskHooks => ({
            admissionSql: (owners) => limits.admissionSql(owners),
            admissionOutcome: (owner, kind, price, admission) => limits.admissionOutcome(owner, kind, price, admission),
            settle: (tx, ids, to) => limits.settle(tx, ids, to),
            settleCtes: (s, to) => limits.settleCtes(s, to),
            recordSettled: (rows, to) => limits.recordSettled(rows, to),
            notify: (db, tx, notifications) => callbacks.notify(db, tx, notifications),
          }),
          inject: [LimitsService, CallbacksService],
        },
      ],
      exports: [TASK_KINDS, TASK_HOOKS],
    };
  }
}
