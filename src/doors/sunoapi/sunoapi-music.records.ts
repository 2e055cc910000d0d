import { Injectable } from '@nestjs/common';
import type { Clip } from '../../generated/prisma/client.js';
import type { Task, TaskTx } from '../../common/tasks/task-kind.js';
import { CLIP_AUDIO_ROLE, CLIP_COVER_ROLE } from '../../modules/clips/clip-media.js';
import { ClipsRepository } from '../../modules/clips/clips.repository.js';
import type { MediaRow } from '../../modules/media/media.repository.js';
import { MediaService } from '../../modules/media/media.service.js';
import { MUSIC_DEFINITION } from '../../modules/music/music.definition.js';
import type { MusicParams, MusicTask } from '../../modules/music/music-task.js';
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
 * callbacks for its notifications: `text` when it starts (no takes: "empty for the text callback"), `complete`
 * with both takes when it succeeds, `error` with its code when it fails. The takes are made together, so the
 * `first` stage (one take made) is never reached apart: neither FIRST_SUCCESS nor a `first` callback.
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

  /** Their callbacks' bodies: `{code, msg, data: {callbackType, task_id, data: [takes, snake_case]}}`. */
  async callbacks(tasks: SunoapiMusicTask[], tx: TaskTx): Promise<unknown[]> {
    const takes = await this.takes(tasks, tx);
    return tasks.map((task) => {
      const failure = failureOf(task);
      if (failure) return { code: failure.code, msg: failure.message, data: { callbackType: 'error', task_id: task.id, data: [] } };
      if (task.state !== 'succeeded') return { code: 200, msg: STAGE_WORDS.text, data: { callbackType: 'text', task_id: task.id, data: [] } };
      return { code: 200, msg: STAGE_WORDS.complete, data: { callbackType: 'complete', task_id: task.id, data: this.tracksOf(task, takes).map(snakeTrack) } };
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

  /** The task's takes (a one-take model's success drops the clip it did not make). */
  private tracksOf(task: SunoapiMusicTask, takes: Takes): SunoapiTrackDto[] {
    const p = task.params;
    const done = task.state === 'succeeded';
    return takes.clips
      .filter((c) => c.taskId === task.id && !(done && c.duration === null))
      .map((clip) => {
        const audio = done ? takes.urlOf(task, CLIP_AUDIO_ROLE, clip.idx) : '';
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
          duration: done ? clip.duration : null,
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
