import { randomUUID } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import type { Principal } from '../../common/auth/credential.js';
import { AppError } from '../../common/errors/app-error.js';
import { TaskEngine } from '../../common/tasks/task-engine.js';
import { TaskRepository } from '../../common/tasks/task.repository.js';
import { AppConfig } from '../../infra/config/app-config.js';
import { AudioKind } from '../../modules/audio/audio.kind.js';
import type { AudioParams, AudioResult } from '../../modules/audio/audio-task.js';
import { assertComplete } from '../../modules/clips/clip-rules.js';
import { ClipsRepository, type OwnedClip } from '../../modules/clips/clips.repository.js';
import { MusicKind } from '../../modules/music/music.kind.js';
import { MusicModels } from '../../modules/music/music-offer.js';
import type { MusicParams } from '../../modules/music/music-task.js';
import { CallerUrls } from '../../modules/samples/caller-urls.service.js';
import type { MusicAsk, MusicField } from '../../vendors/contracts/music-vendor.js';
import { SUNOAPI_MODELS } from '../../vendors/sunoapi/sunoapi-models.js';
import type { SunoapiCreatedDto, SunoapiExtendDto, SunoapiGenerateDto, SunoapiUploadExtendDto } from './dto/sunoapi-generate.dto.js';
import type { SunoapiRecordInfoDto } from './dto/sunoapi-record.dto.js';
import { type SunoapiMusicTask, SunoapiMusicRecords } from './sunoapi-music.records.js';
import { SUNOAPI_DOOR } from './sunoapi.door.js';

/** Non-custom mode's prompt (a description), as their docs limit it whatever the model. */
const DESCRIPTION_MAX = 500;

/** What one create asks, in the gateway's words, before the model is resolved. */
interface Asked {
  lyrics: string | null;
  description: string | null;
  style: string | null;
  avoidStyle: string | null;
  title: string | null;
  instrumental: boolean;
  /** The clip continued and the second named (null: its end), or none. */
  parent: OwnedClip | null;
  continueAt: number | null;
  /** Its takes answered as the whole track (upload-extend's "longer track": the clip up to continueAt, then the take). */
  whole?: boolean;
}

/**
 * The sunoapi.org family's creates mapped into music tasks, as the Suno-style door maps its own
 * (`src/doors/suno/suno-music.service.ts`): the same parameters document (the door's name stored with it, so its
 * record and callbacks are this door's), the same checks of the clip a continuation names, the same models'
 * check naming this door's fields; `model` (V4_5…) is the configured music model of that name, or any.
 */
@Injectable()
export class SunoapiMusicService {
  constructor(
    private readonly engine: TaskEngine,
    private readonly tasks: TaskRepository,
    private readonly music: MusicKind,
    private readonly audio: AudioKind,
    private readonly clips: ClipsRepository,
    private readonly config: AppConfig,
    private readonly callerUrls: CallerUrls,
    private readonly models: MusicModels,
    private readonly records: SunoapiMusicRecords,
  ) {}

  /** `POST /generate`: custom mode (lyrics, style, title) or a description. */
  async generate(principal: Principal, dto: SunoapiGenerateDto, base?: string): Promise<SunoapiCreatedDto> {
    this.callerUrls.check('callBackUrl', dto.callBackUrl, base);
    if (dto.customMode) {
      requireFields(dto, ['style', 'title', ...(dto.instrumental ? [] : ['prompt' as const])], 'in custom mode (customMode true)');
    } else {
      if (dto.prompt === undefined) throw new AppError('INVALID_PARAMETER', 'prompt is required in non-custom mode (customMode false): a description of the song, the lyrics written from it');
      refuseFields(dto, ['style', 'title', 'negativeTags'], 'is taken only in custom mode (customMode true): in non-custom mode prompt alone describes the song');
    }
    checkLengths(dto, dto.customMode);
    return this.submit(principal, dto, base, {
      lyrics: dto.customMode ? (dto.prompt ?? null) : null,
      description: dto.customMode ? null : dto.prompt!,
      style: dto.style ?? null,
      avoidStyle: dto.negativeTags ?? null,
      title: dto.title ?? null,
      instrumental: dto.instrumental,
      parent: null,
      continueAt: null,
    });
  }

  /** `POST /generate/extend`: a continuation of one of the caller's clips (audioId). */
  async extend(principal: Principal, dto: SunoapiExtendDto, base?: string): Promise<SunoapiCreatedDto> {
    this.callerUrls.check('callBackUrl', dto.callBackUrl, base);
    checkContinuation(dto, ['prompt', 'style', 'title', 'continueAt']);
    const parent = await this.continuedClip(principal.owner, dto.audioId, 'audioId', dto.continueAt);
    return this.submit(principal, dto, base, continuation(dto, parent, false));
  }

  /** `POST /generate/upload-extend`: uploadUrl registered as an upload, fetched and checked, then continued; its takes answered as whole tracks (the upload up to continueAt, then the take). */
  async uploadExtend(principal: Principal, dto: SunoapiUploadExtendDto, base?: string): Promise<SunoapiCreatedDto> {
    this.callerUrls.check('callBackUrl', dto.callBackUrl, base);
    this.callerUrls.check('uploadUrl', dto.uploadUrl, base);
    checkContinuation(dto, ['style', 'title', ...(dto.instrumental ? [] : ['prompt' as const])]);
    const uploadId = await this.upload(principal.owner, dto.uploadUrl, base);
    const parent = await this.continuedClip(principal.owner, uploadId, 'uploadUrl', dto.continueAt);
    return this.submit(principal, dto, base, { ...continuation(dto, parent, dto.instrumental ?? false), whole: true });
  }

  /** `GET /generate/record-info`: the task's record. */
  async recordInfo(principal: Principal, taskId: string): Promise<SunoapiRecordInfoDto> {
    const task = await this.tasks.findForOwner<SunoapiMusicTask['params'], SunoapiMusicTask['result']>(MusicKind.definition.name, principal.owner, taskId);
    if (!task) throw new AppError('NOT_FOUND', `taskId: there is no music task ${taskId} among yours`);
    const [record] = await this.records.records([task]);
    return { code: 200, msg: 'success', data: record };
  }

  private async submit(principal: Principal, dto: { model?: string; callBackUrl?: string }, base: string | undefined, asked: Asked): Promise<SunoapiCreatedDto> {
    const model = dto.model !== undefined && (await this.models.offered()).some((m) => m.name === dto.model) ? dto.model : null;
    const parent = asked.parent;
    const ask: MusicAsk = {
      ...(model !== null ? { model } : {}),
      lyrics: asked.lyrics,
      description: asked.description,
      style: asked.style,
      avoidStyle: asked.avoidStyle,
      instrumental: asked.instrumental,
      durationS: null,
      // the sandbox holds every clip, as an aggregator holds its own and the uploads sent to it
      continues: parent ? (parent.upstreamId || this.config.kinds.music.provider === 'sandbox' ? 'own' : 'stored') : null,
    };
    await this.models.check(ask, FIELD_LABELS);
    const id = randomUUID();
    const clipIds = Array.from({ length: await this.models.takesFor(ask) }, () => randomUUID());
    const continueAt = parent ? (asked.continueAt ?? parent.duration) : null;
    const params: MusicParams & { door: string } = {
      door: SUNOAPI_DOOR,
      lyrics: asked.lyrics,
      description: asked.description,
      style: asked.style,
      avoid_style: asked.avoidStyle,
      title: asked.title,
      model,
      instrumental: asked.instrumental,
      duration_s: null,
      clip_ids: clipIds,
      continues: parent
        ? { clip_id: parent.id, at_s: continueAt, from_upload: parent.type === 'upload', upstream_clip_id: parent.upstreamId ?? null, channel_id: parent.upstreamId ? parent.channelId : null }
        : null,
      ...(asked.whole ? { whole_track: true } : {}),
    };
    const task = await this.engine.submit(this.music, {
      id,
      owner: principal.owner,
      params,
      callbackUrl: dto.callBackUrl ?? null,
      baseUrl: base,
      parentId: parent?.id ?? null,
      details: [ClipsRepository.newRows(clipIds.map((clipId, idx) => ({ id: clipId, taskId: id, owner: principal.owner, idx, type: 'gen', parentId: parent?.id ?? null, continueAt })))],
    });
    return { code: 200, msg: 'success', data: { taskId: task.id } };
  }

  /**
   * Registers `url` as an upload (as `POST /music-a/uploads/audio-url` does: an audio task whose clip has its
   * id) and holds the request until it is fetched and checked (the family fetches uploadUrl at the create too),
   * for AUDIO_HOLD_S (else the upload's deadline and 15 s: then 504, the upload going on); a failed upload is a
   * 400 naming uploadUrl with its reason.
   */
  private async upload(owner: string, url: string, base?: string): Promise<string> {
    const id = randomUUID();
    const submitted = await this.engine.submit(this.audio, {
      id,
      owner,
      params: { url },
      baseUrl: base,
      details: [ClipsRepository.newRows([{ id, taskId: id, owner, idx: 0, type: 'upload' }])],
      held: true,
    });
    // the request is not at hand here: the hold runs its course (a caller gone leaves the upload going on anyway)
    const held = await this.engine.holdUntilEnded<AudioParams, AudioResult>(this.audio, owner, id, { destroyed: false }, undefined, submitted);
    if ('timedOut' in held) {
      throw new AppError('TIMEOUT', `uploadUrl: the audio was not fetched and checked within ${held.holdS} s; its upload ${id} goes on (GET /music-a/uploads/${id}): continue it with POST /sunoapi/api/v1/generate/extend, audioId ${id}, once ready`);
    }
    const task = 'ended' in held ? held.ended : null;
    if (task?.state === 'succeeded') return id;
    throw new AppError('INVALID_PARAMETER', `uploadUrl: the audio could not be used: ${task?.message ?? 'the upload was removed'} (its upload id: ${id})`);
  }

  /** The clip a continuation names, checked as the Suno-style door checks continue_clip_id, in this door's names (`field`: audioId or uploadUrl). */
  private async continuedClip(owner: string, id: string, field: string, continueAt: number | undefined): Promise<OwnedClip> {
    const [clip] = await this.clips.findForOwner(owner, [id]);
    if (!clip) throw new AppError('NOT_FOUND', `${field}: there is no clip ${id} among yours`);
    assertComplete(clip, field);
    const duration = clip.duration ?? 0;
    if (continueAt !== undefined && !(continueAt > 0 && continueAt < duration)) {
      throw new AppError('INVALID_PARAMETER', `continueAt must be more than 0 and less than the clip's duration, ${duration} s (got ${continueAt})`);
    }
    const relay = this.config.kinds.music.provider === 'relay' && !(await this.models.offered()).some((m) => m.spec.continueUpload);
    if (relay && clip.type === 'upload' && clip.upstreamId && this.config.kinds.audio.relayUrl !== this.config.kinds.music.relayUrl) {
      throw new AppError('INVALID_PARAMETER', `${field}: clip ${id} is an upload held by the audio upstream (RELAY_AUDIO_URL), not by the music upstream (RELAY_MUSIC_URL): only uploads sent to the music upstream can be continued`);
    }
    if (relay && !clip.upstreamId) {
      throw new AppError('INVALID_PARAMETER', `${field}: clip ${id} is not known to the upstream this gateway relays music to (it was made or joined here): only clips the upstream made, or uploads sent to it, can be continued`);
    }
    return clip;
  }
}

/** This door's names of the normalized fields (the models' check's 400s). */
const FIELD_LABELS: Record<MusicField, string> = {
  model: 'model',
  lyrics: 'prompt',
  description: 'prompt',
  style: 'style',
  avoidStyle: 'negativeTags',
  instrumental: 'instrumental',
  durationS: 'duration',
  continues: 'audioId',
};

type Words = Pick<SunoapiGenerateDto, 'prompt' | 'style' | 'title' | 'negativeTags' | 'model'> & { continueAt?: number };

function requireFields(dto: Words, fields: (keyof Words)[], when: string): void {
  const missing = fields.find((f) => dto[f] === undefined);
  if (missing) throw new AppError('INVALID_PARAMETER', `${missing} is required ${when}`);
}

function refuseFields(dto: Words, fields: (keyof Words)[], why: string): void {
  const given = fields.find((f) => dto[f] !== undefined);
  if (given) throw new AppError('INVALID_PARAMETER', `${given} ${why}`);
}

/** defaultParamFlag true takes the continuation's own words (`required`); false continues from the clip's end with its own. */
function checkContinuation(dto: SunoapiExtendDto | SunoapiUploadExtendDto, required: (keyof Words)[]): void {
  if (dto.defaultParamFlag) requireFields(dto, required, 'with defaultParamFlag true');
  else refuseFields(dto, ['prompt', 'style', 'title', 'negativeTags', 'continueAt'], 'is taken only with defaultParamFlag true: false continues the clip from its end with its own parameters');
  checkLengths(dto, true);
}

function continuation(dto: SunoapiExtendDto | SunoapiUploadExtendDto, parent: OwnedClip, instrumental: boolean): Asked {
  return {
    lyrics: dto.prompt ?? null,
    description: null,
    style: dto.style ?? null,
    avoidStyle: dto.negativeTags ?? null,
    title: dto.title ?? null,
    instrumental,
    parent,
    continueAt: dto.continueAt ?? null,
  };
}

/** Their limits: by model (lyrics, style, title), and a description's 500 characters in non-custom mode. */
function checkLengths(dto: Words, custom: boolean): void {
  const spec = SUNOAPI_MODELS.find((m) => m.id === dto.model);
  const limits: [keyof Words, number | null | undefined][] = custom
    ? [
        ['prompt', spec?.lyricsMax],
        ['style', spec?.styleMax],
        ['negativeTags', spec?.styleMax],
        ['title', spec?.titleMax],
      ]
    : [['prompt', DESCRIPTION_MAX]];
  for (const [field, max] of limits) {
    const value = dto[field];
    if (typeof value === 'string' && typeof max === 'number' && [...value].length > max) {
      throw new AppError('INVALID_PARAMETER', `${field} must be at most ${max} characters long${custom && dto.model ? ` with model ${dto.model}` : ' in non-custom mode'} (got ${[...value].length})`);
    }
  }
}
