import { Injectable } from '@nestjs/common';
import type { Principal } from '../../common/auth/credential.js';
import { AppError } from '../../common/errors/app-error.js';
import { TaskRepository } from '../../common/tasks/task.repository.js';
import { ClipRecords, MUSIC_ACTIONS_BY_KIND } from './suno-clip.records.js';
import type { MusicTaskListResultDto, MusicTaskResultDto } from './dto/music-task.dto.js';

const MUSIC_KINDS = Object.keys(MUSIC_ACTIONS_BY_KIND);

/** Reads of music, concat and upload tasks, as Suno-style aggregators answer them. */
@Injectable()
export class MusicFetchService {
  constructor(
    private readonly tasks: TaskRepository,
    private readonly records: ClipRecords,
  ) {}

  async fetchOne(principal: Principal, id: string): Promise<MusicTaskResultDto> {
    const [task] = await this.tasks.findManyForOwner<object, unknown>(MUSIC_KINDS, principal.owner, [id]);
    if (!task) throw new AppError('NOT_FOUND', `No music, concat, upload or stems task ${id} among yours`);
    return { code: 'success', message: '', data: (await this.records.records([task]))[0] };
  }

  async fetchMany(principal: Principal, ids: string[]): Promise<MusicTaskListResultDto> {
    const tasks = await this.tasks.findManyForOwner<object, unknown>(MUSIC_KINDS, principal.owner, ids);
    return { code: 'success', message: '', data: await this.records.records(tasks) };
  }
}
