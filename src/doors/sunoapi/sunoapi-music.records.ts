import { Injectable } from '@nestjs/common';
import type { Clip } from '../../generated/prisma/client.js';
import { NotificationSeries, type Task, type TaskTx } from '../../common/tasks/task-kind.js';
import { CLIP_AUDIO_ROLE, CLIP_COVER_ROLE } from '../../modules/clips/clip-media.js';
import { ClipsRepository } from '../../modules/clips/clips.repository.js';
import type { MediaRow } from '../../modules/media/media.repository.js';
import { MediaService } from '../../modules/media/media.service.js';
import { MUSIC_DEFINITION } from '../../modules/music/music.definition.js';
import type { MusicParams, MusicTask } from '../../modules/music/music-task.js';
import { WHOLE_TRACK_ROLE } from '../../modules/music/whole-tracks.js';
import { readsAsContentRefusal } from '../../vendors/registry.js';
import type { DoorRendering } from '../contracts/door.js';
import type { SunoapiRecordDto, SunoapiTrackDto } from './dto/sunoapi-record.dto.js';
import { SUNOAPI_DOOR } from './sunoapi.door.js';

/** A music task that came through this door. */
export type SunoapiMusicTask = Task<MusicParams & { door?: string }, MusicTask['result']>;

/** The callback stages, and the words each says, as docs.sunoapi.org's Music Generation Callbacks. */
const STAGE_WORDS = { text: 'Text generation completed successfully.', first: 'First track generation completed.', complete: 'All generated successfully.' } as const;

/** A task's takes and their links, read in one query per table for a page of tasks. */
interface Takes {
  clips: Clip[];
  urlOf(task: SunoapiMusicTask, role: string, idx: number): string;
}

/**
 * A music task in the sunoapi.org family's words: `record-info`'s record (`data`: taskId, parentMusicId, param,
 * response.sunoData, status, type, errorCode, errorMessage) for its GET and `GET /tasks/{id}`, and their stage
 * callbacks for its notifications: `text` when it starts (no takes: "empty for the text callback"); when it
 * succeeds `first` with the first take then `complete` with all of them, two callbacks delivered in that order
 * (the takes are made and stored together, so the first stage is passed with the last: a NotificationSeries);
 * `error` with its code when it fails. Its record never shows FIRST_SUCCESS for the same reason: it goes from
 * TEXT_SUCCESS to SUCCESS.
 */
@Injectable()
export class SunoapiMusicRecords implements DoorRendering<SunoapiMusicTask> {
  readonly door = SUNOAPI_DOOR;
  readonly kind = MUSIC_DEFINITION.name;

  constructor(
    private readonly clips: ClipsRepository,
    private readonly media: MediaService,
  ) {}

  async records(tasks: SunoapiMusicTask[], tx?: TaskTx): Promise<SunoapiRecordDto[]> {
    const takes = await this.takes(tasks, tx);
    return tasks.map((task) => {
      const status = recordStatus(task);
      const failure = failureOf(task);
      const tracks = status === 'PENDING' || failure ? [] : this.tracksOf(task, takes);
      return {
        taskId: task.id,
        parentMusicId: task.params.continues?.clip_id ?? '',
        param: JSON.stringify(askedParam(task)),
        response: status === 'PENDING' ? null : { taskId: task.id, sunoData: tracks, ...(failure ? { errorMessage: failure.message } : {}) },
        status,
        type: typeOf(task),
        errorCode: failure?.code ?? null,
        errorMessage: failure?.message ?? null,
      };
    });
  }

  /** Their callbacks' bodies: `{code, msg, data: {callbackType, task_id, data: [takes, snake_case]}}` (a success's two, in order). */
  async callbacks(tasks: SunoapiMusicTask[], tx: TaskTx): Promise<unknown[]> {
    const takes = await this.takes(tasks, tx);
    return tasks.map((task) => {
      const failure = failureOf(task);
      if (failure) return { code: failure.code, msg: failure.message, data: { callbackType: 'error', task_id: task.id, data: [] } };
      if (task.state !== 'succeeded') return stage('text', task.id, []);
      const tracks = this.tracksOf(task, takes).map(snakeTrack);
      return new NotificationSeries([stage('first', task.id, tracks.slice(0, 1)), stage('complete', task.id, tracks)]);
    });
  }

  /** How the door names a field of the music request in failure words. */
  field(field: string): string {
    return FIELD_NAMES[field] ?? field;
  }

  private async takes(tasks: SunoapiMusicTask[], tx?: TaskTx): Promise<Takes> {
    const clips = await this.clips.listForTasks(
      tasks.map((t) => t.id),
      tx,
    );
    const mediaOf = await this.media.linkedMedia(
      tasks.filter((t) => !t.mediaExpiredAt),
      tx,
    );
    return {
      clips,
      urlOf: (task, role, idx) => {
        if (task.mediaExpiredAt) return '';
        const { media, link } = mediaOf(task);
        const row: MediaRow | undefined = media.find((m) => m.role === role && m.index === idx);
        return row ? link(row) : '';
      },
    };
  }

  /**
   * The task's takes (a one-take model's success drops the clip it did not make). An upload-extend's takes are
   * answered as its whole tracks where the task made them (`whole_track`): the upload up to continueAt then the
   * take, their audio and duration; the id stays the take's (its clip, as every door names it).
   */
  private tracksOf(task: SunoapiMusicTask, takes: Takes): SunoapiTrackDto[] {
    const p = task.params;
    const done = task.state === 'succeeded';
    const wholes = task.result?.whole_durations_s;
    return takes.clips
      .filter((c) => c.taskId === task.id && !(done && c.duration === null))
      .map((clip) => {
        const whole = done && wholes ? takes.urlOf(task, WHOLE_TRACK_ROLE, clip.idx) : '';
        const audio = whole || (done ? takes.urlOf(task, CLIP_AUDIO_ROLE, clip.idx) : '');
        return {
          id: clip.id,
          audioUrl: audio,
          streamAudioUrl: audio,
          imageUrl: done ? takes.urlOf(task, CLIP_COVER_ROLE, clip.idx) : '',
          prompt: p.instrumental ? '' : (p.lyrics ?? ''),
          modelName: p.model ?? '',
          title: p.title ?? '',
          tags: p.style ?? '',
          createTime: clip.createdAt.toISOString().slice(0, 19).replace('T', ' '),
          duration: !done ? null : whole ? (wholes![clip.idx] ?? clip.duration) : clip.duration,
        };
      });
  }
}

/** The door's names of the music request's fields (the normalized names a failure may give). */
const FIELD_NAMES: Record<string, string> = {
  model: 'model',
  lyrics: 'prompt',
  description: 'prompt',
  style: 'style',
  avoid_style: 'negativeTags',
  instrumental: 'instrumental',
  continues: 'audioId',
};

/** PENDING until it starts, TEXT_SUCCESS while it runs (the words are set: the takes are being made), SUCCESS; a failure's state. */
export function recordStatus(task: Pick<SunoapiMusicTask, 'state' | 'message'>): string {
  switch (task.state) {
    case 'queued':
      return 'PENDING';
    case 'running':
      return 'TEXT_SUCCESS';
    case 'succeeded':
      return 'SUCCESS';
    case 'failed':
      return readsAsContentRefusal(task.message ?? '') ? 'SENSITIVE_WORD_ERROR' : 'GENERATE_AUDIO_FAILED';
  }
}

/**
 * A failed task's code and words, from the codes their callbacks document: 400 (what was asked was refused:
 * a vendor's content refusal), 408 (timed out), else 531 (failed, the credits given back: a failed task is not
 * charged here).
 */
export function failureOf(task: Pick<SunoapiMusicTask, 'state' | 'message'>): { code: number; message: string } | null {
  if (task.state !== 'failed') return null;
  const message = task.message ?? 'failed';
  const code = readsAsContentRefusal(message) ? 400 : /^timed out\b/.test(message) ? 408 : 531;
  return { code, message };
}

function typeOf(task: SunoapiMusicTask): string {
  const c = task.params.continues;
  return !c ? 'GENERATE' : c.from_upload ? 'UPLOAD_EXTEND' : 'EXTEND';
}

/** What was asked, in the create's names, as the task keeps it (the gateway's names rendered back: a model that stood for any is absent, an upload-extend's upload is its parentMusicId). */
export function askedParam(task: Pick<SunoapiMusicTask, 'params' | 'callbackUrl'>): Record<string, unknown> {
  const p = task.params;
  const given = (fields: Record<string, unknown>) => Object.fromEntries(Object.entries(fields).filter(([, v]) => v !== null && v !== undefined));
  const words = given({ prompt: p.lyrics ?? p.description, style: p.style, title: p.title, negativeTags: p.avoid_style });
  const model = given({ model: p.model });
  const callBack = given({ callBackUrl: task.callbackUrl });
  const c = p.continues;
  if (!c) return { customMode: p.description === null, instrumental: p.instrumental, ...model, ...words, ...callBack };
  const defaultParamFlag = p.lyrics !== null || p.style !== null || p.title !== null;
  const at = defaultParamFlag ? given({ continueAt: c.at_s }) : {};
  if (c.from_upload) return { defaultParamFlag, instrumental: p.instrumental, ...model, ...at, ...words, ...callBack };
  return { audioId: c.clip_id, defaultParamFlag, ...model, ...at, ...words, ...callBack };
}

/** A stage's callback body: `{code: 200, msg, data: {callbackType, task_id, data: [takes]}}`. */
function stage(callbackType: keyof typeof STAGE_WORDS, taskId: string, tracks: Record<string, unknown>[]) {
  return { code: 200, msg: STAGE_WORDS[callbackType], data: { callbackType, task_id: taskId, data: tracks } };
}

/** A take as their callbacks list it (snake_case). */
function snakeTrack(t: SunoapiTrackDto): Record<string, unknown> {
  return {
    id: t.id,
    audio_url: t.audioUrl,
    stream_audio_url: t.streamAudioUrl,
    image_url: t.imageUrl,
    prompt: t.prompt,
    model_name: t.modelName,
    title: t.title,
    tags: t.tags,
    createTime: t.createTime,
    duration: t.duration,
  };
}
