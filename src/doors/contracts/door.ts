import type { Type } from '@nestjs/common';
import type { Task, TaskTx } from '../../common/tasks/task-kind.js';

/**
 * A door is an API the gateway answers in someone else's words (Kling's, OpenAI's, a Suno-style
 * aggregator's, Luma's): one folder `src/doors/<door>/` holding its routes (controllers), DTOs, records,
 * error words and Swagger examples, and one Nest module. Its services map a request into the operation's
 * normalized request and submit it; the task stores that request (and the door's name where an operation
 * has several doors), never the door's body.
 *
 * What the rest of the gateway needs of a door is how it renders a stored task back: its record (a GET's
 * answer, a callback's whole body) and the words it names a failing field by. A door declares that per
 * operation as a `DoorRendering` provider; `TaskDoors` (the registry the entry points fill) finds it by the
 * task's kind and stored door name. Nothing outside a door branches on a door.
 */
export interface DoorRendering<T extends Task<any, any> = Task<any, any>> {
  /** The door's name, as a task stores it (`params.door`). */
  readonly door: string;
  /** The operation (task kind) whose tasks it renders. */
  readonly kind: string;
  /**
   * This rendering is used for the kind's tasks that store no door name, or whose door renders none of the
   * kind (OpenAI's Images door takes no callback: its tasks' records are Kling's). At most one per kind.
   */
  readonly fallback?: boolean;
  /** Each task's record in the door's words, in order: what its GET answers as the task, and its callbacks' whole body (`tx`: read in a state change's transaction). */
  records(tasks: T[], tx?: TaskTx): Promise<unknown[]>;
  /**
   * Each task's callback body, in order, where the door calls back in other words than its GET answers (the
   * sunoapi.org family's stage callbacks beside its record-info): read in the state change's transaction `tx`,
   * the task as that change left it. A `NotificationSeries` in a task's place: several callbacks for that one
   * change, delivered in its order (stages the gateway passes together). Absent: its callbacks carry its records.
   */
  callbacks?(tasks: T[], tx: TaskTx): Promise<unknown[]>;
  /** How the door names a field of the operation's normalized request in failure words (`frames.first` → `image`); absent: as named. */
  field?(field: string, task: T): string;
}

/** A door's Nest module: its controllers and services, and the `DoorRendering` providers it exports for the registry. */
export interface DoorModule extends Type<unknown> {
  /** The door's name (the folder's): `kling`, `openai`, `suno`, `luma`. */
  readonly door: string;
  /** Its renderings, provided and exported by the module. */
  readonly renderings: readonly Type<DoorRendering>[];
}

/** Every door's renderings, as the entry points collect them (`DoorsModule.forRoot` over `DOOR_MODULES`). */
export const DOOR_RENDERINGS = Symbol('DOOR_RENDERINGS');
