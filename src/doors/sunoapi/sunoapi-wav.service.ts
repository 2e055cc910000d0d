import { randomUUID } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import type { Principal } from '../../common/auth/credential.js';
import { AppError } from '../../common/errors/app-error.js';
import { TaskEngine } from '../../common/tasks/task-engine.js';
import { TaskRepository } from '../../common/tasks/task.repository.js';
import { CLIP_AUDIO_ROLE } from '../../modules/clips/clip-media.js';
import { assertComplete } from '../../modules/clips/clip-rules.js';
import { ClipsRepository } from '../../modules/clips/clips.repository.js';
import { MediaService } from '../../modules/media/media.service.js';
import { MusicKind } from '../../modules/music/music.kind.js';
import type { MusicTask } from '../../modules/music/music-task.js';
import { WHOLE_TRACK_ROLE } from '../../modules/music/whole-tracks.js';
import { CallerUrls } from '../../modules/samples/caller-urls.service.js';
import { WavKind } from '../../modules/wav/wav.kind.js';
import type { WavParams, WavTask } from '../../modules/wav/wav-task.js';
import type { SunoapiCreatedDto } from './dto/sunoapi-generate.dto.js';
import type { SunoapiWavGenerateDto, SunoapiWavRecordInfoDto } from './dto/sunoapi-wav.dto.js';
import { SunoapiWavRecords } from './sunoapi-wav.records.js';
import { SUNOAPI_DOOR } from './sunoapi.door.js';

/**
 * The sunoapi.org family's WAV conversion: `POST /wav/generate` checks the track (a clip of the caller's music
 * task taskId, complete, its audio stored) and answers a WAV task's id at once; the task converts the audio the
 * door answered for that track (an upload-extend's whole track, else the take) and stores the WAV before it
 * succeeds; `GET /wav/record-info` reads it.
 */
@Injectable()
export class SunoapiWavService {
  constructor(
    private readonly engine: TaskEngine,
    private readonly tasks: TaskRepository,
    private readonly wav: WavKind,
    private readonly clips: ClipsRepository,
    private readonly media: MediaService,
    private readonly callerUrls: CallerUrls,
    private readonly records: SunoapiWavRecords,
  ) {}

  async generate(principal: Principal, dto: SunoapiWavGenerateDto, base?: string): Promise<SunoapiCreatedDto> {
    this.callerUrls.check('callBackUrl', dto.callBackUrl, base);
    const music = await this.tasks.findForOwner<MusicTask['params'], MusicTask['result']>(MusicKind.definition.name, principal.owner, dto.taskId);
    if (!music) throw new AppError('NOT_FOUND', `taskId: there is no music task ${dto.taskId} among yours`);
    const [clip] = await this.clips.findForOwner(principal.owner, [dto.audioId]);
    if (!clip) throw new AppError('NOT_FOUND', `audioId: there is no track ${dto.audioId} among yours`);
    if (clip.taskId !== music.id) throw new AppError('INVALID_PARAMETER', `audioId: track ${clip.id} is not a track of task ${music.id} (it is one of task ${clip.taskId})`);
    assertComplete(clip, 'audioId');
    if (clip.duration === null) throw new AppError('INVALID_PARAMETER', `audioId: task ${music.id} did not make track ${clip.id} (its model made fewer takes); convert one in its response.sunoData`);
    if (!clip.audioStored) {
      throw new AppError('INVALID_PARAMETER', `audioId: the audio of track ${clip.id} is not stored in this gateway (an upload relayed to an upstream that the gateway could not copy), so it cannot be converted`);
    }
    // the audio the door answers for the track: an upload-extend's whole track where the task made it
    const wholeS = music.result?.whole_durations_s?.[clip.idx];
    const whole = wholeS !== undefined ? await this.media.findForTask(music.id, WHOLE_TRACK_ROLE, clip.idx) : null;
    if (!whole && !(await this.media.findForTask(music.id, CLIP_AUDIO_ROLE, clip.idx))) {
      throw new AppError('GONE', `audioId: track ${clip.id} has expired: its audio was removed after RESULT_RETENTION_DAYS`);
    }
    const params: WavParams = {
      door: SUNOAPI_DOOR,
      music_task_id: music.id,
      clip_id: clip.id,
      source: { task_id: music.id, role: whole ? WHOLE_TRACK_ROLE : CLIP_AUDIO_ROLE, index: clip.idx },
      duration_s: whole ? wholeS! : clip.duration,
    };
    const task = await this.engine.submit(this.wav, { id: randomUUID(), owner: principal.owner, params, callbackUrl: dto.callBackUrl ?? null, baseUrl: base });
    return { code: 200, msg: 'success', data: { taskId: task.id } };
  }

  async recordInfo(principal: Principal, taskId: string): Promise<SunoapiWavRecordInfoDto> {
    const task = await this.tasks.findForOwner<WavTask['params'], WavTask['result']>(WavKind.definition.name, principal.owner, taskId);
    if (!task) throw new AppError('NOT_FOUND', `taskId: there is no WAV conversion task ${taskId} among yours`);
    const [record] = await this.records.records([task]);
    return { code: 200, msg: 'success', data: record };
  }
}
