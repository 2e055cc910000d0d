import { Injectable } from '@nestjs/common';
import type { Task, TaskTx } from '../../common/tasks/task-kind.js';
import { STEMS_DEFINITION } from '../../modules/stems/stems.definition.js';
import type { DoorRendering } from '../contracts/door.js';
import type { MusicTaskDto } from './dto/music-task.dto.js';
import { ClipRecords } from './suno-clip.records.js';
import { SUNO_DOOR } from './suno.door.js';

/** The record of a stems task, its callbacks' body: action STEMS, its stems as clips titled by their names (the door's only rendering of stems). */
@Injectable()
export class SunoStemsRecords implements DoorRendering {
  readonly door = SUNO_DOOR;
  readonly kind = STEMS_DEFINITION.name;
  readonly fallback = true;

  constructor(private readonly clips: ClipRecords) {}

  records(tasks: Task<object, unknown>[], tx?: TaskTx): Promise<MusicTaskDto[]> {
    return this.clips.records(tasks, tx);
  }
}
