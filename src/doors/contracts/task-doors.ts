import { Inject, Injectable } from '@nestjs/common';
import type { Task, TaskTx } from '../../common/tasks/task-kind.js';
import { DOOR_RENDERINGS, type DoorRendering } from './door.js';

/**
 * The doors' registry as the kinds, the engine and the task list read it: a stored task's door, found by its
 * kind and stored door name (`params.door`), else the kind's fallback rendering. Filled by the entry points
 * (`src/doors/registry.ts`, `DoorsModule.forRoot`), injected anywhere (a global provider): an operation's
 * code reaches its doors only through it.
 */
@Injectable()
export class TaskDoors {
  private readonly byDoor = new Map<string, DoorRendering>();
  private readonly fallbacks = new Map<string, DoorRendering>();

  constructor(@Inject(DOOR_RENDERINGS) renderings: readonly DoorRendering[]) {
    for (const rendering of renderings) {
      const key = keyOf(rendering.kind, rendering.door);
      if (this.byDoor.has(key)) throw new Error(`two renderings of the ${rendering.kind} tasks of the door ${rendering.door}`);
      this.byDoor.set(key, rendering);
      if (!rendering.fallback) continue;
      const other = this.fallbacks.get(rendering.kind);
      if (other) throw new Error(`two fallback renderings of the ${rendering.kind} tasks: the doors ${other.door} and ${rendering.door}`);
      this.fallbacks.set(rendering.kind, rendering);
    }
  }

  /** The rendering of a task: its stored door's for its kind, else its kind's fallback. */
  of<T extends Task<any, any>>(task: T): DoorRendering<T> {
    const door = storedDoor(task);
    const rendering = (door !== undefined ? this.byDoor.get(keyOf(task.kind, door)) : undefined) ?? this.fallbacks.get(task.kind);
    if (!rendering) throw new Error(`no door renders the ${task.kind} task ${task.id}${door !== undefined ? ` (door ${door})` : ''}`);
    return rendering as DoorRendering<T>;
  }

  /**
   * The door a task came through, by name: the one it stores (`params.door`, where its operation has several
   * doors), else its kind's fallback rendering's (the door of an operation whose tasks store none); null when
   * neither names one.
   */
  doorOf(kind: string, stored: unknown): string | null {
    return typeof stored === 'string' ? stored : (this.fallbacks.get(kind)?.door ?? null);
  }

  /** The kinds whose tasks that store no door name came through `door` (it is their fallback rendering). */
  kindsDefaultingTo(door: string): string[] {
    return [...this.fallbacks].filter(([, rendering]) => rendering.door === door).map(([kind]) => kind);
  }

  /**
   * Each task's record in its door's words, in order (one call per door: a door reads its tasks' media in one
   * query). With `tx` these are the bodies of a state change's notifications (a kind's `notifications`): a
   * door's `callbacks` where it words them apart from its records.
   */
  async records(tasks: Task<any, any>[], tx?: TaskTx): Promise<unknown[]> {
    const groups = new Map<DoorRendering, number[]>();
    tasks.forEach((task, i) => {
      const rendering = this.of(task);
      groups.set(rendering, [...(groups.get(rendering) ?? []), i]);
    });
    const out = new Array<unknown>(tasks.length);
    await Promise.all(
      [...groups].map(async ([rendering, indexes]) => {
        const group = indexes.map((i) => tasks[i]);
        const records = tx && rendering.callbacks ? await rendering.callbacks(group, tx) : await rendering.records(group, tx);
        indexes.forEach((i, n) => (out[i] = records[n]));
      }),
    );
    return out;
  }

  /** The task's door's name of a field of the normalized request, for failure words. */
  field(task: Task<any, any>, field: string): string {
    return this.of(task).field?.(field, task) ?? field;
  }
}

function keyOf(kind: string, door: string): string {
  return `${kind}\u0000${door}`;
}

function storedDoor(task: Task<any, any>): string | undefined {
  const params = task.params as { door?: unknown } | null;
  return typeof params?.door === 'string' ? params.door : undefined;
}
