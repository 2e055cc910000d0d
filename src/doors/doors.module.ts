import { type DynamicModule, Global, Module } from '@nestjs/common';
import { DOOR_RENDERINGS, type DoorModule, type DoorRendering } from './contracts/door.js';
import { TaskDoors } from './contracts/task-doors.js';

/**
 * Mounts the doors (their routes) and fills the registry the operations read (`TaskDoors`) with their
 * renderings, as `TaskKindsModule` fills the engine's kinds. Global: a kind injects `TaskDoors` without
 * importing any door.
 */
@Global()
@Module({})
export class DoorsModule {
  static forRoot(doors: readonly DoorModule[]): DynamicModule {
    const renderings = doors.flatMap((door) => door.renderings);
    return {
      module: DoorsModule,
      imports: [...doors],
      providers: [{ provide: DOOR_RENDERINGS, useFactory: (...all: DoorRendering[]) => all, inject: [...renderings] }, TaskDoors],
      exports: [TaskDoors],
    };
  }
}
