import { Injectable } from '@nestjs/common';
import type { Principal } from '../../common/auth/credential.js';
import { AppError } from '../../common/errors/app-error.js';
import type { Task } from '../../common/tasks/task-kind.js';
import { TaskRepository } from '../../common/tasks/task.repository.js';
import { LYRICS_DEFINITION } from '../../modules/lyrics/lyrics.definition.js';
import type { LyricsTask } from '../../modules/lyrics/lyrics-task.js';
import { ClipRecords, MUSIC_ACTIONS_BY_KIND } from './suno-clip.records.js';
import type { LyricsTaskDto } from './dto/lyrics-task.dto.js';
import type { MusicTaskDto, MusicTaskListResultDto, MusicTaskResultDto } from './dto/music-task.dto.js';
import { SunoLyricsRecords } from './suno-lyrics.records.js';

const FETCHED_KINDS = [...Object.keys(MUSIC_ACTIONS_BY_KIND), LYRICS_DEFINITION.name];

/** Reads of music, concat, upload and lyrics tasks, as Suno-style aggregators answer them. */
@Injectable()
export class MusicFetchService {
  constructor(
    private readonly tasks: TaskRepository,
    private readonly records: ClipRecords,
    private readonly lyrics: SunoLyricsRecords,
  ) {}

  async fetchOne(principal: Principal, id: string): Promise<MusicTaskResultDto> {
    const [task] = await this.tasks.findManyForOwner<object, unknown>(FETCHED_KINDS, principal.owner, [id]);
    if (!task) throw new AppError('NOT_FOUND', `No music, concat, upload, stems or lyrics task ${id} among yours`);
    return { code: 'success', message: '', data: (await this.recordsOf([task]))[0] as MusicTaskDto };
  }

  async fetchMany(principal: Principal, ids: string[]): Promise<MusicTaskListResultDto> {
    const tasks = await this.tasks.findManyForOwner<object, unknown>(FETCHED_KINDS, principal.owner, ids);
    return { code: 'success', message: '', data: (await this.recordsOf(tasks)) as MusicTaskDto[] };
  }

  /** Each task's record, in order: a lyrics task's as new-api words it, the others' with their clips. */
  private async recordsOf(tasks: Task<object, unknown>[]): Promise<(MusicTaskDto | LyricsTaskDto)[]> {
    const isLyrics = (t: Task<object, unknown>) => t.kind === LYRICS_DEFINITION.name;
    const clips = await this.records.records(tasks.filter((t) => !isLyrics(t)));
    const lyrics = await this.lyrics.records(tasks.filter(isLyrics) as unknown as LyricsTask[]);
    let c = 0;
    let l = 0;
    return tasks.map((t) => (isLyrics(t) ? lyrics[l++] : clips[c++]));
  }
}
